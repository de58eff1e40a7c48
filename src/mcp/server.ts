/**
 * One key's MCP server: the SDK's `Server` does the protocol (initialize,
 * ping, tools/list, tools/call, errors); a transport writes each answer as
 * compact JSON with the reference's field order.
 *
 * What is immutable for a key's texts (serverInfo, instructions, the tools
 * and their JSON, and the server built from them) is built once and kept
 * ({@linkcode keyDefinitions}); a change of name, description or folders
 * makes new definitions, so it shows in the next answer. Each request
 * carries its own caller (key, scope, end user) to the handlers and gets an
 * id of its own inside the shared server, so nothing of one caller's request
 * reaches another's. 2026-07-28 requests get a server of their own per
 * request from the same definitions (see `endpoint.ts`).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
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
import { type EventStore, RateRefusedError, type TokenTake } from "../../events/store.ts";
import { Deadlines } from "../http/deadlines.ts";
import { type Arguments } from "./arguments.ts";
import { argumentsProblem, auditArguments } from "./limits.ts";
import { appendAudit, AuditError, type Caller } from "./audit.ts";
import type { ReadCache } from "./read_cache.ts";
import { rootFolderNames } from "./scope.ts";
import type { McpSettings } from "./settings.ts";
import { type KeyDefinitions, keyDefinitions } from "./tool_definitions.ts";
import { MESSAGES } from "./texts.ts";
import { listDocumentsTool } from "./tools/list_documents.ts";
import { readDocumentTool } from "./tools/read_document.ts";
import { searchTool } from "./tools/search.ts";
import {
  type ContentBlock,
  type PageViewer,
  textResult,
  type Tool,
  type ToolOutcome,
  type ToolResult,
} from "./tools/tool.ts";
import { viewPageTool } from "./tools/view_page.ts";
import type { SemanticSearch } from "../search/semantic.ts";
import type { McpShape } from "./shape.ts";

/** What the MCP server reads and writes. */
export interface McpCore {
  /** The projections database. */
  db: DatabaseSync;
  /** The event log, for audit entries. */
  store: EventStore;
  now: () => Date;
  settings: McpSettings;
  /** Draws pages for `view_page`; without it, `view_page` answers that there is no page view. */
  pageViews?: PageViewer;
  /** Semantic search, where an embedding model is configured. */
  semantic?: SemanticSearch;
  /** Keys, scopes and server texts read on every call, kept while the projections are unchanged. */
  cache: ReadCache;
  /** The server's shape when it is not the reference's (`/chatgpt/mcp`); absent for `/mcp`. */
  shape?: McpShape;
}

/** Per-request state the endpoint reads after the server answered. */
export interface ExchangeState {
  /** Set when a call's audit entry could not be written (the call is then answered with HTTP 503). */
  auditFailure: string | null;
  /**
   * The request's rate-limit token, not taken yet: the first audit entry
   * written for the request takes it in the same statement (then this is
   * null again). Set by the endpoint on replicas sharing their buckets.
   */
  token?: TokenTake | null;
  /** Set when that token was refused: the request is answered 429 after this many seconds, nothing audited. */
  refusedForSeconds?: number | null;
}

/** The four tools, by name. */
export const TOOLS: ReadonlyMap<string, Tool> = new Map(
  [searchTool, listDocumentsTool, readDocumentTool, viewPageTool].map((tool) => [tool.name, tool]),
);

const validator = new AjvJsonSchemaValidator();

/** The definitions of a caller's server: its texts as they are now. */
export function callerDefinitions(core: McpCore, caller: Caller): KeyDefinitions {
  const key = caller.key;
  const shape = core.shape;
  return core.cache.forKey(key, "definitions", () => {
    const texts = {
      name: key.name,
      description: key.description,
      folderNames: rootFolderNames(core.db, key),
    };
    return shape
      ? shape.definitions(texts, core.settings.serverVersion)
      : keyDefinitions(texts, core.settings.serverVersion, { toolTitles: core.settings.toolTitles });
  });
}

/**
 * Runs one tool call and appends its audit entry; rejects with an
 * {@linkcode AuditError} when that fails, and with `RateRefusedError` when
 * the request's token (`state.token`, taken with the entry) was refused.
 */
export async function callTool(
  core: McpCore,
  caller: Caller,
  name: string,
  args: Arguments,
  state?: ExchangeState,
): Promise<ToolResult> {
  const started = performance.now();
  const shape = core.shape;
  const tool = (shape?.tools ?? TOOLS).get(name);
  const audited = shape ? shape.auditArguments(name, args) : auditArguments(name, args);
  let outcome: ToolOutcome;
  const refused = tool ? argumentsProblem(args) : null;
  if (!tool) {
    outcome = { result: textResult(MESSAGES.noTool(name), true), details: {} };
  } else if (refused !== null) {
    // The audit entry names what was asked (capped) and that nothing was found, as for any call.
    const none = name === "search" ? { results: 0 } : name === "list_documents" ? { count: 0 } : {};
    outcome = {
      result: textResult(refused, true),
      details: { ...audited, ...none, refused },
    };
  } else {
    try {
      const scope = core.cache.scope(caller.key);
      outcome = await tool.run({
        db: core.db,
        key: caller.key,
        scope,
        settings: core.settings,
        pageViews: core.pageViews,
        semantic: core.semantic,
        remember: (id, compute) => core.cache.forKey(caller.key, `tool:${id}`, compute),
        ...(caller.consoleUrl !== undefined ? { consoleUrl: caller.consoleUrl } : {}),
      }, args);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      outcome = {
        result: textResult(`This call failed inside the server: ${reason}`, true),
        details: { failure: reason },
      };
    }
  }
  const token = state?.token ?? null;
  if (state) state.token = null;
  await appendAudit(
    core.store,
    caller,
    {
      tool: name,
      arguments: audited,
      details: withErrorReason(outcome),
      isError: outcome.result.isError,
      durationMs: performance.now() - started,
      ...(shape ? { shape: shape.name, action: shape.auditAction(name) } : {}),
    },
    core.now(),
    token,
  );
  return outcome.result;
}

/** The longest error text an audit entry keeps. */
const MAX_AUDITED_ERROR = 1000;

/**
 * An outcome's audit details; an error the details do not explain yet gets the
 * text the client was sent (the reference's message), so every failed call
 * says why in the audit.
 */
function withErrorReason(outcome: ToolOutcome): Record<string, unknown> {
  const details = outcome.details;
  if (!outcome.result.isError || "failure" in details || "refused" in details) return details;
  const text = outcome.result.content.map((block) => block.type === "text" ? block.text : "").join(" ")
    .trim();
  return { ...details, error: text.slice(0, MAX_AUDITED_ERROR) };
}

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

/** The Retry-After of a refused token, in whole seconds (at least 1). */
function retryAfter(error: RateRefusedError): number {
  return Math.max(1, Math.ceil(error.waitSeconds));
}

/** A JSON-RPC message as parsed from a request body. */
export type JsonRpcMessage = Record<string, unknown>;

/** Whether a parsed message is a request (has a method and an id). */
export function isRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === "string" && message.id !== undefined && message.id !== null;
}

/**
 * Why a JSON-RPC message with a method cannot be answered as a request, in
 * one sentence; null when it can. The SDK drops (never answers) a request
 * whose `params` is not an object or whose `_meta` is malformed, and takes a
 * request that carries a result for a response, so these are answered here.
 */
export function requestProblem(message: JsonRpcMessage): string | null {
  if (!validId(message.id)) return "Invalid request: id must be a string or a number.";
  if ("result" in message || "error" in message) {
    return "Invalid request: a request cannot carry a result or an error.";
  }
  const params = message.params;
  if (params !== undefined && (params === null || typeof params !== "object" || Array.isArray(params))) {
    return "Invalid request: params must be an object.";
  }
  return null;
}

function validId(id: unknown): boolean {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
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

/** A JSON-RPC error answer, compact, in the reference's field order. */
export function errorAnswer(id: unknown, code: number, message: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(validId(id) ? id : null)},"error":${
    JSON.stringify({ code, message })
  }}`;
}

const shared = new WeakMap<McpCore, WeakMap<KeyDefinitions, SharedTransport>>();

/** The shared server of a key's definitions, built once and kept while the definitions are. */
function sharedTransport(core: McpCore, definitions: KeyDefinitions): SharedTransport {
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

/**
 * Answers JSON-RPC messages from one caller, in order; notifications get no
 * answer (they change nothing in a stateless server).
 */
export async function answerMessages(
  core: McpCore,
  caller: Caller,
  messages: readonly JsonRpcMessage[],
  state: ExchangeState,
): Promise<string[]> {
  const definitions = callerDefinitions(core, caller);
  const transport = sharedTransport(core, definitions);
  const answers: string[] = [];
  for (const message of messages) {
    if (state.refusedForSeconds) break; // the request is refused whole: nothing more runs or is audited
    if (!isRequest(message)) continue;
    const problem = requestProblem(message);
    const call = problem === null ? plainToolCall(message) : null;
    if (problem !== null) {
      answers.push(errorAnswer(message.id, ProtocolErrorCode.InvalidRequest, problem));
    } else if (call) {
      answers.push(await answerToolCall(core, caller, message.id, call, state, definitions));
    } else if (plainToolsList(message)) {
      answers.push(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${definitions.toolsJson}}`);
    } else if (message.method === "tools/call" && !wellFormedToolCall(message.params)) {
      answers.push(errorAnswer(message.id, ProtocolErrorCode.InvalidParams, BAD_TOOL_CALL));
    } else {
      answers.push(await transport.deliver(message, { caller, state }, core.settings.answerTimeoutMs));
    }
  }
  return answers;
}

const BAD_TOOL_CALL =
  "Invalid params: tools/call takes a tool `name` (a string) and `arguments` (an object).";

/** Whether `tools/call` params name a tool and, if they send arguments, send them as an object. */
function wellFormedToolCall(params: unknown): boolean {
  const { name, arguments: args } = (params ?? {}) as Record<string, unknown>;
  if (typeof name !== "string") return false;
  return args === undefined || (args !== null && typeof args === "object" && !Array.isArray(args));
}

/**
 * A `tools/call` request in its plain form — a string or number id, a tool
 * name and an arguments object, nothing else — which the SDK would accept
 * as is and hand to {@linkcode callTool}. Anything else goes through the SDK.
 */
function plainToolCall(message: JsonRpcMessage): { name: string; args: Arguments } | null {
  if (message.method !== "tools/call") return null;
  if (typeof message.id !== "string" && typeof message.id !== "number") return null;
  for (const field in message) {
    if (field !== "jsonrpc" && field !== "id" && field !== "method" && field !== "params") return null;
  }
  const params = message.params as Record<string, unknown> | null | undefined;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return null;
  for (const field in params) if (field !== "name" && field !== "arguments") return null;
  const { name, arguments: args } = params;
  if (typeof name !== "string") return null;
  if (args === undefined) return { name, args: {} };
  if (args === null || typeof args !== "object" || Array.isArray(args)) return null;
  return { name, args: args as Arguments };
}

/**
 * Whether a request is a plain `tools/list` — nothing but `jsonrpc`, `id`,
 * `method` and no params or empty ones — whose answer is the key's
 * `toolsJson` as the SDK's handler would send it, byte for byte: the SDK's
 * dispatch (schema checks, handler lookup, a deadline) was half of its cost.
 * Anything else (a cursor, `_meta`) goes through the SDK.
 */
function plainToolsList(message: JsonRpcMessage): boolean {
  if (message.method !== "tools/list" || message.jsonrpc !== "2.0") return false;
  for (const field in message) {
    if (field !== "jsonrpc" && field !== "id" && field !== "method" && field !== "params") return false;
  }
  const params = message.params;
  if (params === undefined) return true;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return false;
  for (const _field in params) return false;
  return true;
}

/**
 * Answers a plain `tools/call` as the SDK would, byte for byte, without its
 * per-request machinery (request and result schema checks, handler dispatch):
 * the hottest path of the server, measured by the audited-calls benchmark.
 */
async function answerToolCall(
  core: McpCore,
  caller: Caller,
  id: unknown,
  call: { name: string; args: Arguments },
  state: ExchangeState,
  definitions: KeyDefinitions,
): Promise<string> {
  try {
    const result = await callTool(core, caller, call.name, call.args, state);
    return serializeAnswer("tools/call", { id, result }, definitions);
  } catch (error) {
    if (error instanceof AuditError) state.auditFailure = error.message;
    if (error instanceof RateRefusedError) state.refusedForSeconds = retryAfter(error);
    const message = error instanceof Error ? error.message : "Internal error";
    return serializeAnswer(
      "tools/call",
      { id, error: { code: ProtocolErrorCode.InternalError, message } },
      definitions,
    );
  }
}

function orderedBlock(block: ContentBlock): unknown {
  switch (block.type) {
    case "text":
      return { text: block.text, type: "text" };
    case "image":
      return { type: "image", mimeType: block.mimeType, data: block.data };
    case "resource":
      return {
        type: "resource",
        resource: { uri: block.resource.uri, mimeType: block.resource.mimeType, blob: block.resource.blob },
      };
  }
}

function resultJson(method: string, result: Record<string, unknown>, definitions: KeyDefinitions): string {
  if (method === "tools/list" && result === definitions.tools) return definitions.toolsJson;
  if (method === "initialize") {
    const { capabilities, instructions, protocolVersion, serverInfo, ...rest } = result;
    return JSON.stringify({ capabilities, instructions, protocolVersion, serverInfo, ...rest });
  }
  if (method === "tools/call" && Array.isArray(result.content)) {
    const { content, isError, ...rest } = result as { content: ContentBlock[]; isError?: boolean };
    return JSON.stringify({ content: content.map(orderedBlock), isError: isError ?? false, ...rest });
  }
  return JSON.stringify(result);
}

/** Serializes an answer as compact JSON: `jsonrpc`, `id`, then `result` or `error`. */
export function serializeAnswer(
  method: string,
  message: Record<string, unknown>,
  definitions: KeyDefinitions,
): string {
  const id = JSON.stringify(message.id);
  if ("error" in message) return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(message.error)}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":${
    resultJson(method, message.result as Record<string, unknown>, definitions)
  }}`;
}
