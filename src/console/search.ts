/**
 * Search in the console: the `search` tool itself, run over the person's own
 * documents or as one of their keys sees them, so the page shows exactly the
 * excerpts, pages and marks an agent gets. Each search is audited as the
 * person (`console search`), with the pages it showed.
 *
 * @module
 */
import { listFolders, rootDocumentIds } from "../../projections/catalogue.ts";
import type { AgentKey } from "../../projections/key_scopes.ts";
import type { Person } from "../../projections/catalogue.ts";
import { requireAgentKey } from "../domain/keys.ts";
import { type KeyScope, keyScope } from "../mcp/scope.ts";
import { mcpSettings } from "../mcp/settings.ts";
import { searchTool } from "../mcp/tools/search.ts";
import type { ConsoleDeps } from "./deps.ts";

/** One document of the results, as the `search` tool returns it. */
export interface SearchResultDocument {
  document_id: string;
  document: string;
  folder: string;
  pages_estimated?: true;
  image_only_pages?: number[];
  hits: Array<{ page?: number; section?: string; view_page_may_help?: true; excerpt: string }>;
}

/** What a console search came to. */
export interface ConsoleSearchResult {
  query: string;
  /** The key searched as, or null for the person's own documents. */
  asKey: { id: string; name: string } | null;
  documents: SearchResultDocument[];
  /** The tool's own sentence when there is nothing to show (or the query is refused). */
  message: string | null;
  /** Where the next page of results starts, when there is one. */
  nextOffset: number | null;
  offset: number;
}

/** The longest query the console sends (the search tool has its own cap). */
const MAX_QUERY = 500;

/** A scope covering every document of the person: all folders, and the files at the top. */
function personScope(services: ConsoleSearchDeps, person: Person): KeyScope {
  const folders = listFolders(services.app.db, person.person_id);
  const topFiles = rootDocumentIds(services.app.db, person.person_id);
  return {
    personId: person.person_id,
    personName: person.name,
    roots: folders.filter((folder) => folder.parent_id === null),
    folders,
    folderIds: folders.map((folder) => folder.folder_id),
    documentIds: topFiles,
    singleFileFolders: new Map(),
  };
}

/** What a console search reads and appends to (the API's search route has it too). */
export type ConsoleSearchDeps = Pick<ConsoleDeps, "app" | "mcpDeps">;

/** Runs a console search and records it in the audit. */
export async function consoleSearch(
  services: ConsoleSearchDeps,
  person: Person,
  input: { query: string; asKeyId: string | null; offset: number },
): Promise<ConsoleSearchResult> {
  const db = services.app.db;
  const query = input.query.slice(0, MAX_QUERY);
  const key: AgentKey | null = input.asKeyId ? requireAgentKey(db, person.person_id, input.asKeyId) : null;
  const scope = key ? keyScope(db, key) : personScope(services, person);
  const deps = services.mcpDeps;
  const outcome = await searchTool.run({
    db,
    // The search tool reads only the scope; the key is there for the context's shape.
    key: key ?? {
      key_id: "console",
      person_id: person.person_id,
      name: "console",
      description: "",
      can_read: { folders: scope.folderIds, documents: scope.documentIds },
      created_at: "",
      last4: "",
    },
    scope,
    settings: mcpSettings(deps.settings),
    ...(deps.semantic ? { semantic: deps.semantic } : {}),
    remember: (_id, compute) => compute(),
  }, { query, limit: 10, ...(input.offset > 0 ? { offset: input.offset } : {}) });
  const [first, second] = outcome.result.content;
  let documents: SearchResultDocument[] = [];
  let message: string | null = null;
  if (!outcome.result.isError && first?.type === "text" && first.text.startsWith("[")) {
    documents = JSON.parse(first.text) as SearchResultDocument[];
  } else if (first?.type === "text") {
    message = first.text;
  }
  const hits = documents.flatMap((doc) =>
    doc.hits.map((hit) => ({ document_id: doc.document_id, page: hit.page ?? null }))
  );
  const nextMatch = second?.type === "text" ? /offset (\d+)/.exec(second.text) : null;
  await services.app.append(`person-${person.person_id}`, [{
    type: "ConsoleSearched",
    data: {
      person_id: person.person_id,
      query,
      results: hits.length,
      as_key_id: key?.key_id ?? null,
      as_key_name: key?.name ?? null,
      hits: hits.slice(0, 50),
    },
    metadata: services.app.meta(`person-${person.person_id}`),
  }]);
  return {
    query,
    asKey: key ? { id: key.key_id, name: key.name } : null,
    documents,
    message,
    nextOffset: nextMatch ? Number(nextMatch[1]) : null,
    offset: input.offset,
  };
}
