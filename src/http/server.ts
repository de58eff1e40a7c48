/**
 * The HTTP surface: `/healthz`, `/mcp`, `/chatgpt/mcp`, `/sse`, `/api/…` and the console, as one
 * handler `(Request) → Promise<Response>` that tests call without a port.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { SergoApp } from "../app.ts";
import { errorResponse, errorToResponse, json, notFound } from "./json.ts";

/** A request handler. */
export type Handler = (request: Request, info?: Deno.ServeHandlerInfo) => Promise<Response>;

/** What the HTTP surface is built from. */
export interface HttpDeps {
  app: SergoApp;
  /** The `/mcp` endpoint. */
  mcp?: Handler;
  /** The ChatGPT-shaped endpoint, `/chatgpt/mcp`. */
  chatgpt?: Handler;
  /** OAuth discovery and endpoints: null for paths that are not theirs. */
  oauth?: (request: Request, info?: Deno.ServeHandlerInfo) => Promise<Response | null>;
  /** The legacy HTTP+SSE transport: `/sse` and `/sse/messages`. */
  sse?: Handler;
  /** The REST API under `/api/`. */
  api?: Handler;
  /** The console under `/`. */
  console?: Handler;
  /** Extra facts for `/healthz`, such as whether the PDF converter is installed. */
  health?: () => Promise<Record<string, unknown>>;
}

/** Builds the handler of the whole HTTP surface. */
export function createHandler(deps: HttpDeps): Handler {
  return async (request, info) => {
    const url = new URL(request.url);
    try {
      if (url.pathname === "/healthz") {
        if (request.method !== "GET" && request.method !== "HEAD") {
          return errorResponse(405, "method_not_allowed", `${request.method} is not allowed on /healthz`, {
            allow: "GET, HEAD",
          });
        }
        const head = deps.app.head();
        const behind = head.position - deps.app.projector.position;
        const writer = deps.app.store.writerStatus();
        const failure = deps.app.projector.failure;
        // 503 while the projections cannot follow the log (a load balancer then sends no reads here: they
        // would miss what came after, a deleted key for one); a writer problem (the database down) is every
        // replica's alike, and each answers calls with 503 itself.
        return json({
          ok: failure === null && writer.ok,
          version: VERSION,
          log: { position: head.position, hash: head.hash },
          // "stuck: …" when a commit waits too long for the log's writer thread.
          writer: writer.ok ? "ok" : `stuck: ${writer.problem}`,
          projections: {
            position: deps.app.projector.position,
            behind,
            ...(failure ? { failure: failure.message } : {}),
          },
          ...(deps.health ? await deps.health() : {}),
        }, failure === null ? 200 : 503);
      }
      if (url.pathname === "/mcp" && deps.mcp) return await deps.mcp(request, info);
      if (url.pathname === "/chatgpt/mcp" && deps.chatgpt) return await deps.chatgpt(request, info);
      if ((url.pathname === "/sse" || url.pathname === "/sse/messages") && deps.sse) {
        return await deps.sse(request, info);
      }
      if ((url.pathname === "/api" || url.pathname.startsWith("/api/")) && deps.api) {
        return await deps.api(request, info);
      }
      if (deps.oauth) {
        const answer = await deps.oauth(request, info);
        if (answer) return answer;
      }
      if (deps.console && !url.pathname.startsWith("/.well-known/")) {
        const response = await deps.console(request, info);
        if (response.status !== 404 || response.headers.get("content-type")?.startsWith("text/html")) {
          return response;
        }
      }
      return notFound();
    } catch (error) {
      return errorToResponse(error);
    }
  };
}
