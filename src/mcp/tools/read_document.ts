/**
 * `read_document`: one page, a range of pages, or the whole document by
 * whole pages up to 24,000 characters.
 *
 * @module
 */
import { type DocumentRow, getDocument, getPages, type PageRow } from "../../../projections/catalogue.ts";
import { ArgumentError, type Arguments, documentIdArgument, integerArgument } from "../arguments.ts";
import { documentFolder, inScope } from "../scope.ts";
import { LIMITS, MESSAGES } from "../texts.ts";
import { pageCount, textResult, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";

function span(from: number, to: number): string {
  return from === to ? `${from}` : `${from}-${to}`;
}

function pagesWord(from: number, to: number): string {
  return from === to ? `Page ${from}` : `Pages ${from}-${to}`;
}

/**
 * A line of page text that would read as a page heading: three or more dashes
 * (ASCII or a dash look-alike), then `page`, at the start of a line.
 */
const LIKE_A_HEADING =
  /^([ \t\u00a0]*)(?=[-\u2010-\u2015\u2212\ufe58\ufe63\uff0d]{3,}[ \t\u00a0]*page\b)/gimu;

/**
 * Page text as it goes under a heading: a line that would look like a heading
 * (`--- page 3 ---`) gets a backslash in front (`\--- page 3 ---`), so a
 * line that starts with `--- page` in a range's text is always Sergo's own
 * heading, never the document's words (a scan or a model's transcription can
 * say anything).
 */
export function escapeHeadingLookalikes(text: string): string {
  return text.replace(LIKE_A_HEADING, "$1\\");
}

/** A page under its heading, with the marks the reference names. */
export function pageWithHeading(page: PageRow): string {
  const mark = page.image_only
    ? ` (${MESSAGES.headingImageOnly})`
    : page.marked
    ? ` (${MESSAGES.headingMarked})`
    : "";
  const text = page.text.trim() === ""
    ? (page.image_only ? "" : MESSAGES.nothingOnPage)
    : escapeHeadingLookalikes(page.text);
  return text === "" ? `--- page ${page.page}${mark} ---` : `--- page ${page.page}${mark} ---\n${text}`;
}

/** Pages from `from` to `to` under headings, whole pages up to the limit (a first page longer than it is cut). */
function gather(pages: readonly PageRow[], limit: number): { text: string; last: number } {
  let text = "";
  let last = 0;
  for (const page of pages) {
    const piece = pageWithHeading(page);
    const joined = text === "" ? piece : `${text}\n\n${piece}`;
    if (joined.length > limit) {
      if (text === "") {
        return { text: `${piece.slice(0, limit)}\n${MESSAGES.pageCut(limit)}`, last: page.page };
      }
      break;
    }
    text = joined;
    last = page.page;
  }
  return { text, last };
}

function run(context: ToolContext, args: Arguments): ToolOutcome {
  const documentId = documentIdArgument(args);
  const page = integerArgument(args, "page", { min: 1 });
  const toPage = integerArgument(args, "to_page", { min: 1 });
  const document = getDocument(context.db, documentId);
  if (!inScope(context.scope, document)) {
    return { result: textResult(MESSAGES.notFound, true), details: { document_id: documentId } };
  }
  const details: Record<string, unknown> = {
    document_id: documentId,
    file: document.name,
    sha256: document.sha256,
  };
  const fail = (message: string): ToolOutcome => ({ result: textResult(message, true), details });
  if (toPage !== undefined && page === undefined) return fail(MESSAGES.toPageWithoutPage);
  if (page !== undefined && toPage !== undefined && toPage < page) return fail(MESSAGES.toPageBeforePage);
  if (document.status === "processing" && document.page_count === null) return fail(MESSAGES.stillProcessing);
  const pages = pageCount(document) ?? 0;
  const notIndexed = document.status === "not_indexed";
  // A document without text has none on any page; before its copy exists its page count is unknown.
  if (page !== undefined && page > pages && !(notIndexed && pages === 0)) {
    return fail(MESSAGES.pageCount(pages));
  }
  const head = {
    document: document.name,
    folder: documentFolder(context.scope, document),
  };
  if (notIndexed) {
    const body = {
      ...head,
      ...(page !== undefined && toPage === undefined ? { page } : {}),
      pages,
      pages_to_view: document.pages_to_view,
      text: MESSAGES.noTextInDocument,
    };
    const audited = page === undefined ? "all pages" : `pages ${span(page, toPage ?? page)} of ${pages}`;
    return {
      result: textResult(JSON.stringify(body)),
      details: page !== undefined && toPage === undefined
        ? { ...details, page }
        : { ...details, pages: audited },
    };
  }
  const tail = (d: DocumentRow) => ({
    ...(d.pages_estimated ? { pages_estimated: true as const } : {}),
  });
  const limit = LIMITS.readCharacters;

  if (page !== undefined && toPage === undefined) {
    const row = getPages(context.db, document.document_id, page, page)[0];
    let text = row && row.text.trim() !== "" ? row.text : MESSAGES.nothingOnPage;
    if (text.length > limit) text = `${text.slice(0, limit)}\n${MESSAGES.pageCut(limit)}`;
    const body = {
      ...head,
      page,
      pages,
      ...tail(document),
      pages_to_view: document.pages_to_view,
      ...(row?.marked ? { view_page_may_help: MESSAGES.viewPageMayHelp } : {}),
      text,
    };
    return { result: textResult(JSON.stringify(body)), details: { ...details, page } };
  }

  const from = page ?? 1;
  const to = Math.min(toPage ?? pages, pages);
  const rows = pages === 0 ? [] : getPages(context.db, document.document_id, from, to);
  if (page === undefined && rows.every((row) => row.text.trim() === "" && !row.image_only)) {
    const body = {
      ...head,
      pages,
      ...tail(document),
      pages_to_view: document.pages_to_view,
      text: MESSAGES.noTextInDocument,
    };
    return { result: textResult(JSON.stringify(body)), details: { ...details, pages: "all pages" } };
  }
  const { text, last } = gather(rows, limit);
  const complete = last >= to;
  const read = span(from, last);
  const more = complete ? {} : {
    more: page === undefined
      ? MESSAGES.moreWhole(pagesWord(last + 1, to))
      : MESSAGES.moreRange(pagesWord(last + 1, to)),
  };
  const body = {
    ...head,
    pages,
    ...tail(document),
    ...(page !== undefined || !complete ? { pages_read: read } : {}),
    pages_to_view: document.pages_to_view,
    text,
    ...more,
  };
  const audited = page === undefined && complete ? "all pages" : `pages ${read} of ${pages}`;
  return { result: textResult(JSON.stringify(body)), details: { ...details, pages: audited } };
}

/** The `read_document` tool. */
export const readDocumentTool: Tool = {
  name: "read_document",
  run(context, args) {
    try {
      return run(context, args);
    } catch (error) {
      if (error instanceof ArgumentError) {
        return {
          result: textResult(error.message, true),
          details: { document_id: args.document_id ?? null },
        };
      }
      throw error;
    }
  },
};
