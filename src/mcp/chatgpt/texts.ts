/**
 * Every text the ChatGPT-shaped server (`/chatgpt/mcp`) sends, in one place:
 * its instructions, the descriptions and titles of `search` and `fetch`, and
 * the messages they answer with. Written in the reference's voice, with the
 * key's name and description in them, so the model knows what it searches.
 * The tools' shapes are OpenAI's ("Building MCP servers for ChatGPT and API
 * integrations", https://developers.openai.com/api/docs/mcp).
 *
 * @module
 */
import { ARGUMENT_TEXTS, type KeyTexts, LIMITS } from "../texts.ts";

/** How many pages `search` returns: enough for deep research, the reference's largest `limit`. */
export const SEARCH_RESULTS = LIMITS.searchLimitMax;

function withDescription(lead: string, description: string): string {
  if (description === "") return `${lead}.`;
  return /[.!?]$/.test(description) ? `${lead}: ${description}` : `${lead}: ${description}.`;
}

/** The instructions of this shape: the key's name, its description, and a fixed paragraph. */
export function chatgptInstructions(key: KeyTexts): string {
  const lines = [`${key.name} — a document store you can search.`];
  if (key.description !== "") lines.push(key.description);
  lines.push(
    "Use `search` first; it returns the best-matching pages, best first, each with an `id`. Use `fetch` with an id from this server's `search` to read that page's text, with its folder, the document's page count and the pages whose text may miss a figure, chart or table. Each result's `url` opens the page in Sergo's console, for a person who may see it.",
  );
  return lines.join("\n");
}

/** The `search` tool's description. */
export function chatgptSearchDescription(key: KeyTexts): string {
  return `${
    withDescription(`Search ${key.name}`, key.description)
  } Returns the ${SEARCH_RESULTS} best-matching pages at most, best first — at most half of them from one document — as JSON: \`results\`, each with an \`id\` to \`fetch\`, a \`title\` (the file name and page, and the section in Word files) and a \`url\` that opens the page in Sergo's console. \`results\` is empty when nothing matched. Use \`fetch\` to read a page's text.`;
}

/** The `fetch` tool's description. */
export function chatgptFetchDescription(key: KeyTexts): string {
  return `Read one page of a document from ${key.name} — use an id from ${key.name}'s \`search\`. Returns the page's \`text\`, its \`title\` and \`url\`, and \`metadata\`: the folder, the page, \`pages\` (how many the document has), \`pages_to_view\` (pages whose text may miss a figure, chart or table) and \`view_page_may_help\` (true when this page is one of them — its \`url\` shows the page as a picture). Fetch the ids of the pages next to it (the same document id with another page number) to read around it.`;
}

/** The tools' titles (`annotations.title`). */
export const CHATGPT_TITLES = {
  search: (key: KeyTexts): string => `Search ${key.name}`,
  fetch: (key: KeyTexts): string => `Read a page from ${key.name}`,
} as const;

/** Argument descriptions, fixed. */
export const CHATGPT_ARGUMENT_TEXTS = {
  query: ARGUMENT_TEXTS.query,
  id: "The id of a result from `search`, such as xM5gW8NZ:18 (a document id, a colon and a page)",
} as const;

/** The messages of this shape that the reference does not have. */
export const CHATGPT_MESSAGES = {
  giveId: "Give the `id` of a result from `search`.",
  imageOnly: "(no text, only a picture — the page's url shows it)",
  pageCut: (limit: number): string =>
    `[This page is longer than ${
      limit.toLocaleString("en-US")
    } characters and was cut here; the page's url shows the whole page.]`,
} as const;

/** A result's title: `<file name> — page N`, with the section in Word files. */
export function pageTitle(fileName: string, page: number, section: string | null): string {
  return section ? `${fileName} — page ${page} (${section})` : `${fileName} — page ${page}`;
}
