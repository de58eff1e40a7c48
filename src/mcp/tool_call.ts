/**
 * One tool call and its audit entry: the tool runs (or its arguments are
 * refused, or it is not a tool), and the entry is appended before the answer
 * is returned; the caller's rate-limit token is taken with the entry. Also
 * what the MCP server reads and writes ({@linkcode McpCore}) and the
 * per-request state the endpoint reads after the answer.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { type EventStore, RateRefusedError, type TokenTake } from "../../events/store.ts";
import { type Arguments } from "./arguments.ts";
import { argumentsProblem, auditArguments } from "./limits.ts";
import { appendAudit, type Caller } from "./audit.ts";
import type { ReadCache } from "./read_cache.ts";
import type { McpSettings } from "./settings.ts";
import { MESSAGES } from "./texts.ts";
import { listDocumentsTool } from "./tools/list_documents.ts";
import { readDocumentTool } from "./tools/read_document.ts";
import { searchTool } from "./tools/search.ts";
import { type PageViewer, textResult, type Tool, type ToolOutcome, type ToolResult } from "./tools/tool.ts";
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

/** The Retry-After of a refused token, in whole seconds (at least 1). */
export function retryAfter(error: RateRefusedError): number {
  return Math.max(1, Math.ceil(error.waitSeconds));
}
