/**
 * The ChatGPT shape's `fetch(id)`: the text of the page a `search` result
 * names, with its title, its console link and `metadata` (folder, page,
 * page count, pages to view, whether the picture may help). One text block
 * of JSON, `{"id", "title", "text", "url", "metadata"}`, as OpenAI documents
 * it. An id that names nothing, a page past the end, and anything outside
 * the key's scope all answer with the same bytes.
 *
 * @module
 */
import { getDocument, getPages } from "../../../projections/catalogue.ts";
import { ArgumentError, type Arguments, stringArgument } from "../arguments.ts";
import { documentFolder, inScope } from "../scope.ts";
import { LIMITS, MESSAGES } from "../texts.ts";
import { pageCount, textResult, type Tool, type ToolContext, type ToolOutcome } from "../tools/tool.ts";
import { formatPageId, pageSection, pageUrl, parsePageId } from "./page_ids.ts";
import { CHATGPT_MESSAGES, pageTitle } from "./texts.ts";

/** A fetched page, fields in OpenAI's order. */
export interface FetchedPage {
  id: string;
  title: string;
  text: string;
  url: string;
  metadata: PageMetadata;
}

/** What `metadata` says of a fetched page. */
export interface PageMetadata {
  document_id: string;
  document: string;
  folder: string;
  type: string;
  page: number;
  pages: number;
  pages_estimated?: true;
  section?: string;
  pages_to_view: number[];
  view_page_may_help: boolean;
}

function run(context: ToolContext, args: Arguments): ToolOutcome {
  const raw = stringArgument(args, "id");
  if (raw === undefined || raw.trim() === "") {
    return { result: textResult(CHATGPT_MESSAGES.giveId, true), details: { id: raw ?? null } };
  }
  // Every id that does not name a page this key reads gets these same bytes, and the same audit details.
  const unknown: ToolOutcome = { result: textResult(MESSAGES.notFound, true), details: { id: raw } };
  const wanted = parsePageId(raw);
  if (!wanted) return unknown;
  const document = getDocument(context.db, wanted.documentId);
  if (!inScope(context.scope, document)) return unknown;
  const details = {
    id: raw,
    document_id: document.document_id,
    file: document.name,
    sha256: document.sha256,
    page: wanted.page,
  };
  if (document.status === "processing" && document.page_count === null) {
    return { result: textResult(MESSAGES.stillProcessing, true), details };
  }
  const pages = pageCount(document) ?? 0;
  if (wanted.page > pages) return unknown;
  const row = getPages(context.db, document.document_id, wanted.page, wanted.page)[0];
  let text = document.status === "not_indexed"
    ? MESSAGES.noTextInDocument
    : !row || row.text.trim() === ""
    ? (row?.image_only ? CHATGPT_MESSAGES.imageOnly : MESSAGES.nothingOnPage)
    : row.text;
  const limit = LIMITS.readCharacters;
  if (text.length > limit) text = `${text.slice(0, limit)}\n${CHATGPT_MESSAGES.pageCut(limit)}`;
  const section = document.type === "docx"
    ? pageSection(context.db, document.document_id, wanted.page)
    : null;
  const body: FetchedPage = {
    id: formatPageId(document.document_id, wanted.page),
    title: pageTitle(document.name, wanted.page, section),
    text,
    url: pageUrl(context.consoleUrl ?? "", wanted),
    metadata: {
      document_id: document.document_id,
      document: document.name,
      folder: documentFolder(context.scope, document),
      type: document.type,
      page: wanted.page,
      pages,
      ...(document.pages_estimated ? { pages_estimated: true as const } : {}),
      ...(section ? { section } : {}),
      pages_to_view: document.pages_to_view,
      view_page_may_help: row?.marked === true || document.pages_to_view.includes(wanted.page),
    },
  };
  return { result: textResult(JSON.stringify(body)), details };
}

/** The ChatGPT shape's `fetch`. */
export const chatgptFetchTool: Tool = {
  name: "fetch",
  run(context, args) {
    try {
      return run(context, args);
    } catch (error) {
      if (error instanceof ArgumentError) {
        return { result: textResult(error.message, true), details: { id: args.id ?? null } };
      }
      throw error;
    }
  },
};
