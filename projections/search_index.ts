/**
 * The search index: every processed document's passages in SQLite FTS5, and
 * the query that finds the best passages in a person's scope.
 *
 * Passages: a page is one passage; a page longer than {@linkcode MAX_PASSAGE_CHARS}
 * is split at paragraphs, then lines; a Word page gives one passage per chunk,
 * carrying its section. Speaker notes are indexed in their own column of the
 * slide's first passage; the excerpt stays the slide text (the notes are the
 * excerpt only when the slide has no text).
 *
 * Tables (all `search_`): `search_documents` (owner, folder, name, type of each
 * uploaded document), `search_passages` (the passages with their original text,
 * page, section and mark), `search_fts` (contentless FTS5 over the folded text,
 * with a `scope` column of folder/document tokens, weight 0), and
 * `search_vocab` (the index's terms with document and occurrence counts) and
 * `search_fts_sizes` (each passage's token count per column in the index),
 * both for the digest.
 *
 * Events: a new `DocumentProcessed` replaces the document's passages;
 * `ProcessingFailed` removes them (the document is `not_indexed` then);
 * `ProcessingStarted` changes nothing, so a document being re-processed stays
 * findable by its last result; `PdfCopyMade` with `chunk_pages` moves each
 * chunk's passages to its real page.
 *
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { EventType, RecordedEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";
import { MAX_PASSAGE_CHARS, type PassageDraft, passagesOf } from "./_passages.ts";
import { queryTerms, quoteTerm, termExpression } from "./_search_terms.ts";
import { foldText } from "./_text_folding.ts";
import { statement } from "./_statements.ts";

export { MAX_PASSAGE_CHARS };

/** What to search and where. */
export interface SearchOptions {
  /** Only this person's documents are ever returned. */
  personId: string;
  /** Folders to search (already expanded to their descendants); null means every folder of the person. */
  folderIds: string[] | null;
  /** Single documents to search as well (the only way documents outside any folder are searched). */
  documentIds: string[];
  /** The user's words or question. */
  query: string;
  /** How many passages to return at most. */
  depth: number;
}

/** One passage found by {@linkcode searchPassages}. */
export interface SearchHit {
  document_id: string;
  /** Page of the passage (estimated for Word and text files until a PDF copy exists). */
  page: number | null;
  /** The heading above the passage (Word files), or null. */
  section: string | null;
  /** The page's text may miss a figure, chart or table. */
  marked: boolean;
  /** The passage's text as extracted. */
  text: string;
  /** The BM25 rank: lower is better (FTS5's sign). */
  rank: number;
}

/** Column weights of BM25: body, section, speaker notes, scope tokens. */
const WEIGHTS = "1.0, 1.5, 0.6, 0.0";
/** A scope with at most this many passages is searched with every term, through its scope tokens. */
const SMALL_SCOPE = 4000;
/** Document frequencies are counted up to this many passages. */
const DF_CAP = 4000;
/** The rarest terms whose passages together stay under this many drive a large search. */
const DRIVER_BUDGET = 6000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_documents (
  document_id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL,
  folder_id TEXT,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  pages_estimated INTEGER NOT NULL DEFAULT 0,
  image_only_pages TEXT NOT NULL DEFAULT '[]'
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_passages (
  passage_id INTEGER PRIMARY KEY,
  document_id TEXT NOT NULL,
  person_id TEXT NOT NULL,
  folder_id TEXT,
  page INTEGER,
  chunk INTEGER NOT NULL,
  section TEXT,
  marked INTEGER NOT NULL,
  text TEXT NOT NULL,
  notes TEXT
);
CREATE INDEX IF NOT EXISTS search_passages_document ON search_passages (document_id, passage_id);
CREATE INDEX IF NOT EXISTS search_passages_scope ON search_passages (person_id, folder_id);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5 (
  body, section, notes, scope,
  content = '', contentless_delete = 1,
  tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_vocab USING fts5vocab (search_fts, 'row');
-- For the digest: each passage's token count per column as the full-text index holds it (without FTS5's
-- own bookkeeping, which depends on the order rows were written in).
CREATE VIEW IF NOT EXISTS search_fts_sizes AS SELECT id, sz FROM search_fts_docsize;
`;

interface DocumentRow {
  document_id: string;
  person_id: string;
  folder_id: string | null;
}

interface PassageRow {
  passage_id: number;
  document_id: string;
  person_id: string;
  folder_id: string | null;
  page: number | null;
  chunk: number;
  section: string | null;
  marked: number;
  text: string;
  notes: string | null;
}

const HANDLES = [
  "DocumentUploaded",
  "DocumentProcessed",
  "ProcessingFailed",
  "DocumentMoved",
  "DocumentDeleted",
  "PdfCopyMade",
] as const satisfies readonly EventType[];

/** The search index projection. */
export const searchIndexProjection: Projection = {
  name: "search_index",
  handles: HANDLES,
  tables: ["search_documents", "search_passages", "search_vocab", "search_fts_sizes"],
  init(db: DatabaseSync): void {
    db.exec(SCHEMA);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    switch (event.type) {
      case "DocumentUploaded": {
        const { document_id, person_id, folder_id, name, type } = event.data;
        statement(
          db,
          `INSERT INTO search_documents (document_id, person_id, folder_id, name, type) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (document_id) DO UPDATE SET person_id = excluded.person_id, folder_id = excluded.folder_id,
             name = excluded.name, type = excluded.type`,
        ).run(document_id, person_id, folder_id, name, type);
        return;
      }
      case "DocumentProcessed": {
        const document = findDocument(db, event.data.document_id);
        if (!document) return;
        removePassages(db, document.document_id);
        for (const draft of passagesOf(event.data.pages)) insertPassage(db, document, draft);
        const imageOnly = event.data.pages.filter((page) => page.image_only).map((page) => page.page);
        statement(
          db,
          "UPDATE search_documents SET pages_estimated = ?, image_only_pages = ? WHERE document_id = ?",
        )
          .run(event.data.pages_estimated ? 1 : 0, JSON.stringify(imageOnly), document.document_id);
        return;
      }
      case "ProcessingFailed": {
        removePassages(db, event.data.document_id);
        statement(db, "UPDATE search_documents SET image_only_pages = '[]' WHERE document_id = ?")
          .run(event.data.document_id);
        return;
      }
      case "DocumentMoved": {
        const document = findDocument(db, event.data.document_id);
        if (!document) return;
        const moved = { ...document, folder_id: event.data.folder_id };
        statement(db, "UPDATE search_documents SET folder_id = ? WHERE document_id = ?")
          .run(moved.folder_id, moved.document_id);
        statement(db, "UPDATE search_passages SET folder_id = ? WHERE document_id = ?")
          .run(moved.folder_id, moved.document_id);
        for (const passage of documentPassages(db, moved.document_id)) {
          statement(db, "DELETE FROM search_fts WHERE rowid = ?").run(passage.passage_id);
          indexPassage(db, passage);
        }
        return;
      }
      case "DocumentDeleted": {
        removePassages(db, event.data.document_id);
        statement(db, "DELETE FROM search_documents WHERE document_id = ?").run(event.data.document_id);
        return;
      }
      case "PdfCopyMade": {
        const chunkPages = event.data.chunk_pages;
        if (!chunkPages || !findDocument(db, event.data.document_id)) return;
        const update = statement(db, "UPDATE search_passages SET page = ? WHERE passage_id = ?");
        for (const passage of documentPassages(db, event.data.document_id)) {
          const page = chunkPages[passage.chunk];
          if (page !== undefined && page !== passage.page) update.run(page, passage.passage_id);
        }
        statement(db, "UPDATE search_documents SET pages_estimated = 0 WHERE document_id = ?")
          .run(event.data.document_id);
        return;
      }
    }
  },
};

/**
 * The best passages for a query in a person's scope, best first, at most
 * `depth`. Ties are broken by document id, then reading order, so the same
 * search always gives the same order.
 *
 * The query's words are OR-ed (stop words dropped when other words remain)
 * and ranked by BM25. In a small scope every word is matched through the
 * scope's tokens. In a large one the rarest words find the candidates and the
 * common ones only add to their score, so a search does not rank every
 * passage holding a common word. When every word is common, the passages
 * holding all of them come first, and only the newest {@linkcode DF_CAP}
 * candidates are ranked. `rank` orders the hits within those tiers.
 */
export function searchPassages(db: DatabaseSync, options: SearchOptions): SearchHit[] {
  const depth = Math.max(0, Math.floor(options.depth));
  const terms = queryTerms(options.query);
  if (terms.length === 0 || depth === 0) return [];
  if (options.folderIds !== null && options.folderIds.length === 0 && options.documentIds.length === 0) {
    return [];
  }
  const scope = scopeFilter(options);
  const size = scopeSize(db, options);
  if (size <= SMALL_SCOPE) return loadHits(db, smallScopeSearch(db, terms, options, size, depth));
  const counted = terms
    .map((term, order) => ({ term, order, df: documentFrequency(db, termExpression(term)) }))
    .filter((entry) => entry.df > 0)
    .sort((a, b) => a.df - b.df || a.order - b.order);
  if (counted.length === 0) return [];
  if (counted[0]!.df >= DF_CAP) {
    return loadHits(db, commonWordsSearch(db, counted.map((entry) => entry.term), scope, depth));
  }
  const drivers: string[] = [];
  const boosts: string[] = [];
  let budget = 0;
  for (const { term, df } of counted) {
    if (df < DF_CAP && budget + df <= DRIVER_BUDGET) {
      drivers.push(term);
      budget += df;
    } else boosts.push(term);
  }
  const found = new Map<number, Ranked>();
  for (const hit of ranked(db, anyOf(drivers), scope, depth)) found.set(hit.passage_id, hit);
  if (boosts.length > 0) {
    for (const hit of ranked(db, `${anyOf(drivers)} AND ${anyOf(boosts)}`, scope, depth * 2)) {
      found.set(hit.passage_id, hit);
    }
  }
  return loadHits(db, [...found.values()].sort(byRank).slice(0, depth));
}

/** The pages of a document that have no text, only a picture (search cannot find them). */
export function documentImageOnlyPages(db: DatabaseSync, documentId: string): number[] {
  const row = statement(db, "SELECT image_only_pages FROM search_documents WHERE document_id = ?")
    .get(documentId) as { image_only_pages: string } | undefined;
  return row ? JSON.parse(row.image_only_pages) as number[] : [];
}

/**
 * A search in a scope of at most {@linkcode SMALL_SCOPE} passages, reached
 * through the scope's tokens. Words in fewer than {@linkcode DF_CAP} passages
 * of the whole index are ranked by BM25; a common word adds its inverse
 * document frequency within the scope to each passage holding it, so no
 * search reads the whole list of a common word's passages.
 */
function smallScopeSearch(
  db: DatabaseSync,
  terms: string[],
  options: SearchOptions,
  size: number,
  depth: number,
): Ranked[] {
  const scope = scopeFilter(options);
  const tokens = `(${scopeTokens(options).map(quoteTerm).join(" OR ")})`;
  const rare = terms.filter((term) => documentFrequency(db, termExpression(term)) < DF_CAP);
  const common = terms.filter((term) => !rare.includes(term));
  const found = new Map<number, Ranked>();
  if (rare.length > 0) {
    for (const hit of ranked(db, `${tokens} AND ${anyOf(rare)}`, scope, SMALL_SCOPE)) {
      found.set(hit.passage_id, hit);
    }
  }
  const holding = statement(
    db,
    `SELECT p.passage_id AS passage_id, p.document_id AS document_id FROM search_fts
     JOIN search_passages p ON p.passage_id = search_fts.rowid WHERE search_fts MATCH ? AND ${scope.sql}`,
  );
  for (const term of common) {
    const rows = holding.all(`${tokens} AND ${termExpression(term)}`, ...scope.params) as unknown as Ranked[];
    const idf = Math.log(1 + (size - rows.length + 0.5) / (rows.length + 0.5));
    for (const row of rows) {
      const hit = found.get(row.passage_id) ?? { ...row, rank: 0 };
      found.set(row.passage_id, { ...hit, rank: hit.rank - idf });
    }
  }
  return [...found.values()].sort(byRank).slice(0, depth);
}

/**
 * A search whose every word is in many passages: passages holding all the
 * words come first, then passages holding any of them; each tier is ranked
 * among its newest {@linkcode DF_CAP} candidates, so the cost stays bounded.
 */
function commonWordsSearch(db: DatabaseSync, terms: string[], scope: ScopeFilter, depth: number): Ranked[] {
  const tiers = terms.length > 1 ? [terms.map(termExpression).join(" AND "), anyOf(terms)] : [anyOf(terms)];
  const found = new Map<number, Ranked>();
  for (const match of tiers) {
    if (found.size >= depth) break;
    const floor = statement(
      db,
      "SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
    ).get(match, DF_CAP - 1) as { rowid: number } | undefined;
    for (const hit of ranked(db, match, scope, depth, floor?.rowid ?? 0)) {
      if (!found.has(hit.passage_id)) found.set(hit.passage_id, hit);
    }
  }
  return [...found.values()].slice(0, depth);
}

function anyOf(terms: readonly string[]): string {
  return `(${terms.map(termExpression).join(" OR ")})`;
}

interface ScopeFilter {
  sql: string;
  params: SQLInputValue[];
}

function scopeFilter(options: SearchOptions): ScopeFilter {
  const documents = JSON.stringify(options.documentIds);
  if (options.folderIds === null) {
    return {
      sql:
        "p.person_id = ? AND (p.folder_id IS NOT NULL OR p.document_id IN (SELECT value FROM json_each(?)))",
      params: [options.personId, documents],
    };
  }
  return {
    sql: `p.person_id = ? AND (p.folder_id IN (SELECT value FROM json_each(?))
      OR p.document_id IN (SELECT value FROM json_each(?)))`,
    params: [options.personId, JSON.stringify(options.folderIds), documents],
  };
}

/** The number of passages in scope, counted up to one past {@linkcode SMALL_SCOPE}. */
function scopeSize(db: DatabaseSync, options: SearchOptions): number {
  const limit = SMALL_SCOPE + 1;
  let size = 0;
  const count = (sql: string, ...params: SQLInputValue[]) =>
    (statement(db, `SELECT count(*) AS n FROM (${sql} LIMIT ?)`).get(...params, limit - size) as {
      n: number;
    }).n;
  if (options.folderIds === null) {
    size += count(
      "SELECT 1 FROM search_passages WHERE person_id = ? AND folder_id IS NOT NULL",
      options.personId,
    );
  }
  for (const folderId of options.folderIds ?? []) {
    if (size >= limit) return size;
    size += count(
      "SELECT 1 FROM search_passages WHERE person_id = ? AND folder_id = ?",
      options.personId,
      folderId,
    );
  }
  for (const documentId of options.documentIds) {
    if (size >= limit) return size;
    size += count(
      // "+" keeps the planner on the document index: a person may have many passages.
      "SELECT 1 FROM search_passages WHERE document_id = ? AND +person_id = ?",
      documentId,
      options.personId,
    );
  }
  return size;
}

/** How many passages match, counted up to {@linkcode DF_CAP}. */
function documentFrequency(db: DatabaseSync, match: string): number {
  const row = statement(
    db,
    "SELECT count(*) AS n FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT ?)",
  ).get(match, DF_CAP) as { n: number };
  return row.n;
}

interface Ranked {
  passage_id: number;
  document_id: string;
  rank: number;
}

/** The best `limit` passages in scope matching `match`, from row id `fromRowid` on. */
function ranked(db: DatabaseSync, match: string, scope: ScopeFilter, limit: number, fromRowid = 0): Ranked[] {
  return statement(
    db,
    `SELECT p.passage_id AS passage_id, p.document_id AS document_id, f.rank AS rank
     FROM (SELECT rowid, bm25(search_fts, ${WEIGHTS}) AS rank FROM search_fts
           WHERE search_fts MATCH ? AND rowid >= ?) AS f
     JOIN search_passages p ON p.passage_id = f.rowid
     WHERE ${scope.sql}
     ORDER BY f.rank, p.document_id, p.passage_id LIMIT ?`,
  ).all(match, fromRowid, ...scope.params, limit) as unknown as Ranked[];
}

/** The hits of ranked passages, in their order. */
function loadHits(db: DatabaseSync, found: Ranked[]): SearchHit[] {
  const load = statement(db, "SELECT page, section, marked, text FROM search_passages WHERE passage_id = ?");
  return found.map(({ passage_id, document_id, rank }) => {
    const row = load.get(passage_id) as {
      page: number | null;
      section: string | null;
      marked: number;
      text: string;
    };
    return {
      document_id,
      page: row.page,
      section: row.section,
      marked: row.marked === 1,
      text: row.text,
      rank,
    };
  });
}

function byRank(a: Ranked, b: Ranked): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.document_id !== b.document_id) return a.document_id < b.document_id ? -1 : 1;
  return a.passage_id - b.passage_id;
}

function findDocument(db: DatabaseSync, documentId: string): DocumentRow | undefined {
  return statement(db, "SELECT document_id, person_id, folder_id FROM search_documents WHERE document_id = ?")
    .get(documentId) as DocumentRow | undefined;
}

function documentPassages(db: DatabaseSync, documentId: string): PassageRow[] {
  return statement(db, "SELECT * FROM search_passages WHERE document_id = ? ORDER BY passage_id")
    .all(documentId) as unknown as PassageRow[];
}

function insertPassage(db: DatabaseSync, document: DocumentRow, draft: PassageDraft): void {
  const result = statement(
    db,
    `INSERT INTO search_passages (document_id, person_id, folder_id, page, chunk, section, marked, text, notes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    document.document_id,
    document.person_id,
    document.folder_id,
    draft.page,
    draft.chunk,
    draft.section,
    draft.marked ? 1 : 0,
    draft.text,
    draft.notes,
  );
  indexPassage(db, {
    ...draft,
    passage_id: Number(result.lastInsertRowid),
    document_id: document.document_id,
    person_id: document.person_id,
    folder_id: document.folder_id,
    marked: draft.marked ? 1 : 0,
  });
}

function indexPassage(db: DatabaseSync, passage: PassageRow): void {
  const tokens = [documentToken(passage.document_id)];
  if (passage.folder_id !== null) {
    tokens.push(folderToken(passage.folder_id), inFolderToken(passage.person_id));
  }
  statement(db, "INSERT INTO search_fts (rowid, body, section, notes, scope) VALUES (?, ?, ?, ?, ?)").run(
    passage.passage_id,
    foldText(passage.text),
    passage.section ? foldText(passage.section) : "",
    passage.notes ? foldText(passage.notes) : "",
    tokens.join(" "),
  );
}

function removePassages(db: DatabaseSync, documentId: string): void {
  const remove = statement(db, "DELETE FROM search_fts WHERE rowid = ?");
  for (const passage of documentPassages(db, documentId)) remove.run(passage.passage_id);
  statement(db, "DELETE FROM search_passages WHERE document_id = ?").run(documentId);
}

/** The scope tokens a search in `options` matches: its folders (or the person's "in a folder") and documents. */
function scopeTokens(options: SearchOptions): string[] {
  const tokens = options.folderIds === null
    ? [inFolderToken(options.personId)]
    : options.folderIds.map(folderToken);
  return [...tokens, ...options.documentIds.map(documentToken)];
}

// Scope tokens start with a private-use character that queries never hold
// (see queryTerms), so no word meets them and no column filter is needed;
// then digits only, which the porter stemmer leaves alone: a kind digit and
// three digits per UTF-8 byte of the id.
function inFolderToken(personId: string): string {
  return `\ue0001${digits(personId)}`;
}

function folderToken(folderId: string): string {
  return `\ue0002${digits(folderId)}`;
}

function documentToken(documentId: string): string {
  return `\ue0003${digits(documentId)}`;
}

function digits(id: string): string {
  return [...new TextEncoder().encode(id)].map((byte) => String(byte).padStart(3, "0")).join("");
}
