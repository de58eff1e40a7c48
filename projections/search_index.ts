/**
 * The search index: every processed document's passages in SQLite FTS5, and
 * the queries the ranking of `src/search/lexical.ts` reads them through.
 *
 * Passages: a page is one passage; a page longer than {@linkcode MAX_PASSAGE_CHARS}
 * is split at paragraphs, then lines; a Word page gives one passage per chunk,
 * carrying its section. Speaker notes are indexed in their own column of the
 * slide's first passage; the excerpt stays the slide text (the notes are the
 * excerpt only when the slide has no text).
 *
 * Tables (all `search_`): `search_documents` (owner, folder, name, type of each
 * uploaded document, and how many passages and body tokens it has, for the
 * ranking's per-scope statistics), `search_passages` (the passages with their
 * original text, page, section, mark and body length in tokens), `search_fts`
 * (contentless FTS5 over the analyzed fields of `src/analysis/fields.ts`, with a
 * `scope` column of the scope tokens of `src/analysis/scope.ts`),
 * `search_vocab` (the index's terms with document and occurrence counts) and
 * `search_fts_sizes` (each passage's token count per column in the index),
 * both for the digest. Ranking lives in `src/search/`, which reads these
 * tables only through the queries exported here.
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
import { statement } from "./_statements.ts";
import { isUnspacedToken } from "../src/analysis/folding.ts";
import {
  type AnalysisOptions,
  analyze,
  DEFAULT_ANALYSIS,
  type LatinLanguage,
  latinLanguageOf,
  PART,
} from "../src/analysis/analysis.ts";
import { passageFields, type StoredDocument, type StoredPassage } from "../src/analysis/fields.ts";
import { passageScopeTokens, type SearchScope } from "../src/analysis/scope.ts";

export { MAX_PASSAGE_CHARS };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_analysis (id INTEGER PRIMARY KEY CHECK (id = 1), version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS search_documents (
  document_id TEXT PRIMARY KEY,
  person_id TEXT NOT NULL,
  folder_id TEXT,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  pages_estimated INTEGER NOT NULL DEFAULT 0,
  image_only_pages TEXT NOT NULL DEFAULT '[]',
  passages INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_documents_person ON search_documents (person_id, folder_id);
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
  notes TEXT,
  length INTEGER NOT NULL,
  language TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_passages_document ON search_passages (document_id, passage_id);
-- What the ranking's first stage reads of each of its thousands of candidates, apart from the passages'
-- text: a passage's row holds its text, so reading its length from the table touches a page per candidate.
CREATE INDEX IF NOT EXISTS search_passages_rank ON search_passages (passage_id, length, document_id);
CREATE INDEX IF NOT EXISTS search_passages_scope ON search_passages (person_id, folder_id);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5 (
  body, heading, notes, name, scope,
  content = '', contentless_delete = 1,
  tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_vocab USING fts5vocab (search_fts, 'row');
-- For the digest: each passage's token count per column as the full-text index holds it (without FTS5's
-- own bookkeeping, which depends on the order rows were written in).
CREATE VIEW IF NOT EXISTS search_fts_sizes AS SELECT id, sz FROM search_fts_docsize;
`;

/**
 * The index's layout: raised whenever its tables or what a row holds change
 * (2: per-language analysis and fields; 3: each passage's language, and the
 * ranking's covering index).
 */
const SCHEMA_VERSION = 3;

/**
 * Texts whose analysis stands for the analysis as a whole (stemming in each
 * language, Arabic and Persian, Chinese and Japanese, grouped numbers,
 * codes): when the analysis changes, its terms for these change with it,
 * and an index built by the older analysis is rebuilt (see {@linkcode analysisVersion}).
 */
const ANALYSIS_SAMPLES = [
  "The contracts were signed by the disbursing officers; running, runs, ran. Ĺéçòñ ﬁnance ÆTHER Straße",
  "Les élections générales ont été reportées aux calendes grecques",
  "Las negociaciones comerciales continuarán durante los próximos meses",
  "As instituições financeiras não divulgaram os relatórios trimestrais",
  "Die Verhandlungen über die jeweiligen Verträge wurden fortgesetzt; für Übergänge",
  "Pemerintah akan meningkatkan pembangunan infrastruktur di daerah",
  "по романам и контрактам, ёлка, наименование помещения",
  "والمساواة بين الجنسين في الانتخابات والمعلمون لا المشكلات",
  "کتاب‌ها و دانشگاه‌های بزرگتر ایران ۱۴۰۲",
  "深鹰集团的审计报告 服务网格 東京都の電車に乗りました 한국어 문장 ภาษาไทย",
  "39 921 700,00 and 1,234,567 and 1.000.000; IP54 Caa1 2cdda5c8 ISO-9001 e-mail",
];

/** The analyzed FTS columns of one passage (the replay benchmark writes the same). */
export function ftsColumns(
  passage: StoredPassage,
  document: StoredDocument,
  options: AnalysisOptions = DEFAULT_ANALYSIS,
): { body: string; heading: string; notes: string; name: string; length: number; language: LatinLanguage } {
  const fields = passageFields(passage, document);
  const language = latinLanguageOf(fields.body);
  const body = analyze(fields.body, options, language);
  return {
    body: body.join(" "),
    heading: fields.heading ? analyze(fields.heading, options, language).join(" ") : "",
    notes: fields.notes ? analyze(fields.notes, options, language).join(" ") : "",
    name: analyze(fields.name, options).join(" "),
    length: options.halfUnspacedLength ? bodyLength(body) : body.length,
    language,
  };
}

/**
 * A passage's length for BM25: its body's terms, a Chinese, Japanese, Korean
 * or Thai two-character token counting half, since such text gives a token
 * per character where other scripts give one per word (a Chinese word is
 * about two characters), and a page of Chinese would otherwise weigh as a
 * page several times as long.
 */
export function bodyLength(terms: readonly string[]): number {
  let unspaced = 0;
  let parts = 0;
  for (const term of terms) {
    if (isUnspacedToken(term)) unspaced++;
    else if (term.startsWith(PART)) parts++;
  }
  return terms.length - parts - Math.floor(unspaced / 2);
}

/** What a search shows of a passage: its page, section, mark (1: the page may miss a figure) and text. */
export interface PassageHitRow {
  page: number | null;
  section: string | null;
  marked: number;
  text: string;
}

interface DocumentRow {
  document_id: string;
  person_id: string;
  folder_id: string | null;
  name: string;
  type: string;
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
export const searchIndexProjection: Projection = createSearchIndexProjection(DEFAULT_ANALYSIS);

/**
 * The search index projection with an analysis of its own (the search
 * benchmark measures the analysis without some of its parts this way).
 */
export function createSearchIndexProjection(analysis: AnalysisOptions): Projection {
  return {
    name: "search_index",
    handles: HANDLES,
    tables: ["search_documents", "search_passages", "search_vocab", "search_fts_sizes"],
    init(db: DatabaseSync): void {
      const version = analysisVersion(analysis);
      dropOlderIndex(db, version);
      db.exec(SCHEMA);
      if (!db.prepare("SELECT 1 FROM search_analysis WHERE id = 1").get()) {
        db.prepare("INSERT INTO search_analysis (id, version) VALUES (1, ?)").run(version);
      }
    },
    apply(db: DatabaseSync, event: RecordedEvent): void {
      applyEvent(db, event, analysis);
    },
  };
}

/**
 * The version an index must carry to be searched with this code: the
 * layout ({@linkcode SCHEMA_VERSION}), a fingerprint of the analysis (FNV-1a
 * over the samples' terms, so a change in the analysis's code that changes
 * terms is caught without anyone bumping a number) and its options. Indexes
 * of another version are dropped and rebuilt from the log; the search
 * benchmark keys its cached indexes by it too.
 */
export function analysisVersion(analysis: AnalysisOptions = DEFAULT_ANALYSIS): string {
  let hash = 0x811c9dc5;
  for (const sample of ANALYSIS_SAMPLES) {
    for (const character of `${analyze(sample, analysis).join(" ")}\n`) {
      hash = Math.imul(hash ^ character.codePointAt(0)!, 0x01000193) >>> 0;
    }
  }
  const options = Object.entries(analysis).sort(([a], [b]) => (a < b ? -1 : 1));
  return `${SCHEMA_VERSION} ${hash.toString(16).padStart(8, "0")} ${
    JSON.stringify(Object.fromEntries(options))
  }`;
}

/**
 * Drops the tables of an index built with another analysis (or before
 * analyses were named: no `search_analysis` row) and forgets the
 * projection's checkpoint, so the projector rebuilds the index from the log
 * on start: its terms and lengths would not match the queries'.
 */
function dropOlderIndex(db: DatabaseSync, version: string): void {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").get();
  if (!exists) return;
  const named = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_analysis'").get()
    ? db.prepare("SELECT version FROM search_analysis WHERE id = 1").get() as { version: string } | undefined
    : undefined;
  if (named?.version === version) return;
  db.exec(
    `DROP TABLE IF EXISTS search_analysis; DROP VIEW IF EXISTS search_fts_sizes; DROP TABLE IF EXISTS search_vocab; DROP TABLE IF EXISTS search_fts;
    DROP TABLE IF EXISTS search_passages; DROP TABLE IF EXISTS search_documents;`,
  );
  db.prepare("DELETE FROM projection_checkpoints WHERE name = 'search_index'").run();
}

function applyEvent(db: DatabaseSync, event: RecordedEvent, analysis: AnalysisOptions): void {
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
      let passages = 0;
      let tokens = 0;
      for (const draft of passagesOf(event.data.pages)) {
        tokens += insertPassage(db, document, draft, analysis);
        passages++;
      }
      const imageOnly = event.data.pages.filter((page) => page.image_only).map((page) => page.page);
      statement(
        db,
        `UPDATE search_documents SET pages_estimated = ?, image_only_pages = ?, passages = ?, tokens = ?
         WHERE document_id = ?`,
      ).run(
        event.data.pages_estimated ? 1 : 0,
        JSON.stringify(imageOnly),
        passages,
        tokens,
        document.document_id,
      );
      return;
    }
    case "ProcessingFailed": {
      removePassages(db, event.data.document_id);
      statement(
        db,
        "UPDATE search_documents SET image_only_pages = '[]', passages = 0, tokens = 0 WHERE document_id = ?",
      ).run(event.data.document_id);
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
        indexPassage(db, passage, moved, analysis);
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
}

/** Passages and body tokens of a scope, from the per-document sums: the ranking's statistics. */
export function scopeStatistics(db: DatabaseSync, scope: SearchScope): { passages: number; tokens: number } {
  const documents = JSON.stringify(scope.documentIds);
  const where = scope.folderIds === null
    ? "person_id = ? AND (folder_id IS NOT NULL OR document_id IN (SELECT value FROM json_each(?)))"
    : `person_id = ? AND (folder_id IN (SELECT value FROM json_each(?))
         OR document_id IN (SELECT value FROM json_each(?)))`;
  const params: SQLInputValue[] = scope.folderIds === null
    ? [scope.personId, documents]
    : [scope.personId, JSON.stringify(scope.folderIds), documents];
  const row = statement(
    db,
    `SELECT coalesce(sum(passages), 0) AS passages, coalesce(sum(tokens), 0) AS tokens
     FROM search_documents WHERE ${where}`,
  ).get(...params) as { passages: number; tokens: number };
  return row;
}

/**
 * Whether the scope holds every passage of the index: a person's every folder, and no passage of another
 * person or outside a folder (three probes of `search_passages_scope`). Its scope tokens then match every
 * row, and the ranking's full-text queries may leave them out: the same rows, without stepping through a
 * list as long as the index beside each term's.
 */
export function scopeHoldsEveryPassage(db: DatabaseSync, scope: SearchScope): boolean {
  if (scope.folderIds !== null) return false;
  const row = statement(
    db,
    `SELECT EXISTS (SELECT 1 FROM search_passages WHERE person_id < ?1)
       OR EXISTS (SELECT 1 FROM search_passages WHERE person_id > ?1)
       OR EXISTS (SELECT 1 FROM search_passages WHERE person_id = ?1 AND folder_id IS NULL) AS outside`,
    { arrays: true },
  ).get(scope.personId) as unknown as [number];
  return row[0] === 0;
}

/** A full-text query of the ranking: an FTS5 expression over the analyzed columns and scope tokens. */
export interface FullTextQuery {
  match: string;
  /** At most this many passages. */
  limit: number;
  /** Only passages from this row id on (default 0: all). */
  fromRowid?: number;
  /** Only passages below this row id (default: all). */
  beforeRowid?: number;
}

/** The row ids of the passages matching a full-text query, newest first. */
export function matchingRowids(db: DatabaseSync, query: FullTextQuery): number[] {
  const rows = statement(
    db,
    "SELECT rowid FROM search_fts WHERE search_fts MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT ?",
    { arrays: true },
  ).all(
    query.match,
    query.fromRowid ?? 0,
    query.beforeRowid ?? Number.MAX_SAFE_INTEGER,
    query.limit,
  ) as unknown as Array<
    [number]
  >;
  return rows.map((row) => row[0]);
}

/** What the ranking's first stage reads of each candidate: passage id, document id, body length (in no order). */
export function candidateRows(
  db: DatabaseSync,
  passageIds: readonly number[],
): Array<[number, string, number]> {
  return statement(
    db,
    `SELECT passage_id, document_id, length FROM search_passages INDEXED BY search_passages_rank
     WHERE passage_id IN (SELECT value FROM json_each(?))`,
    { arrays: true },
  ).all(JSON.stringify(passageIds)) as unknown as Array<[number, string, number]>;
}

/** What the ranking re-scores a passage from: its stored text and language, its document's name and type. */
export interface RescoringRow {
  text: string;
  section: string | null;
  notes: string | null;
  language: LatinLanguage;
  name: string;
  type: string;
  page: number | null;
}

/** The row a passage is re-scored from, or undefined when the passage is gone. */
export function rescoringRow(db: DatabaseSync, passageId: number): RescoringRow | undefined {
  return statement(
    db,
    `SELECT p.text AS text, p.section AS section, p.notes AS notes, p.language AS language, d.name AS name,
       d.type AS type, p.page AS page
     FROM search_passages p JOIN search_documents d ON d.document_id = p.document_id WHERE p.passage_id = ?`,
  ).get(passageId) as RescoringRow | undefined;
}

/** Passages of one page are read at most this far on either side of a passage of it. */
const PAGE_REACH = 16;

/**
 * The other passages of a passage's page (same document, same page, next to it in reading order, at most
 * {@linkcode PAGE_REACH} on either side): passage id, document id, body length. A passage without a page
 * is its own page.
 */
export function pageNeighbours(
  db: DatabaseSync,
  passageId: number,
  documentId: string,
  page: number | null,
): Array<[number, string, number]> {
  if (page === null) return [];
  const rows = statement(
    db,
    `SELECT passage_id, document_id, length, page FROM search_passages
     WHERE passage_id BETWEEN ? AND ? ORDER BY passage_id`,
    { arrays: true },
  ).all(passageId - PAGE_REACH, passageId + PAGE_REACH) as unknown as Array<[number, string, number, number]>;
  const same = (row: [number, string, number, number]) => row[1] === documentId && row[3] === page;
  const at = rows.findIndex((row) => row[0] === passageId);
  if (at < 0) return [];
  let first = at;
  while (first > 0 && same(rows[first - 1]!) && rows[first - 1]![0] === rows[first]![0] - 1) first--;
  let last = at;
  while (last < rows.length - 1 && same(rows[last + 1]!) && rows[last + 1]![0] === rows[last]![0] + 1) last++;
  return rows.slice(first, last + 1).filter((row) => row[0] !== passageId).map(([id, doc, length]) =>
    [id, doc, length] as [number, string, number]
  );
}

/** What a search shows of one passage it found, or undefined when the passage is gone. */
export function passageHit(db: DatabaseSync, passageId: number): PassageHitRow | undefined {
  return statement(db, "SELECT page, section, marked, text FROM search_passages WHERE passage_id = ?")
    .get(passageId) as PassageHitRow | undefined;
}

/** The pages of a document that have no text, only a picture (search cannot find them). */
export function documentImageOnlyPages(db: DatabaseSync, documentId: string): number[] {
  const row = statement(db, "SELECT image_only_pages FROM search_documents WHERE document_id = ?")
    .get(documentId) as { image_only_pages: string } | undefined;
  return row ? JSON.parse(row.image_only_pages) as number[] : [];
}

function findDocument(db: DatabaseSync, documentId: string): DocumentRow | undefined {
  return statement(
    db,
    "SELECT document_id, person_id, folder_id, name, type FROM search_documents WHERE document_id = ?",
  ).get(documentId) as DocumentRow | undefined;
}

function documentPassages(db: DatabaseSync, documentId: string): PassageRow[] {
  return statement(db, "SELECT * FROM search_passages WHERE document_id = ? ORDER BY passage_id")
    .all(documentId) as unknown as PassageRow[];
}

/** Inserts and indexes one passage; returns its body's length in tokens. */
function insertPassage(
  db: DatabaseSync,
  document: DocumentRow,
  draft: PassageDraft,
  analysis: AnalysisOptions,
): number {
  const columns = ftsColumns(draft, document, analysis);
  const result = statement(
    db,
    `INSERT INTO search_passages (document_id, person_id, folder_id, page, chunk, section, marked, text, notes, length,
       language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    columns.length,
    columns.language,
  );
  writeFts(db, Number(result.lastInsertRowid), columns, document);
  return columns.length;
}

function indexPassage(
  db: DatabaseSync,
  passage: PassageRow,
  document: DocumentRow,
  analysis: AnalysisOptions,
): void {
  writeFts(db, passage.passage_id, ftsColumns(passage, document, analysis), document);
}

function writeFts(
  db: DatabaseSync,
  rowid: number,
  columns: ReturnType<typeof ftsColumns>,
  document: DocumentRow,
): void {
  statement(db, "INSERT INTO search_fts (rowid, body, heading, notes, name, scope) VALUES (?, ?, ?, ?, ?, ?)")
    .run(
      rowid,
      columns.body,
      columns.heading,
      columns.notes,
      columns.name,
      passageScopeTokens(document.document_id, document.folder_id, document.person_id),
    );
}

function removePassages(db: DatabaseSync, documentId: string): void {
  const remove = statement(db, "DELETE FROM search_fts WHERE rowid = ?");
  for (const passage of documentPassages(db, documentId)) remove.run(passage.passage_id);
  statement(db, "DELETE FROM search_passages WHERE document_id = ?").run(documentId);
}
