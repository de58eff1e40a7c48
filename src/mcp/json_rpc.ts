/**
 * JSON-RPC as the MCP endpoint reads and writes it: which messages are
 * requests, why one cannot be answered, the plain forms of `tools/call` and
 * `tools/list` answered without the SDK, and the answers' compact JSON in the
 * reference's field order.
 *
 * @module
 */
import type { Arguments } from "./arguments.ts";
import type { KeyDefinitions } from "./tool_definitions.ts";
import type { ContentBlock } from "./tools/tool.ts";

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

/** A JSON-RPC error answer, compact, in the reference's field order. */
export function errorAnswer(id: unknown, code: number, message: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(validId(id) ? id : null)},"error":${
    JSON.stringify({ code, message })
  }}`;
}

/** The answer to a `tools/call` whose params are not a name and an arguments object. */
export const BAD_TOOL_CALL =
  "Invalid params: tools/call takes a tool `name` (a string) and `arguments` (an object).";

/** Whether `tools/call` params name a tool and, if they send arguments, send them as an object. */
export function wellFormedToolCall(params: unknown): boolean {
  const { name, arguments: args } = (params ?? {}) as Record<string, unknown>;
  if (typeof name !== "string") return false;
  return args === undefined || (args !== null && typeof args === "object" && !Array.isArray(args));
}

/**
 * A `tools/call` request in its plain form — a string or number id, a tool
 * name and an arguments object, nothing else — which the SDK would accept
 * as is and hand to {@linkcode callTool}. Anything else goes through the SDK.
 */
export function plainToolCall(message: JsonRpcMessage): { name: string; args: Arguments } | null {
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
export function plainToolsList(message: JsonRpcMessage): boolean {
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
