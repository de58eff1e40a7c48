/**
 * `POST /mcp`: Streamable HTTP, stateless, JSON answers. Every request is
 * answered from the caller's key alone: the key is checked first (before
 * MCP starts, with the reference's HTTP answers), then the Origin, the
 * headers, the key's rate, and then the key's own server answers.
 *
 * 2025-era traffic (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) is served
 * by a server built per request over a single-exchange transport (always
 * JSON, never SSE); 2026-07-28 traffic (`server/discover` and the per-request
 * envelope) goes to the SDK's `createMcpHandler`, fed by the same servers.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import {
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  PROTOCOL_VERSION_META_KEY,
} from "@modelcontextprotocol/server";
import type { EventStore } from "../../events/store.ts";
import { authenticateMcp, type OAuthCheck } from "../auth/mcp_auth.ts";
import type { Caller } from "./audit.ts";
import { type KeyRateLimit, RateLimiter } from "./rate_limit.ts";
import { answerMessages, callerDefinitions } from "./server.ts";
import { buildServer, requestAuthInfo, type RequestContext } from "./sdk_server.ts";
import { errorAnswer, isRequest, type JsonRpcMessage, requestProblem } from "./json_rpc.ts";
import type { ExchangeState, McpCore } from "./tool_call.ts";
import { ReadCache } from "./read_cache.ts";
import { type McpSettings, mcpSettings } from "./settings.ts";
import type { PageViewer } from "./tools/tool.ts";
import type { SemanticSearch } from "../search/semantic.ts";
import { readBodyText } from "../http/read_body.ts";
import { LIMIT_UNCHECKED } from "../http/unavailable.ts";
import { DomainError } from "../domain/errors.ts";
import { nestsDeeperThan } from "../../events/json_depth.ts";
import { MAX_MESSAGE_DEPTH } from "./limits.ts";
import type { McpShape } from "./shape.ts";

/** What the endpoint is built from. */
export interface McpDeps {
  /** The projections database. */
  db: DatabaseSync;
  /** The event log; each call appends its audit event here before it is answered. */
  store: EventStore;
  /** The clock. Default: the system clock. */
  now?: () => Date;
  /** Settings; anything left out takes its default. */
  settings?: Partial<McpSettings>;
  /** Draws pages for `view_page` (see `src/render/page_cache.ts`). */
  pageViews?: PageViewer;
  /** Takes OAuth access tokens besides agent keys, and names the resource metadata in 401s (`src/auth/oauth/`). */
  oauth?: OAuthCheck;
  /** Semantic search, where an embedding model is configured (see `src/search/semantic.ts`). */
  semantic?: SemanticSearch;
  /** The per-key rate limit; default this process's own buckets (replicas share theirs in PostgreSQL). */
  limiter?: KeyRateLimit;
  /** The server's shape, when it is not the reference's: the ChatGPT shape for `/chatgpt/mcp` (`shape.ts`). */
  shape?: McpShape;
}

/** The protocol versions the endpoint speaks. */
export const PROTOCOL_VERSIONS = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2026-07-28",
] as const;

const FIRST_MODERN = "2026-07-28";
const JSON_HEADERS = { "content-type": "application/json" };

/** A JSON-RPC error as an HTTP response, for the request's id when it has a usable one. */
function rpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: unknown = null,
): Response {
  return new Response(errorAnswer(id, code, message), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/**
 * The answer to an MCP-Protocol-Version this endpoint does not speak: HTTP 400
 * with 2026-07-28's UnsupportedProtocolVersion (-32022) for the request's id,
 * naming in `data.supported` the versions of the request's era that it does
 * speak — a 2026-07-28 request (one with the per-request `_meta` envelope) gets
 * those `server/discover` lists, any other all of them (a 2025 client only
 * needs the 400).
 */
function unsupportedVersion(version: string, body: unknown): Response {
  const message = body !== null && typeof body === "object" && !Array.isArray(body)
    ? body as { id?: unknown; params?: { _meta?: Record<string, unknown> } }
    : {};
  const modern = message.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined;
  const error = {
    code: UNSUPPORTED_PROTOCOL_VERSION,
    message: `Unsupported MCP-Protocol-Version '${version}': use one of ${PROTOCOL_VERSIONS.join(", ")}.`,
    data: { supported: modern ? MODERN_VERSIONS : PROTOCOL_VERSIONS, requested: version },
  };
  const id = typeof message.id === "string" || (typeof message.id === "number" && Number.isFinite(message.id))
    ? message.id
    : null;
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, error }), { status: 400, headers: JSON_HEADERS });
}

/** 2026-07-28's error code for a protocol version the server does not speak. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The versions of the per-request era, as `server/discover` lists them. */
const MODERN_VERSIONS = PROTOCOL_VERSIONS.filter((version) => version >= FIRST_MODERN);

function loopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, "").toLowerCase();
  return name === "localhost" || name === "127.0.0.1" || name === "[::1]";
}

/** Whether a request's Origin may call: none sent, an allowed origin, or this local server's own origin. */
export function originAllowed(request: Request, allowed: readonly string[]): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  if (allowed.includes(origin)) return true;
  const host = request.headers.get("host") ?? new URL(request.url).host;
  return loopbackHost(host) && (origin === `http://${host}` || origin === `https://${host}`);
}

function acceptsJson(accept: string | null): boolean {
  if (accept === null || accept.trim() === "") return true;
  return accept.split(",").some((part) => {
    const type = part.split(";")[0]!.trim().toLowerCase();
    return type === "application/json" || type === "application/*" || type === "*/*";
  });
}

function isJsonContentType(value: string | null): boolean {
  return value !== null && value.split(";")[0]!.trim().toLowerCase() === "application/json";
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function isModernCandidate(header: string | null, body: unknown): boolean {
  if (header !== null && header >= FIRST_MODERN) return true;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return false;
  const params = (body as { params?: { _meta?: Record<string, unknown> } }).params;
  return params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/** Builds the `/mcp` handler. */
export function createMcpEndpoint(deps: McpDeps): (request: Request) => Promise<Response> {
  const settings = mcpSettings(deps.settings);
  const core: McpCore = {
    db: deps.db,
    store: deps.store,
    now: deps.now ?? (() => new Date()),
    settings,
    pageViews: deps.pageViews,
    semantic: deps.semantic,
    cache: new ReadCache(deps.db),
    ...(deps.shape ? { shape: deps.shape } : {}),
  };
  const limiter: KeyRateLimit = deps.limiter ??
    new RateLimiter(settings.rateLimitPerSecond, settings.rateLimitBurst);
  let modern: McpHttpHandler | null = null;
  const modernHandler = (): McpHttpHandler =>
    modern ??= createMcpHandler(({ authInfo }) => {
      const { context } = authInfo!.extra as { context: RequestContext };
      return buildServer(core, callerDefinitions(core, context.caller));
    }, { legacy: "reject", responseMode: "auto" });

  return async (request: Request): Promise<Response> => {
    if (request.method !== "POST") {
      return rpcError(405, -32000, "Method not allowed: this endpoint takes POST only.", { allow: "POST" });
    }
    if (!originAllowed(request, settings.allowedOrigins)) {
      return rpcError(403, -32000, `Origin '${request.headers.get("origin")}' may not call this server.`);
    }
    const now = core.now();
    core.cache.refresh();
    const auth = authenticateMcp(core.cache, request, now, deps.oauth);
    if (!auth.ok) return auth.response;
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return rpcError(415, -32000, "Send the request body as JSON, with Content-Type: application/json.");
    }
    if (!acceptsJson(request.headers.get("accept"))) {
      return rpcError(406, -32000, "This server answers with JSON: accept application/json.");
    }
    const version = request.headers.get("mcp-protocol-version");
    // A version this endpoint does not speak is answered once the body is read, for the request's id.
    const unsupported = version !== null && !(PROTOCOL_VERSIONS as readonly string[]).includes(version);
    const endUser = request.headers.get("x-sergo-end-user");
    if (endUser !== null && (endUser.length > settings.maxEndUserLength || CONTROL.test(endUser))) {
      return rpcError(
        400,
        -32600,
        `X-Sergo-End-User must be at most ${settings.maxEndUserLength} characters without control characters.`,
      );
    }
    const keyId = auth.key.key_id;
    const tooMany = (retryAfterSeconds: number) =>
      rpcError(
        429,
        -32000,
        `Too many calls with this key: at most ${settings.rateLimitPerSecond} a second — try again in ${retryAfterSeconds} s.`,
        { "retry-after": String(retryAfterSeconds) },
      );
    const take = async (): Promise<Response | null> => {
      let rate;
      try {
        rate = await limiter.take(keyId, now.getTime());
      } catch {
        // The shared buckets are in PostgreSQL: when it is away, so is the audit, and the call would fail anyway.
        return rpcError(503, -32000, LIMIT_UNCHECKED);
      }
      return rate.allowed ? null : tooMany(rate.retryAfterSeconds);
    };
    // Replicas share their buckets in the log's database, and a request's token is taken once its message is
    // read: with its audit entry, in the same statement, when it writes one (below), else on its own. A key
    // known here to be empty is refused at once. This process's own buckets are asked here.
    const shared = limiter.tokenFor !== undefined;
    if (shared) {
      const refused = limiter.surelyRefused?.(keyId);
      if (refused && !refused.allowed) return tooMany(refused.retryAfterSeconds);
    } else {
      const refused = await take();
      if (refused) return refused;
    }
    const answer = async (state: ExchangeState): Promise<Response> => {
      let raw: string | null;
      try {
        raw = await readBodyText(request, settings.maxBodyBytes, settings.bodyTimeoutMs);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === "timeout")) throw error;
        return rpcError(408, -32000, `${error.message}.`, { connection: "close" });
      }
      if (raw === null) {
        return rpcError(
          413,
          -32600,
          `The request body is too large: at most ${settings.maxBodyBytes.toLocaleString("en-US")} bytes.`,
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return rpcError(400, -32700, "Parse error: the request body is not valid JSON.");
      }
      if (nestsDeeperThan(body, MAX_MESSAGE_DEPTH)) {
        const id = body !== null && typeof body === "object" && !Array.isArray(body)
          ? (body as { id?: unknown }).id
          : null;
        return rpcError(
          400,
          -32600,
          `Invalid request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels.`,
          {},
          id,
        );
      }
      if (unsupported) return unsupportedVersion(version!, body);
      const caller: Caller = {
        key: auth.key,
        maskedKey: auth.maskedKey,
        endUser: endUser === "" ? null : endUser,
        ...(auth.oauth ? { oauth: auth.oauth } : {}),
        // Answers of other shapes link to pages in the console.
        ...(core.shape
          ? { consoleUrl: (settings.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, "") }
          : {}),
      };
      if (isModernCandidate(version, body) && !(await isLegacyRequest(request, body))) {
        const response = await modernHandler().fetch(request, {
          parsedBody: body,
          authInfo: requestAuthInfo({ caller, state }),
        });
        if (state.auditFailure === null) return response;
        return new Response(await response.text(), { status: 503, headers: JSON_HEADERS });
      }

      const batch = Array.isArray(body);
      const messages = (batch ? body : [body]) as unknown[];
      if (batch && version !== null && version !== "2025-03-26") {
        return rpcError(
          400,
          -32600,
          `Batches are accepted under protocol version 2025-03-26 only, not '${version}'.`,
        );
      }
      if (messages.length > settings.maxBatch) {
        return rpcError(400, -32600, `A batch may hold at most ${settings.maxBatch} messages.`);
      }
      if (
        messages.length === 0 ||
        !messages.every((m) => m !== null && typeof m === "object" && !Array.isArray(m))
      ) {
        return rpcError(400, -32600, "Invalid request: send one JSON-RPC message (or a batch of them).");
      }
      const parsed = messages as JsonRpcMessage[];
      const invalid = parsed.find((m) =>
        m.jsonrpc !== "2.0" || (typeof m.method !== "string" && !("result" in m || "error" in m))
      );
      if (invalid) return rpcError(400, -32600, "Invalid request: a JSON-RPC 2.0 message needs a method.");
      for (const message of parsed) {
        const problem = isRequest(message) ? requestProblem(message) : null;
        if (problem !== null) return rpcError(400, -32600, problem, {}, batch ? null : message.id);
      }
      if (!parsed.some(isRequest)) return new Response(null, { status: 202 });
      const answers = await answerMessages(
        core,
        caller,
        parsed.filter((m) => typeof m.method === "string"),
        state,
      );
      const text = batch ? `[${answers.join(",")}]` : answers[0]!;
      return new Response(text, { status: state.auditFailure === null ? 200 : 503, headers: JSON_HEADERS });
    };
    const state: ExchangeState = {
      auditFailure: null,
      token: shared ? limiter.tokenFor!(keyId) : null,
      refusedForSeconds: null,
    };
    const response = await answer(state);
    if (state.refusedForSeconds) {
      await response.body?.cancel();
      return tooMany(state.refusedForSeconds);
    }
    if (state.token) {
      // No audit entry took the token (not a tool call, or refused before it ran): it is taken now.
      state.token = null;
      const refused = await take();
      if (refused) {
        await response.body?.cancel();
        return refused;
      }
    }
    return response;
  };
}
