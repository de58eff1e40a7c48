/**
 * The SDK's `Server` for one key's definitions, and the transport it is
 * connected to: what is not answered on the plain paths (initialize, ping,
 * `tools/list` with a cursor or `_meta`, any other form of a request) goes
 * through it. One server is built per key's definitions and kept while they
 * are; each request carries its own caller (key, scope, end user) to the
 * handlers through `authInfo` and gets an id of its own inside the shared
 * server, so nothing of one caller's request reaches another's.
 *
 * @module
 */
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  type ListToolsResult,
  type MessageExtraInfo,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import { RateRefusedError } from "../../events/store.ts";
import { Deadlines } from "../http/deadlines.ts";
import { type Arguments } from "./arguments.ts";
import { AuditError, type Caller } from "./audit.ts";
import type { KeyDefinitions } from "./tool_definitions.ts";
import { errorAnswer, type JsonRpcMessage, serializeAnswer } from "./json_rpc.ts";
import { callTool, type ExchangeState, type McpCore, retryAfter } from "./tool_call.ts";

const validator = new AjvJsonSchemaValidator();

/** What a request hands to the server's handlers (through the SDK's `authInfo.extra`). */
export interface RequestContext {
  caller: Caller;
  state: ExchangeState;
}

/** The `authInfo` that carries a request's context to the handlers. */
export function requestAuthInfo(
  context: RequestContext,
): { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> } {
  return { token: "agent-key", clientId: context.caller.key.key_id, scopes: [], extra: { context } };
}

/** Builds an SDK server for a key's definitions; handlers take the caller from each request's `authInfo`. */
export function buildServer(core: McpCore, definitions: KeyDefinitions): Server {
  const server = new Server({ ...definitions.serverInfo }, {
    capabilities: { tools: { listChanged: false } },
    instructions: definitions.instructions,
    jsonSchemaValidator: validator,
  });
  server.setRequestHandler("tools/list", () => definitions.tools as unknown as ListToolsResult);
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const context = ctx.http?.authInfo?.extra?.context as RequestContext | undefined;
    if (!context) throw new ProtocolError(ProtocolErrorCode.InternalError, "This request carries no caller.");
    const args = (request.params.arguments ?? {}) as Arguments;
    try {
      return { ...await callTool(core, context.caller, request.params.name, args, context.state) };
    } catch (error) {
      if (error instanceof RateRefusedError) {
        context.state.refusedForSeconds = retryAfter(error);
        throw new ProtocolError(ProtocolErrorCode.InternalError, error.message);
      }
      if (!(error instanceof AuditError)) throw error;
      context.state.auditFailure = error.message;
      throw new ProtocolError(ProtocolErrorCode.InternalError, error.message);
    }
  });
  return server;
}

/**
 * The transport of a key's shared server: each request gets an id of its
 * own on the way in (so concurrent callers never collide) and its own id back
 * on the way out, with its answer written as JSON. A request the SDK would
 * not answer is answered with an invalid-request error, and one it does not
 * answer in time with an internal error, so no request waits for ever.
 */
class SharedTransport implements Transport {
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #definitions: KeyDefinitions;
  readonly #waiting = new Map<number, { id: unknown; method: string; resolve: (json: string) => void }>();
  #deadlines = new Deadlines(0);
  #next = 1;

  constructor(definitions: KeyDefinitions) {
    this.#definitions = definitions;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  send(sent: JSONRPCMessage): Promise<void> {
    const message = sent as unknown as Record<string, unknown>;
    const waiting = typeof message.id === "number" ? this.#waiting.get(message.id) : undefined;
    if (waiting && ("result" in message || "error" in message)) {
      this.#waiting.delete(message.id as number);
      const answer = { ...withPlainSchemaError(message), id: waiting.id };
      waiting.resolve(serializeAnswer(waiting.method, answer, this.#definitions));
    }
    return Promise.resolve();
  }

  /** Delivers one request with its context; resolves with the answer's JSON. */
  deliver(message: JsonRpcMessage, context: RequestContext, timeoutMs: number): Promise<string> {
    const id = this.#next++;
    if (this.#next > Number.MAX_SAFE_INTEGER - 1) this.#next = 1;
    const method = message.method as string;
    const renumbered = { ...message, id };
    // The SDK drops a request that fails its schema. Past `requestProblem`, only the
    // version or `_meta` can (the schema check costs microseconds, so only then).
    const params = message.params as { _meta?: unknown } | undefined;
    if (
      (message.jsonrpc !== "2.0" || params?._meta !== undefined) && !isJSONRPCRequest(renumbered)
    ) {
      return Promise.resolve(errorAnswer(message.id, ProtocolErrorCode.InvalidRequest, INVALID_SHAPE));
    }
    const deadlines = this.#deadlines.ms === timeoutMs
      ? this.#deadlines
      : (this.#deadlines = new Deadlines(timeoutMs));
    return new Promise((resolve) => {
      const done = deadlines.start(() => {
        this.#waiting.delete(id);
        resolve(errorAnswer(message.id, ProtocolErrorCode.InternalError, noAnswerMessage(timeoutMs)));
      });
      this.#waiting.set(id, {
        id: message.id,
        method,
        resolve: (json) => {
          done();
          resolve(json);
        },
      });
      this.onmessage?.(renumbered as unknown as JSONRPCMessage, { authInfo: requestAuthInfo(context) });
    });
  }
}

/**
 * The SDK answers a request whose params fail its schema (an `initialize`
 * whose `protocolVersion` is a number) with -32603 and the schema library's
 * issue list as the message. That is the caller's mistake, not the server's:
 * it becomes -32602 Invalid params with one sentence naming the field.
 */
function withPlainSchemaError(message: Record<string, unknown>): Record<string, unknown> {
  const error = message.error as { code?: unknown; message?: unknown } | undefined;
  if (!error || error.code !== -32603 || typeof error.message !== "string") return message;
  if (!error.message.trimStart().startsWith("[")) return message;
  let issues: unknown;
  try {
    issues = JSON.parse(error.message);
  } catch {
    return message;
  }
  const first = Array.isArray(issues) ? issues[0] as { path?: unknown; message?: unknown } : undefined;
  if (!first || !Array.isArray(first.path) || typeof first.message !== "string") return message;
  const path = first.path.filter((part, i) => !(i === 0 && part === "params")).join(".");
  const why = first.message.replace(/^Invalid input: /, "").replace(/\.$/, "");
  const field = path === "" ? "The params" : `\`${path}\``;
  return { ...message, error: { code: -32602, message: `Invalid params: ${field} is not valid (${why}).` } };
}

const INVALID_SHAPE = "Invalid request: the message does not have the shape of a JSON-RPC request.";

function noAnswerMessage(timeoutMs: number): string {
  const within = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`;
  return `The server did not answer this request within ${within}.`;
}

const shared = new WeakMap<McpCore, WeakMap<KeyDefinitions, SharedTransport>>();

/** The shared server of a key's definitions, built once and kept while the definitions are. */
export function sharedTransport(core: McpCore, definitions: KeyDefinitions): SharedTransport {
  let byDefinitions = shared.get(core);
  if (!byDefinitions) shared.set(core, byDefinitions = new WeakMap());
  let transport = byDefinitions.get(definitions);
  if (!transport) {
    transport = new SharedTransport(definitions);
    // connect() only wires callbacks and starts the transport, which is synchronous here.
    void buildServer(core, definitions).connect(transport);
    byDefinitions.set(definitions, transport);
  }
  return transport;
}
