/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05) for clients that have no
 * Streamable HTTP yet: `GET /sse` with the key's `Authorization` header opens
 * an event stream whose first event names the message endpoint
 * (`/sse/messages?session_id=…`); each message POSTed there (with the same
 * key) is answered on the stream.
 *
 * Nothing here answers MCP itself: a POSTed message is handed to the `/mcp`
 * handler as a request of its own, so the same checks run in the same order
 * (key, origin, headers, rate, size, JSON-RPC shape) and the same server
 * answers with the same texts and audit entries; only where the answer goes
 * differs. A session lives as long as its stream, a key has at most a few
 * open, and a session ends as soon as the key that opened it stops working
 * (deleted, or its rolled value expired): its credential is checked again
 * every second and whenever a key changes.
 *
 * A stream that is not read cannot hold the server's memory: answers wait on
 * it up to `maxUnreadBytes` (4 MiB by default); an answer that would go past
 * that ends the session (its unread answers are dropped and the stream is
 * cut), the message it answered gets a 503 saying so, and every later message
 * to that session is refused as one to a session that does not exist, before
 * anything runs. A client that reads its stream never comes near the limit;
 * one that stops reading sees its stream end, as when the server restarts.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { authenticateMcp, type McpAuthResult, type OAuthCheck } from "../../auth/mcp_auth.ts";
import { originAllowed } from "../endpoint.ts";
import { ReadCache } from "../read_cache.ts";

/** What the SSE transport is built from. */
export interface SseDeps {
  /** The `/mcp` handler: every POSTed message goes through it. */
  mcp: (request: Request) => Promise<Response>;
  /** Checks a request's credential as `/mcp` does, with the same answers. */
  authenticate: (request: Request, now: Date) => McpAuthResult;
  /** Origins allowed besides a loopback server's own. */
  allowedOrigins: readonly string[];
  now?: () => Date;
  /** Open sessions per key at most. Default 10. */
  maxSessionsPerKey?: number;
  /** How often every session's credential is checked again, in ms. Default 1000. */
  recheckMs?: number;
  /** How often an idle stream gets a comment line, so proxies keep it open, in ms. Default 15 000. */
  keepAliveMs?: number;
  /** Bytes of answers that may wait unread on one stream before its session ends. Default 4 MiB. */
  maxUnreadBytes?: number;
}

/** The SSE transport's handler and its lifecycle. */
export interface SseTransport {
  /** Answers `GET /sse` and `POST /sse/messages`. */
  handle(request: Request): Promise<Response>;
  /** Checks every open session's credential now, ending those whose key stopped working. */
  recheck(): void;
  /** How many sessions are open (for tests and health). */
  readonly open: number;
  /** Ends every session. */
  close(): void;
}

/** The path that opens a stream, and the path messages are POSTed to. */
export const SSE_PATH = "/sse";
export const SSE_MESSAGES_PATH = "/sse/messages";

interface Session {
  id: string;
  keyId: string;
  /** The request that opened the stream: its credential is checked again on every recheck. */
  opening: Request;
  /** Sends a message on the stream; false when it did not fit and the session ended. */
  send(text: string): boolean;
  end(): void;
}

/** The default of {@linkcode SseDeps.maxUnreadBytes}. */
export const DEFAULT_MAX_UNREAD_BYTES = 4 * 1024 * 1024;

const JSON_HEADERS = { "content-type": "application/json" };
const encoder = new TextEncoder();

function rpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }), {
    status,
    headers: { ...JSON_HEADERS, ...headers },
  });
}

function acceptsEventStream(accept: string | null): boolean {
  if (accept === null || accept.trim() === "") return true;
  return accept.split(",").some((part) => {
    const type = part.split(";")[0]!.trim().toLowerCase();
    return type === "text/event-stream" || type === "text/*" || type === "*/*";
  });
}

/** Checks a request's agent key (or OAuth access token) as `/mcp` does, through a cache of its own. */
export function agentKeyAuthenticator(db: DatabaseSync, oauth?: OAuthCheck): SseDeps["authenticate"] {
  const keys = new ReadCache(db);
  return (request, now) => {
    keys.refresh();
    return authenticateMcp(keys, request, now, oauth);
  };
}

/** Builds the SSE transport over the `/mcp` handler. */
export function createSseTransport(deps: SseDeps): SseTransport {
  const now = deps.now ?? (() => new Date());
  const maxPerKey = deps.maxSessionsPerKey ?? 10;
  const keepAliveMs = deps.keepAliveMs ?? 15_000;
  const maxUnread = deps.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES;
  const sessions = new Map<string, Session>();
  const perKey = new Map<string, number>();
  let closed = false;

  const recheck = (): void => {
    const at = now();
    for (const session of [...sessions.values()]) {
      const auth = deps.authenticate(session.opening, at);
      if (!auth.ok || auth.key.key_id !== session.keyId) session.end();
    }
  };
  const timer = setInterval(recheck, deps.recheckMs ?? 1000);
  Deno.unrefTimer(timer);

  function open(request: Request): Response {
    if (closed) return rpcError(503, "The server is stopping: connect again in a moment.");
    if (!originAllowed(request, deps.allowedOrigins)) {
      return rpcError(403, `Origin '${request.headers.get("origin")}' may not call this server.`);
    }
    const auth = deps.authenticate(request, now());
    if (!auth.ok) return auth.response;
    if (!acceptsEventStream(request.headers.get("accept"))) {
      return rpcError(406, "This endpoint answers with an event stream: accept text/event-stream.");
    }
    const keyId = auth.key.key_id;
    const count = perKey.get(keyId) ?? 0;
    if (count >= maxPerKey) {
      return rpcError(
        429,
        `This key has ${maxPerKey} SSE sessions open already: close one, or use Streamable HTTP at /mcp.`,
        { "retry-after": "5" },
      );
    }
    const id = crypto.randomUUID().replaceAll("-", "");
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let keepAlive: ReturnType<typeof setInterval> | null = null;
    let ended = false;
    // What waits unread, kept here rather than in the stream's own queue so that
    // it can be dropped; the stream takes one chunk at a time as the socket can.
    const waiting: Uint8Array[] = [];
    let waitingBytes = 0;
    let wake: (() => void) | null = null;
    const forget = () => {
      if (ended) return;
      ended = true;
      if (keepAlive !== null) clearInterval(keepAlive);
      sessions.delete(id);
      const left = (perKey.get(keyId) ?? 1) - 1;
      if (left <= 0) perKey.delete(keyId);
      else perKey.set(keyId, left);
    };
    const finish = () => {
      forget();
      waiting.length = 0;
      waitingBytes = 0;
      if (wake) wake();
      else {
        try {
          controller.close();
        } catch {
          // the client went away first
        }
      }
    };
    /**
     * Queues a chunk. When bytes wait unread already and this chunk would take
     * them past the limit, drops them all and ends the session (a chunk on an
     * empty stream always goes, however large).
     */
    const write = (chunk: string): boolean => {
      if (ended) return false;
      const bytes = encoder.encode(chunk);
      if (waitingBytes > 0 && waitingBytes + bytes.byteLength > maxUnread) {
        finish();
        return false;
      }
      waiting.push(bytes);
      waitingBytes += bytes.byteLength;
      wake?.();
      return true;
    };
    const session: Session = {
      id,
      keyId,
      opening: request,
      send: (text) => write(`event: message\ndata: ${text}\n\n`),
      end: () => {
        if (!ended) finish();
      },
    };
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      async pull(c) {
        if (waiting.length === 0 && !ended) await new Promise<void>((resolve) => wake = resolve);
        wake = null;
        const next = waiting.shift();
        if (next) {
          waitingBytes -= next.byteLength;
          c.enqueue(next);
        } else if (ended) {
          c.close();
        }
      },
      cancel: forget,
    }, { highWaterMark: 0 });
    sessions.set(id, session);
    perKey.set(keyId, count + 1);
    write(`event: endpoint\ndata: ${SSE_MESSAGES_PATH}?session_id=${id}\n\n`);
    keepAlive = setInterval(() => write(": keep-alive\n\n"), keepAliveMs);
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  async function message(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const id = url.searchParams.get("session_id") ?? url.searchParams.get("sessionId") ?? "";
    const session = sessions.get(id);
    // A credential is checked before anything else, with /mcp's answers.
    const auth = deps.authenticate(request, now());
    if (!auth.ok) return auth.response;
    // Another key's session looks exactly like one that does not exist.
    if (!session || session.keyId !== auth.key.key_id) {
      return rpcError(404, "No such SSE session: it ended, or was never opened — open /sse again.");
    }
    // Same URL: an OAuth token is checked against this endpoint's resource (/sse), not /mcp's.
    const forwarded = new Request(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    const response = await deps.mcp(forwarded);
    if (response.status === 202) return new Response("Accepted", { status: 202 });
    const isAnswer = response.status === 200 || response.status === 503;
    if (!isAnswer || !response.headers.get("content-type")?.startsWith("application/json")) return response;
    const text = await response.text();
    if (!session.send(text)) {
      return rpcError(
        503,
        `This SSE session is closed: more than ${
          Math.round(maxUnread / 1024)
        } KB of answers waited unread on its stream — read the stream, or open /sse again.`,
      );
    }
    return new Response(response.status === 200 ? "Accepted" : text, {
      status: response.status === 200 ? 202 : 503,
      headers: response.status === 200 ? {} : JSON_HEADERS,
    });
  }

  return {
    handle(request) {
      const path = new URL(request.url).pathname;
      if (path === SSE_PATH) {
        if (request.method !== "GET") {
          return Promise.resolve(
            rpcError(405, "Method not allowed: open the stream with GET.", { allow: "GET" }),
          );
        }
        return Promise.resolve(open(request));
      }
      if (request.method !== "POST") {
        return Promise.resolve(
          rpcError(405, "Method not allowed: POST messages to this endpoint.", { allow: "POST" }),
        );
      }
      return message(request);
    },
    recheck,
    get open() {
      return sessions.size;
    },
    close() {
      closed = true;
      clearInterval(timer);
      for (const session of [...sessions.values()]) session.end();
    },
  };
}
