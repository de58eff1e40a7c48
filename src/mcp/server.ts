/**
 * One key's MCP server, built for one request from the key's texts: the SDK's
 * `Server` does the protocol (initialize, ping, tools/list, tools/call,
 * errors), fed through a single-exchange transport that writes each answer as
 * compact JSON with the reference's field order.
 *
 * What is immutable for a key's texts (serverInfo, instructions, the tools
 * and their JSON) is built once ({@linkcode keyDefinitions}); a server is
 * cheap to make, and nothing of one caller's request reaches another's.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import {
  type JSONRPCMessage,
  type ListToolsResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "npm:@modelcontextprotocol/server@2.4.0/validators/ajv";
import type { EventStore } from "../../events/store.ts";
import { type Arguments } from "./arguments.ts";
import { appendAudit, AuditError, type Caller } from "./audit.ts";
import { keyScope, rootFolderNames } from "./scope.ts";
import type { McpSettings } from "./settings.ts";
import { type KeyDefinitions, keyDefinitions } from "./tool_definitions.ts";
import { MESSAGES } from "./texts.ts";
import { listDocumentsTool } from "./tools/list_documents.ts";
import { readDocumentTool } from "./tools/read_document.ts";
import { searchTool } from "./tools/search.ts";
import { type ContentBlock, type PageViewer, textResult, type Tool, type ToolOutcome, type ToolResult } from "./tools/tool.ts";
import { viewPageTool } from "./tools/view_page.ts";

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
}

/** Per-request state the endpoint reads after the server answered. */
export interface ExchangeState {
  /** Set when a call's audit entry could not be written (the call is then answered with HTTP 503). */
  auditFailure: string | null;
}

/** The four tools, by name. */
export const TOOLS: ReadonlyMap<string, Tool> = new Map(
  [searchTool, listDocumentsTool, readDocumentTool, viewPageTool].map((tool) => [tool.name, tool]),
);

const validator = new AjvJsonSchemaValidator();

/** The definitions of a caller's server: its texts as they are now. */
export function callerDefinitions(core: McpCore, caller: Caller): KeyDefinitions {
  return keyDefinitions(
    { name: caller.key.name, description: caller.key.description, folderNames: rootFolderNames(core.db, caller.key) },
    core.settings.serverVersion,
  );
}

/** Runs one tool call and appends its audit entry; rejects with an {@linkcode AuditError} when that fails. */
export async function callTool(core: McpCore, caller: Caller, name: string, args: Arguments): Promise<ToolResult> {
  const started = performance.now();
  const tool = TOOLS.get(name);
  let outcome: ToolOutcome;
  if (!tool) {
    outcome = { result: textResult(MESSAGES.noTool(name), true), details: {} };
  } else {
    try {
      const scope = keyScope(core.db, caller.key);
      outcome = await tool.run({ db: core.db, key: caller.key, scope, settings: core.settings, pageViews: core.pageViews }, args);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      outcome = { result: textResult(`This call failed inside the server: ${reason}`, true), details: { failure: reason } };
    }
  }
  await appendAudit(core.store, caller, {
    tool: name,
    arguments: args,
    details: outcome.details,
    isError: outcome.result.isError,
    durationMs: performance.now() - started,
  }, core.now());
  return outcome.result;
}

/** Builds the SDK server of one request for a caller. */
export function buildServer(core: McpCore, caller: Caller, definitions: KeyDefinitions, state: ExchangeState): Server {
  const server = new Server({ ...definitions.serverInfo }, {
    capabilities: { tools: { listChanged: false } },
    instructions: definitions.instructions,
    jsonSchemaValidator: validator,
  });
  server.setRequestHandler("tools/list", () => definitions.tools as unknown as ListToolsResult);
  server.setRequestHandler("tools/call", async (request) => {
    const args = (request.params.arguments ?? {}) as Arguments;
    try {
      return { ...await callTool(core, caller, request.params.name, args) };
    } catch (error) {
      if (!(error instanceof AuditError)) throw error;
      state.auditFailure = error.message;
      throw new ProtocolError(ProtocolErrorCode.InternalError, error.message);
    }
  });
  return server;
}

/** A JSON-RPC message as parsed from a request body. */
export type JsonRpcMessage = Record<string, unknown>;

/** Whether a parsed message is a request (has a method and an id). */
export function isRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === "string" && message.id !== undefined && message.id !== null;
}

/**
 * A transport whose life is one HTTP exchange (or one stdio line): it hands a
 * message to the server and resolves with the server's answer as JSON.
 */
class ExchangeTransport implements Transport {
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #definitions: KeyDefinitions;
  #waiting: { id: unknown; method: string; resolve: (json: string) => void } | null = null;

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
    const waiting = this.#waiting;
    if (waiting && message.id === waiting.id && ("result" in message || "error" in message)) {
      this.#waiting = null;
      waiting.resolve(serializeAnswer(waiting.method, message, this.#definitions));
    }
    return Promise.resolve();
  }

  /** Delivers one message; resolves with the answer's JSON, or null for a notification. */
  deliver(message: JsonRpcMessage): Promise<string | null> {
    if (!isRequest(message)) {
      this.onmessage?.(message as unknown as JSONRPCMessage);
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      this.#waiting = { id: message.id, method: message.method as string, resolve };
      this.onmessage?.(message as unknown as JSONRPCMessage);
    });
  }
}

/** Answers JSON-RPC messages from one caller, in order; notifications get no answer. */
export async function answerMessages(
  core: McpCore,
  caller: Caller,
  messages: readonly JsonRpcMessage[],
  state: ExchangeState,
): Promise<string[]> {
  const definitions = callerDefinitions(core, caller);
  const server = buildServer(core, caller, definitions, state);
  const transport = new ExchangeTransport(definitions);
  await server.connect(transport);
  const answers: string[] = [];
  try {
    for (const message of messages) {
      const answer = await transport.deliver(message);
      if (answer !== null) answers.push(answer);
    }
  } finally {
    await server.close();
  }
  return answers;
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
export function serializeAnswer(method: string, message: Record<string, unknown>, definitions: KeyDefinitions): string {
  const id = JSON.stringify(message.id);
  if ("error" in message) return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(message.error)}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":${
    resultJson(method, message.result as Record<string, unknown>, definitions)
  }}`;
}
