/**
 * Composes the HTTP edges of a running Sergo over its services: the MCP
 * endpoint in both shapes (the reference's and ChatGPT's, one rate limit per
 * key across them), the SSE transport, OAuth, the REST API and the console,
 * mounted by the server's router. `sergo serve` listens with the handler;
 * tests and benchmarks go through `startServer`, which does the same.
 *
 * @module
 */
import type { EventType } from "../../events/types.ts";
import { createApi } from "../api/mod.ts";
import { createHandler } from "../http/server.ts";
import { CHATGPT_SHAPE } from "../mcp/chatgpt/shape.ts";
import { createMcpEndpoint } from "../mcp/endpoint.ts";
import { RateLimiter } from "../mcp/rate_limit.ts";
import { agentKeyAuthenticator, createSseTransport } from "../mcp/transports/sse.ts";
import { createOAuthServer } from "./oauth.ts";
import type { Services } from "./services.ts";

/** The events after which an open SSE session's key may have stopped working. */
const KEY_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  "AgentKeyDeleted",
  "AgentKeyRolled",
  "OAuthGrantRevoked",
]);

/** The composed edges: the request handler, and the SSE sessions that stopping must close. */
export interface Edges {
  handler(request: Request, info: Deno.ServeHandlerInfo): Promise<Response>;
  /** Ends every open SSE stream (they would hold a shutdown forever). */
  closeStreams(): void;
}

/** The edges over `services`, whose console is already created. */
export function composeEdges(services: Services): Edges {
  const { app, config } = services;
  const oauth = createOAuthServer(services);
  // One rate limit per key whichever shape it calls: both endpoints take from the same buckets.
  const limiter = services.mcpDeps.limiter ??
    new RateLimiter(
      services.mcpDeps.settings!.rateLimitPerSecond!,
      services.mcpDeps.settings!.rateLimitBurst!,
    );
  const mcp = createMcpEndpoint({ ...services.mcpDeps, oauth: oauth.check, limiter });
  const chatgpt = createMcpEndpoint({
    ...services.mcpDeps,
    oauth: oauth.check,
    limiter,
    shape: CHATGPT_SHAPE,
  });
  const sse = createSseTransport({
    mcp,
    authenticate: agentKeyAuthenticator(app.db, oauth.check),
    allowedOrigins: config.allowedOrigins,
    now: app.now,
  });
  // An SSE session ends as soon as its key stops working, not only at the next recheck.
  app.onApplied((events) => {
    if (events.some((event) => KEY_EVENTS.has(event.type))) sse.recheck();
  });
  const handler = createHandler({
    app,
    mcp,
    chatgpt,
    sse: sse.handle,
    oauth: oauth.handle,
    api: createApi(services),
    console: services.console,
    health: services.health,
  });
  return { handler, closeStreams: () => sse.close() };
}
