/**
 * One key's MCP server: answers a request's JSON-RPC messages in order. A
 * plain `tools/call` and a plain `tools/list` are answered here, byte for
 * byte as the SDK would (`json_rpc.ts`), the call through
 * {@linkcode callTool} with its audit entry (`tool_call.ts`); everything else
 * goes through the SDK's server (`sdk_server.ts`). Each answer is compact
 * JSON with the reference's field order.
 *
 * What is immutable for a key's texts (serverInfo, instructions, the tools
 * and their JSON, and the server built from them) is built once and kept
 * ({@linkcode keyDefinitions}); a change of name, description or folders
 * makes new definitions, so it shows in the next answer. 2026-07-28 requests
 * get a server of their own per request from the same definitions (see
 * `endpoint.ts`).
 *
 * @module
 */
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { RateRefusedError } from "../../events/store.ts";
import { type Arguments } from "./arguments.ts";
import { AuditError, type Caller } from "./audit.ts";
import { rootFolderNames } from "./scope.ts";
import { type KeyDefinitions, keyDefinitions } from "./tool_definitions.ts";
import {
  BAD_TOOL_CALL,
  errorAnswer,
  isRequest,
  type JsonRpcMessage,
  plainToolCall,
  plainToolsList,
  requestProblem,
  serializeAnswer,
  wellFormedToolCall,
} from "./json_rpc.ts";
import { sharedTransport } from "./sdk_server.ts";
import { callTool, type ExchangeState, type McpCore, retryAfter } from "./tool_call.ts";

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
