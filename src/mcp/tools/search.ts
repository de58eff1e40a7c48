/**
 * `search`: the best-matching excerpts in the key's scope, grouped by
 * document, at most half of `limit` (rounded up) from one document, paged by
 * `offset` through the same order.
 *
 * @module
 */
import { type DocumentRow, getDocument } from "../../../projections/catalogue.ts";
import { type SearchHit, searchPassages } from "../../search/lexical.ts";
import {
  ArgumentError,
  type Arguments,
  integerArgument,
  stringArgument,
  stringListArgument,
} from "../arguments.ts";
import { documentFolder, inScope, narrowToFolders } from "../scope.ts";
import { LIMITS, MESSAGES } from "../texts.ts";
import { textResult, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";

/** One document of a search result, fields in the reference's order. */
interface ResultDocument {
  document_id: string;
  document: string;
  folder: string;
  pages_estimated?: true;
  image_only_pages?: number[];
  hits: ResultHit[];
}

interface ResultHit {
  page?: number;
  section?: string;
  view_page_may_help?: true;
  excerpt: string;
}

/**
 * Splits ranked passages into pages of `limit`, each holding at most half of
 * `limit` (rounded up) from one document; passages held back by that cap move
 * to the next page, keeping their order. Returns the page that starts after
 * `offset` passages and whether any come after it.
 */
export function pageOfPassages<T extends { document_id: string }>(
  ranked: readonly T[],
  limit: number,
  offset: number,
): { page: T[]; more: boolean } {
  const cap = Math.ceil(limit / 2);
  let remaining = [...ranked];
  let skipped = 0;
  for (;;) {
    const page: T[] = [];
    const rest: T[] = [];
    const perDocument = new Map<string, number>();
    for (const passage of remaining) {
      const n = perDocument.get(passage.document_id) ?? 0;
      if (page.length < limit && n < cap) {
        page.push(passage);
        perDocument.set(passage.document_id, n + 1);
      } else {
        rest.push(passage);
      }
    }
    if (page.length === 0) return { page: [], more: false };
    if (skipped + page.length <= offset) {
      skipped += page.length;
      remaining = rest;
      continue;
    }
    if (skipped < offset) {
      // An offset inside a page: drop what was already shown and build the page from there.
      const shown = new Set(page.slice(0, offset - skipped));
      remaining = remaining.filter((passage) => !shown.has(passage));
      skipped = offset;
      continue;
    }
    return { page, more: rest.length > 0 };
  }
}

/**
 * The passages without repeats: a document that says the same thing twice on
 * a page (or whose passages repeat a page's text) gives that excerpt once, at
 * its best rank. Done before paging, so a later offset never shows it again.
 */
export function distinctExcerpts<T extends { document_id: string; page: number | null; text: string }>(
  ranked: readonly T[],
): T[] {
  const seen = new Set<string>();
  return ranked.filter((hit) => {
    const id = JSON.stringify([hit.document_id, hit.page, hit.text]);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * The passages a query finds among `within` (the key's scope, or a part of
 * it), ranked, each document's excerpts distinct, and the documents they are
 * in: what both the reference `search` and the ChatGPT-shaped one answer from.
 */
export async function rankedInScope(
  context: ToolContext,
  within: { folderIds: string[]; documentIds: string[] },
  query: string,
): Promise<{ visible: SearchHit[]; documents: Map<string, DocumentRow | undefined> }> {
  const options = {
    personId: context.scope.personId,
    folderIds: within.folderIds,
    documentIds: within.documentIds,
    query,
    depth: context.settings.searchDepth,
  };
  const ranked = context.semantic
    ? await context.semantic.search(context.db, options)
    : searchPassages(context.db, options);
  const documents = new Map<string, DocumentRow | undefined>();
  const visible = distinctExcerpts(ranked.filter((hit) => {
    if (!documents.has(hit.document_id)) {
      documents.set(hit.document_id, getDocument(context.db, hit.document_id));
    }
    return inScope(context.scope, documents.get(hit.document_id));
  }));
  return { visible, documents };
}

async function run(context: ToolContext, args: Arguments): Promise<ToolOutcome> {
  const query = stringArgument(args, "query");
  const limit = integerArgument(args, "limit", { min: 1, max: LIMITS.searchLimitMax }) ??
    LIMITS.searchLimitDefault;
  const offset = integerArgument(args, "offset", { min: 0, max: LIMITS.searchOffsetMax }) ?? 0;
  const folders = stringListArgument(args, "folders");
  const details: Record<string, unknown> = { query: query ?? "" };
  if (args.offset !== undefined) details.offset = offset;
  if (folders && folders.length > 0) details.folders = folders;
  if (query === undefined || query.trim() === "") {
    return { result: textResult(MESSAGES.giveQuery, true), details: { ...details, results: 0 } };
  }
  const narrowed = narrowToFolders(context.scope, folders);
  if (!narrowed.ok) {
    return { result: textResult(narrowed.message, true), details: { ...details, results: 0 } };
  }
  const { visible, documents } = await rankedInScope(context, narrowed.narrowed, query);
  if (visible.length === 0) {
    return {
      result: textResult(offset === 0 ? MESSAGES.nothingMatched : MESSAGES.nothingPast),
      details: { ...details, results: 0 },
    };
  }
  const { page, more } = pageOfPassages(visible, limit, offset);
  if (page.length === 0) {
    return { result: textResult(MESSAGES.nothingPast), details: { ...details, results: 0 } };
  }
  const grouped = groupByDocument(context, page, documents);
  const result = textResult(JSON.stringify(grouped));
  const next = offset + page.length;
  if (more && next <= LIMITS.searchOffsetMax) {
    result.content.push({ type: "text", text: MESSAGES.moreExcerpts(next) });
  }
  return { result, details: { ...details, results: page.length } };
}

function groupByDocument(
  context: ToolContext,
  page: readonly SearchHit[],
  documents: Map<string, DocumentRow | undefined>,
): ResultDocument[] {
  const out = new Map<string, ResultDocument>();
  for (const hit of page) {
    let item = out.get(hit.document_id);
    if (!item) {
      const document = documents.get(hit.document_id)!;
      item = {
        document_id: document.document_id,
        document: document.name,
        folder: documentFolder(context.scope, document),
        ...(document.pages_estimated ? { pages_estimated: true as const } : {}),
        ...(document.image_only_pages.length > 0 ? { image_only_pages: document.image_only_pages } : {}),
        hits: [],
      };
      out.set(hit.document_id, item);
    }
    const entry: ResultHit = {
      ...(hit.page !== null ? { page: hit.page } : {}),
      ...(hit.section ? { section: hit.section } : {}),
      ...(hit.marked ? { view_page_may_help: true as const } : {}),
      excerpt: hit.text,
    };
    item.hits.push(entry);
  }
  return [...out.values()];
}

/** The `search` tool. */
export const searchTool: Tool = {
  name: "search",
  async run(context, args) {
    try {
      return await run(context, args);
    } catch (error) {
      if (error instanceof ArgumentError) {
        return {
          result: textResult(error.message, true),
          details: { query: args.query ?? null, results: 0 },
        };
      }
      throw error;
    }
  },
};
