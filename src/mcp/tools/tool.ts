/**
 * What every tool is given and what it answers.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { DocumentRow } from "../../../projections/catalogue.ts";
import type { AgentKey } from "../../../projections/key_scopes.ts";
import type { Arguments } from "../arguments.ts";
import type { KeyScope } from "../scope.ts";
import type { McpSettings } from "../settings.ts";
import type { SemanticSearch } from "../../search/semantic.ts";

/** Draws a page of a stored PDF (see `src/render/page_cache.ts`). */
export interface PageViewer {
  view(sourceSha256: string, page: number, format: "image" | "pdf"): Promise<Uint8Array>;
}

/** A content block of a tool result. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; data: string }
  | { type: "resource"; resource: { uri: string; mimeType: string; blob: string } };

/** A tool result. */
export interface ToolResult {
  content: ContentBlock[];
  isError: boolean;
}

/** What a tool call runs with. */
export interface ToolContext {
  db: DatabaseSync;
  key: AgentKey;
  /** The key's scope now. */
  scope: KeyScope;
  settings: McpSettings;
  pageViews?: PageViewer;
  /** Semantic search, where an embedding model is configured; without it search is lexical. */
  semantic?: SemanticSearch;
  /**
   * Computes a value from the catalogue and this key alone, or hands back the
   * one computed before while neither changed (see `src/mcp/read_cache.ts`).
   */
  remember<T>(id: string, compute: () => T): T;
  /** The console's address (no trailing slash), for links to pages in answers. */
  consoleUrl?: string;
}

/** A tool's answer and what the audit entry says about it. */
export interface ToolOutcome {
  result: ToolResult;
  /** The details of the audit entry: query, results, offset, folders, count, file, page(s), format. */
  details: Record<string, unknown>;
}

/** A tool: its name and how it answers. */
export interface Tool {
  /** The reference's four, or a tool of another shape (`src/mcp/shape.ts`). */
  name: string;
  run(context: ToolContext, args: Arguments): ToolOutcome | Promise<ToolOutcome>;
}

/** A one-text-block result. */
export function textResult(text: string, isError = false): ToolResult {
  return { content: [{ type: "text", text }], isError };
}

/**
 * A document's page count as every tool gives it: the count read, or for a
 * document that is not indexed (no text), its PDF copy's once the copy exists
 * (a PDF's own count if it was read before). Null when there is none yet.
 */
export function pageCount(document: DocumentRow): number | null {
  if (document.status !== "not_indexed") return document.page_count;
  if (document.type === "pdf") return document.page_count;
  return document.pdf_copy_status === "made" ? document.pdf_copy_pages : null;
}
