/**
 * The API's search route: the search tool's answer over the caller's
 * documents, or over what one of their agent keys can read.
 *
 * @module
 */
import { z } from "zod";
import { getPerson } from "../../projections/catalogue.ts";
import { consoleSearch } from "../console/search.ts";
import { json } from "../http/json.ts";
import { parseQuery, route } from "./route.ts";

const searchQuery = z.object({
  q: z.string().trim().min(1).max(500).describe("What to look for, in any language"),
  as: z.string().optional().describe(
    "An agent key's id: search only what that key can read, as its agent would",
  ),
  offset: z.coerce.number().int().min(0).max(80).default(0).describe(
    "Skip this many results: the answer's next_offset",
  ),
});
const searchAnswer = z.object({
  query: z.string(),
  as_key: z.object({ id: z.string(), name: z.string() }).nullable().describe("The key searched as, if any"),
  documents: z.array(z.object({
    document_id: z.string(),
    document: z.string().describe("The file name"),
    folder: z.string(),
    pages_estimated: z.literal(true).optional(),
    image_only_pages: z.array(z.number().int()).optional(),
    hits: z.array(z.object({
      page: z.number().int().optional(),
      section: z.string().optional(),
      view_page_may_help: z.literal(true).optional().describe("The page may hold a figure, chart or table"),
      excerpt: z.string().describe("The passage, with the matching words marked"),
    })),
  })).describe("The search tool's own answer: the best excerpts, grouped by document"),
  message: z.string().nullable().describe("The tool's sentence when there is nothing to show, or why not"),
  next_offset: z.number().int().nullable().describe("Pass it as offset for more results; null when done"),
  offset: z.number().int(),
}).describe("Audited as the person: a console search entry with the pages it showed");

/** `GET /api/search`. */
export const SEARCH_ROUTE = route("GET", "/api/search", {
  summary:
    "Search the caller's documents, or as one of their agent keys sees them: the search tool's excerpts, pages and marks",
  query: searchQuery,
  answer: searchAnswer,
  handle: async ({ caller, url }, s) => {
    const q = parseQuery(searchQuery, url);
    const result = await consoleSearch(s, getPerson(s.app.db, caller.personId)!, {
      query: q.q,
      asKeyId: q.as || null,
      offset: q.offset,
    });
    return json({
      query: result.query,
      as_key: result.asKey,
      documents: result.documents,
      message: result.message,
      next_offset: result.nextOffset,
      offset: result.offset,
    });
  },
});
