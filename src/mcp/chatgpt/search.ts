/**
 * The ChatGPT shape's `search(query)`: Sergo's ranking over the key's scope
 * (the same passages, in the same order, as the reference's `search`), at
 * page granularity — a page's best passage stands for it — the
 * {@linkcode SEARCH_RESULTS} best pages at most, at most half of them from
 * one document. One text block of JSON, `{"results": [{"id", "title",
 * "url"}]}`, as OpenAI documents it.
 *
 * @module
 */
import type { DocumentRow } from "../../../projections/catalogue.ts";
import type { SearchHit } from "../../search/lexical.ts";
import { ArgumentError, type Arguments, stringArgument } from "../arguments.ts";
import { MESSAGES } from "../texts.ts";
import { pageOfPassages, rankedInScope } from "../tools/search.ts";
import { textResult, type Tool, type ToolContext, type ToolOutcome } from "../tools/tool.ts";
import { formatPageId, pageUrl, sectionsByPage } from "./page_ids.ts";
import { pageTitle, SEARCH_RESULTS } from "./texts.ts";

/** One result, fields in OpenAI's order. */
export interface SearchResult {
  id: string;
  title: string;
  url: string;
}

/** The ranked passages without a second passage of a page already ranked: one per page, at its best rank. */
export function bestPerPage<T extends { document_id: string; page: number | null }>(
  ranked: readonly T[],
): T[] {
  const seen = new Set<string>();
  return ranked.filter((hit) => {
    const id = `${hit.document_id}:${hit.page ?? 1}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

async function run(context: ToolContext, args: Arguments): Promise<ToolOutcome> {
  const query = stringArgument(args, "query");
  const details: Record<string, unknown> = { query: query ?? "" };
  if (query === undefined || query.trim() === "") {
    return { result: textResult(MESSAGES.giveQuery, true), details: { ...details, results: 0 } };
  }
  const { visible, documents } = await rankedInScope(context, context.scope, query);
  const { page } = pageOfPassages(bestPerPage(visible), SEARCH_RESULTS, 0);
  const results = toResults(context, page, documents);
  return {
    result: textResult(JSON.stringify({ results })),
    details: { ...details, results: results.length, ids: results.map((result) => result.id) },
  };
}

function toResults(
  context: ToolContext,
  page: readonly SearchHit[],
  documents: Map<string, DocumentRow | undefined>,
): SearchResult[] {
  const consoleUrl = context.consoleUrl ?? "";
  const sections = new Map<string, Map<number, string>>();
  return page.map((hit) => {
    const document = documents.get(hit.document_id)!;
    const number = hit.page ?? 1;
    let section: string | null = null;
    if (document.type === "docx") {
      let byPage = sections.get(document.document_id);
      if (!byPage) {
        sections.set(document.document_id, byPage = sectionsByPage(context.db, document.document_id));
      }
      section = byPage.get(number) ?? null;
    }
    const id = { documentId: document.document_id, page: number };
    return {
      id: formatPageId(id.documentId, id.page),
      title: pageTitle(document.name, number, section),
      url: pageUrl(consoleUrl, id),
    };
  });
}

/** The ChatGPT shape's `search`. */
export const chatgptSearchTool: Tool = {
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
