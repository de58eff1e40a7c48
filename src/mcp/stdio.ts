/**
 * The same MCP server over stdio, for clients that launch a command
 * (`deno task sergo mcp-stdio --key-env SERGO_KEY`): one JSON-RPC message
 * per line in, one answer per line out, every tool call audited as over HTTP.
 * The key is checked at start and again on every message, so a deleted or
 * expired key stops working at once.
 *
 * @module
 */
import { authenticateAgentKey } from "../auth/mcp_auth.ts";
import { ReadCache } from "./read_cache.ts";
import type { Caller } from "./audit.ts";
import type { McpDeps } from "./endpoint.ts";
import { nestsDeeperThan } from "../../events/json_depth.ts";
import { MAX_MESSAGE_DEPTH } from "./limits.ts";
import { answerMessages } from "./server.ts";
import { isRequest, type JsonRpcMessage } from "./json_rpc.ts";
import type { ExchangeState, McpCore } from "./tool_call.ts";
import { mcpSettings } from "./settings.ts";

/** Where stdio reads and writes; default the process's stdin and stdout. */
export interface StdioStreams {
  input: ReadableStream<Uint8Array>;
  output: WritableStream<Uint8Array>;
}

/** The error raised when the key given to stdio mode does not work. */
export class StdioKeyError extends Error {
  override name = "StdioKeyError";
}

async function authMessage(response: Response): Promise<string> {
  try {
    return ((await response.json()) as { message?: string }).message ?? `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

function errorLine(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error: { code, message } });
}

/** Serves MCP over stdio with one key until the input ends; rejects with a {@linkcode StdioKeyError} when the key does not work. */
export async function serveStdio(deps: McpDeps, keyValue: string, streams?: StdioStreams): Promise<void> {
  const core: McpCore = {
    db: deps.db,
    store: deps.store,
    now: deps.now ?? (() => new Date()),
    settings: mcpSettings(deps.settings),
    pageViews: deps.pageViews,
    semantic: deps.semantic,
    cache: new ReadCache(deps.db),
  };
  const authorization = `Bearer ${keyValue.trim()}`;
  core.cache.refresh();
  const first = authenticateAgentKey(core.cache, authorization, core.now());
  if (!first.ok) throw new StdioKeyError(`The key does not work: ${await authMessage(first.response)}`);
  const input = streams?.input ?? Deno.stdin.readable;
  const output = streams?.output ?? Deno.stdout.writable;
  const writer = output.getWriter();
  const encoder = new TextEncoder();
  const write = (line: string) => writer.write(encoder.encode(`${line}\n`));
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const bytes of input) {
      buffer += decoder.decode(bytes, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line !== "") await answerLine(core, authorization, line, write);
      }
    }
    if (buffer.trim() !== "") await answerLine(core, authorization, buffer.trim(), write);
  } finally {
    await writer.close().catch(() => {});
  }
}

async function answerLine(
  core: McpCore,
  authorization: string,
  line: string,
  write: (line: string) => Promise<void>,
): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(line);
  } catch {
    await write(errorLine(null, -32700, "Parse error: the line is not valid JSON."));
    return;
  }
  if (nestsDeeperThan(body, MAX_MESSAGE_DEPTH)) {
    await write(
      errorLine(null, -32600, `Invalid request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels.`),
    );
    return;
  }
  const messages = (Array.isArray(body) ? body : [body]).filter((m): m is JsonRpcMessage =>
    m !== null && typeof m === "object" && typeof (m as JsonRpcMessage).method === "string"
  );
  if (!messages.some(isRequest)) return;
  core.cache.refresh();
  const auth = authenticateAgentKey(core.cache, authorization, core.now());
  if (!auth.ok) {
    const message = await authMessage(auth.response);
    for (const m of messages.filter(isRequest)) await write(errorLine(m.id, -32001, message));
    return;
  }
  const caller: Caller = { key: auth.key, maskedKey: auth.maskedKey, endUser: null };
  const state: ExchangeState = { auditFailure: null };
  const answers = await answerMessages(core, caller, messages, state);
  await write(Array.isArray(body) ? `[${answers.join(",")}]` : answers[0]!);
}
