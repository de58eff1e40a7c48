/**
 * The passage vectors of the semantic search: one row per document with the
 * vectors its last `PassagesEmbedded` event recorded (packed as
 * `src/search/vectors.ts` packs them), what is embedded for each passage, and
 * the queries the vector search reads (the scope's documents, the vectors of
 * a model, a passage by its place in its document).
 *
 * Events: `PassagesEmbedded` replaces the document's row when the digest of
 * the document's indexed passages is the one the vectors were made from (so a
 * document processed again since keeps no stale vectors, and replay needs no
 * model); `DocumentProcessed`, `ProcessingFailed` and `DocumentDeleted` drop
 * the row, since the passages it describes are gone.
 *
 * This projection reads `search_passages` of the search index, which the
 * projector applies first. `search_vector_changes` counts the changes to the
 * rows, so a search process knows when the vectors it keeps in memory are stale.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { EventType, RecordedEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";
import { statement } from "./_statements.ts";
import type { SearchScope } from "../src/analysis/scope.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_vector_sets (
  document_id TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  dimensions INTEGER NOT NULL,
  passages INTEGER NOT NULL,
  text_sha256 TEXT NOT NULL,
  vectors BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_vector_sets_model ON search_vector_sets (model);
CREATE TABLE IF NOT EXISTS search_vector_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO search_vector_changes (id, n) VALUES (1, 0);
`;

const HANDLES = [
  "PassagesEmbedded",
  "DocumentProcessed",
  "ProcessingFailed",
  "DocumentDeleted",
] as const satisfies readonly EventType[];

/** The passage vectors projection. */
export const searchVectorsProjection: Projection = {
  name: "search_vectors",
  handles: HANDLES,
  tables: ["search_vector_sets"],
  init(db: DatabaseSync): void {
    db.exec(SCHEMA);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    switch (event.type) {
      case "PassagesEmbedded": {
        const { document_id, model, dimensions, passages, text_sha256, vectors } = event.data;
        const current = passageInputs(db, document_id);
        if (current.sha256 !== text_sha256 || current.texts.length !== passages) return;
        const row = vectorRow(vectors, passages, dimensions);
        if (row === null) return;
        statement(
          db,
          `INSERT INTO search_vector_sets (document_id, model, dimensions, passages, text_sha256, vectors)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (document_id) DO UPDATE SET model = excluded.model, dimensions = excluded.dimensions,
             passages = excluded.passages, text_sha256 = excluded.text_sha256, vectors = excluded.vectors`,
        ).run(document_id, model, dimensions, passages, text_sha256, row);
        changed(db);
        return;
      }
      case "DocumentProcessed":
      case "ProcessingFailed":
      case "DocumentDeleted":
        if (
          statement(db, "DELETE FROM search_vector_sets WHERE document_id = ?").run(event.data.document_id)
            .changes > 0
        ) changed(db);
        return;
    }
  },
};

function changed(db: DatabaseSync): void {
  statement(db, "UPDATE search_vector_changes SET n = n + 1 WHERE id = 1").run();
}

/** Documents with indexed passages but no vectors of `model` yet, by id, at most `limit`. */
export function documentsWithoutVectors(db: DatabaseSync, model: string, limit: number): string[] {
  return (statement(
    db,
    `SELECT d.document_id AS document_id FROM search_documents d
     WHERE EXISTS (SELECT 1 FROM search_passages p WHERE p.document_id = d.document_id)
       AND NOT EXISTS (SELECT 1 FROM search_vector_sets v WHERE v.document_id = d.document_id AND v.model = ?)
     ORDER BY d.document_id LIMIT ?`,
  ).all(model, limit) as Array<{ document_id: string }>).map((row) => row.document_id);
}

/** How many documents have vectors of `model`, and how many with passages have none yet. */
export function vectorCoverage(db: DatabaseSync, model: string): { ready: number; pending: number } {
  const ready = (statement(db, "SELECT count(*) AS n FROM search_vector_sets WHERE model = ?").get(model) as {
    n: number;
  }).n;
  const indexed = (statement(db, "SELECT count(DISTINCT document_id) AS n FROM search_passages").get() as {
    n: number;
  }).n;
  return { ready, pending: Math.max(0, indexed - ready) };
}

/** The most characters of a passage given to a model (models read about 512 tokens). */
export const MAX_EMBED_CHARS = 2000;

/** What the model is given for each of a document's passages, in passage order, and a digest over them. */
export interface PassageInputs {
  texts: string[];
  sha256: string;
}

/** The texts to embed for a document's indexed passages (section, text and speaker notes). */
export function passageInputs(db: DatabaseSync, documentId: string): PassageInputs {
  const rows = statement(
    db,
    "SELECT section, text, notes FROM search_passages WHERE document_id = ? ORDER BY passage_id",
  ).all(documentId) as Array<{ section: string | null; text: string; notes: string | null }>;
  const texts = rows.map((row) =>
    [row.section, row.text, row.notes].filter((part) => part && part.trim() !== "").join("\n")
      .slice(0, MAX_EMBED_CHARS)
  );
  const hash = createHash("sha256");
  for (const text of texts) hash.update(`${text.length}:${text}`);
  return { texts, sha256: hash.digest("hex") };
}

/** The projection row's blob: the norms (float32) of `count` packed vectors, then the vectors. */
export function vectorRow(base64: string, count: number, dimensions: number): Uint8Array | null {
  const raw = Buffer.from(base64, "base64");
  if (raw.byteLength !== count * dimensions) return null;
  const row = new Uint8Array(count * 4 + raw.byteLength);
  const norms = new Float32Array(row.buffer, 0, count);
  const vectors = new Int8Array(row.buffer, count * 4);
  vectors.set(new Int8Array(raw.buffer, raw.byteOffset, raw.byteLength));
  for (let i = 0; i < count; i++) {
    let sum = 0;
    for (let d = 0; d < dimensions; d++) sum += vectors[i * dimensions + d]! ** 2;
    norms[i] = Math.sqrt(sum);
  }
  return row;
}

/**
 * How many times the rows have changed: a process that keeps vectors in
 * memory reads them again when this moves.
 */
export function vectorChanges(db: DatabaseSync): number {
  return (statement(db, "SELECT n FROM search_vector_changes WHERE id = 1").get() as
    | { n: number }
    | undefined)?.n ?? 0;
}

/** One document's vectors of a model, as its row holds them (see {@linkcode vectorRow}). */
export interface VectorSet {
  dimensions: number;
  passages: number;
  norms: Float32Array;
  vectors: Int8Array;
}

/** Every document's vectors of `model`, by document id: views over each row's blob, not copies. */
export function readVectorSets(db: DatabaseSync, model: string): Map<string, VectorSet> {
  const sets = new Map<string, VectorSet>();
  const rows = statement(
    db,
    "SELECT document_id, dimensions, passages, vectors FROM search_vector_sets WHERE model = ?",
  ).iterate(model) as Iterable<
    { document_id: string; dimensions: number; passages: number; vectors: Uint8Array }
  >;
  for (const row of rows) {
    const count = row.passages;
    // Float32 views need a 4-byte aligned start.
    if (row.vectors.byteOffset % 4 !== 0) row.vectors = row.vectors.slice();
    sets.set(row.document_id, {
      dimensions: row.dimensions,
      passages: count,
      norms: new Float32Array(row.vectors.buffer, row.vectors.byteOffset, count),
      vectors: new Int8Array(row.vectors.buffer, row.vectors.byteOffset + count * 4, count * row.dimensions),
    });
  }
  return sets;
}

/**
 * The documents in a search's scope (the lexical search's scope rule), so a
 * vector search never reads a document outside it.
 */
export function documentsInScope(db: DatabaseSync, scope: SearchScope): Iterable<{ document_id: string }> {
  const { sql, params } = scopeSql(scope);
  return statement(db, `SELECT d.document_id AS document_id FROM search_documents d WHERE ${sql}`)
    .iterate(...params) as Iterable<{ document_id: string }>;
}

/** The lexical search's scope rule, over `search_documents` (`d`). */
function scopeSql(scope: SearchScope): { sql: string; params: SQLInputValue[] } {
  const documents = JSON.stringify(scope.documentIds);
  if (scope.folderIds === null) {
    return {
      sql:
        "d.person_id = ? AND (d.folder_id IS NOT NULL OR d.document_id IN (SELECT value FROM json_each(?)))",
      params: [scope.personId, documents],
    };
  }
  return {
    sql: `d.person_id = ? AND (d.folder_id IN (SELECT value FROM json_each(?))
      OR d.document_id IN (SELECT value FROM json_each(?)))`,
    params: [scope.personId, JSON.stringify(scope.folderIds), documents],
  };
}

/** The `ordinal`-th passage of a document in reading order (passage order), or undefined. */
export function passageAt(db: DatabaseSync, documentId: string, ordinal: number): {
  page: number | null;
  section: string | null;
  marked: number;
  text: string;
} | undefined {
  return statement(
    db,
    "SELECT page, section, marked, text FROM search_passages WHERE document_id = ? ORDER BY passage_id LIMIT 1 OFFSET ?",
  ).get(documentId, ordinal) as
    | { page: number | null; section: string | null; marked: number; text: string }
    | undefined;
}
