/**
 * Every text the MCP server sends, in one place, to read side by side with
 * `docs/reference/sergo-mcp-reference.txt`: the instructions, the four tool
 * descriptions and input schemas, and every message a tool answers with.
 *
 * The key's name, description and folder names are written into some of
 * them; everything else is fixed, word for word.
 *
 * @module
 */

/** What of a key goes into the texts. */
export interface KeyTexts {
  /** The key's name, such as `energy-outlooks`. */
  name: string;
  /** The key's description (may be empty). */
  description: string;
  /** Names of the folders the key reads (its own folders, not the ones inside them). */
  folderNames: readonly string[];
}

/** How many folder names a tool description lists before it ends with `…`. */
export const MAX_FOLDER_NAMES = 20;

/** The fixed paragraph of the instructions on the order to use the tools. */
export const INSTRUCTIONS_PARAGRAPH =
  "Use `search` first; it returns the best-matching excerpts, grouped by document. Use `read_document` with an id from this server's `search` to read more of one document — a page, the pages around an excerpt, or the whole. Use `list_documents` to see what is here without searching, or when a search finds nothing. Use `view_page` to look at a page as a picture when its text is missing or a table, chart or figure matters — it costs more tokens than text.";

/** The instructions of `initialize`: the key's name, its description, and the fixed paragraph. */
export function instructions(key: KeyTexts): string {
  const lines = [`${key.name} — a document store you can search.`];
  if (key.description !== "") lines.push(key.description);
  lines.push(INSTRUCTIONS_PARAGRAPH);
  return lines.join("\n");
}

function withDescription(lead: string, description: string): string {
  if (description === "") return `${lead}.`;
  return /[.!?]$/.test(description) ? `${lead}: ${description}` : `${lead}: ${description}.`;
}

/** The `search` tool's description. */
export function searchDescription(key: KeyTexts): string {
  return `${
    withDescription(`Search ${key.name}`, key.description)
  } Returns the best-matching excerpts — at most half of them from one document — grouped by document, with the document id, name and folder, and each excerpt's page (and section, in Word files). \`pages_estimated: true\` on a document means its page numbers are estimates — \`read_document\` takes them, \`view_page\` may show other pages. \`view_page_may_help: true\` on an excerpt means the text of that page may miss a figure, chart or table — \`view_page\` shows the page. \`image_only_pages\` lists pages of that document with no text, only a picture, which search cannot find. When the excerpts do not answer, the answer may be on one of those, or on the pages next to an excerpt (\`read_document\` with \`page\` and \`to_page\`).`;
}

/** The `list_documents` tool's description. */
export function listDocumentsDescription(key: KeyTexts): string {
  return `List the documents in ${key.name} — newest first, with the id, name, folder, type, page count and the pages to view (figures or tables the text does not carry) of each. Use it to see what is here without searching, or when a search finds nothing. Documents marked not_indexed have no text to search yet; \`pages_estimated\` means the page count and numbers are estimates.`;
}

/** The `read_document` tool's description. */
export function readDocumentDescription(key: KeyTexts): string {
  return `Read the text of a document from ${key.name} — use an id from ${key.name}'s \`search\` or \`list_documents\`. Returns its name, folder, how many pages it has, and the text: one page when \`page\` is given, pages \`page\` to \`to_page\` when both are given (such as the pages around a search excerpt), otherwise the whole document up to a limit (then it says up to which page it got). \`pages_to_view\` lists pages whose text may miss a figure, chart or table — use \`view_page\` on those when they matter.`;
}

/** The `view_page` tool's description. */
export function viewPageDescription(key: KeyTexts): string {
  return `Look at one page of a document from ${key.name} as a picture (or a one-page PDF) — for pages where \`read_document\` gives little or no text, or when a table, chart or figure matters. Costs more tokens than text, so read the text first. Only for PDFs and files with a PDF copy.`;
}

/**
 * The tools' titles (`annotations.title`), sent only where an install turns
 * them on (`SERGO_MCP_TOOL_TITLES`): the reference's `tools/list` has none.
 */
export const TOOL_TITLES = {
  search: (key: KeyTexts): string => `Search ${key.name}`,
  list_documents: (key: KeyTexts): string => `List the documents in ${key.name}`,
  read_document: (key: KeyTexts): string => `Read a document from ${key.name}`,
  view_page: (key: KeyTexts): string => `View a page from ${key.name}`,
} as const;

/** The description of the `folders` argument of `search` and `list_documents`. */
export function foldersArgumentDescription(key: KeyTexts, verb: "search" | "list"): string {
  if (key.folderNames.length === 0) return "This key reads single files, not folders — leave this out";
  return `Only ${verb} these folders, by name: ${
    folderList(key.folderNames)
  } — or any folder inside them, by its own name`;
}

/** Folder names joined with commas, the first {@linkcode MAX_FOLDER_NAMES}, then `…`. */
export function folderList(names: readonly string[]): string {
  const shown = names.slice(0, MAX_FOLDER_NAMES).join(", ");
  return names.length > MAX_FOLDER_NAMES ? `${shown}, …` : shown;
}

/** Argument descriptions, fixed. */
export const ARGUMENT_TEXTS = {
  query: "What to look for — plain words or a question",
  searchLimit: "How many excerpts to return (at most half of them from one document)",
  searchOffset: "Skip this many excerpts — the result says the offset of the next ones when there are more",
  listOffset: "Skip this many — use `next_offset` from the last result",
  readDocumentId: "The id from a search result",
  readPage: "One page's text, or the first page with `to_page` — leave out for the whole document",
  readToPage: "With `page`: read through this page too",
  viewDocumentId: "The id from a search result or list_documents",
  viewPage:
    "The page to look at — usually one marked `view_page_may_help`, or in `image_only_pages` or `pages_to_view`",
  viewFormat: "image (PNG) works everywhere; pdf keeps the text layer",
} as const;

/** The limits the server fixes. */
export const LIMITS = {
  searchLimitDefault: 10,
  searchLimitMax: 20,
  searchOffsetMax: 80,
  listLimitDefault: 50,
  listLimitMax: 100,
  readCharacters: 24_000,
} as const;

/** Every message a tool answers with, word for word where the reference gives it. */
export const MESSAGES = {
  nothingMatched: "Nothing matched.",
  nothingPast: "Nothing past this point.",
  giveQuery: "Give a query to search for.",
  moreExcerpts: (offset: number): string => `More excerpts past these: search again with offset ${offset}.`,
  noFolder: (name: string, roots: readonly string[], inside: readonly string[]): string =>
    inside.length === 0
      ? `No folder named '${name}' here. Use one of: ${folderList(roots)}`
      : `No folder named '${name}' here. Use one of: ${folderList(roots)} — or a folder inside them: ${
        folderList(inside)
      }`,
  noFolderSingleFiles: (name: string): string =>
    `No folder named '${name}' here — this key reads single files, not folders. Leave folders out.`,
  noDocuments: "No documents here.",
  notFound: "Not found, or not yours to see — the two are deliberately indistinguishable",
  pageCount: (pages: number): string => `This document has ${pages} ${pages === 1 ? "page" : "pages"}`,
  toPageBeforePage: "`to_page` must not be before `page`",
  toPageWithoutPage: "`to_page` needs `page` too — give both to read a range of pages",
  stillProcessing:
    "This document is still being processed, so its text is not ready yet — try again in a minute.",
  nothingOnPage: "(nothing on this page)",
  noTextInDocument: "(no text in this document)",
  viewPageMayHelp: "This page's text may miss a figure, chart or table — `view_page` shows it",
  headingMarked: "view_page may help — the text may miss a figure, chart or table",
  headingImageOnly: "no text, only a picture — view_page shows it",
  moreWhole: (pages: string): string => `${pages} not included — ask for a page to read on`,
  moreRange: (pages: string): string => `${pages} not included — ask for them`,
  pageCut: (limit: number): string =>
    `[This page is longer than ${
      limit.toLocaleString("en-US")
    } characters and was cut here; the rest of it cannot be read as text — \`view_page\` shows the whole page.]`,
  noPageView:
    "No page view for this file — it was read without a PDF copy. A person can make one in the console (Make a PDF copy).",
  pdfCopyPending:
    "The PDF copy of this file is still being made, so its pages cannot be shown yet — try again in a minute, or read the text with `read_document`.",
  pageNotDrawn: (reason: string): string => `This page could not be drawn: ${reason}`,
  viewCaption: (file: string, page: number, pages: number): string => `${file} — page ${page} of ${pages}`,
  noTool: (name: string): string => `No tool named '${name}'.`,
} as const;

/** The audit actions of the reference's audit table. */
export const AUDIT_ACTIONS = {
  search: "mcp search",
  list_documents: "mcp listing",
  read_document: "mcp text read",
  view_page: "mcp page viewed",
} as const;
