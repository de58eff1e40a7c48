/**
 * Passage vectors: how a model's vectors are packed into `PassagesEmbedded`
 * events, and the nearest passages to a query vector within a search's scope.
 *
 * A vector is stored as signed bytes, scaled so its largest component is
 * ±127 (a quarter of float32's size; cosine order barely moves). The
 * projection (`projections/search_vectors.ts`) keeps one row per document:
 * the model, the count, and the passages' vectors after their norms, in
 * passage order; it also says what is embedded for each passage. A searching
 * process keeps the current model's vectors in memory until the rows change.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { DatabaseSync } from "node:sqlite";
import {
  documentsInScope,
  readVectorSets,
  vectorChanges,
  type VectorSet,
} from "../../projections/search_vectors.ts";
import type { SearchScope } from "../analysis/scope.ts";

/** Packs vectors as signed bytes (base64 for an event). A zero vector (nothing the model knew) stays zero. */
export function packVectors(vectors: readonly Float32Array[], dimensions: number): string {
  const bytes = new Int8Array(vectors.length * dimensions);
  vectors.forEach((vector, i) => {
    if (vector.length !== dimensions) {
      throw new Error(`The model gave a vector of ${vector.length} dimensions, not ${dimensions}`);
    }
    let max = 0;
    for (const x of vector) {
      if (!Number.isFinite(x)) return; // the model knew none of the passage's tokens
      max = Math.max(max, Math.abs(x));
    }
    if (max === 0) return;
    for (let d = 0; d < dimensions; d++) bytes[i * dimensions + d] = Math.round((vector[d]! / max) * 127);
  });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** A passage near the query: its document, its place among the document's passages, and the cosine. */
export interface NearPassage {
  document_id: string;
  ordinal: number;
  score: number;
}

/**
 * The `depth` passages whose vectors (of `model`) are nearest to `query` by
 * cosine, among the documents in scope only: a document outside it is never
 * read. Ties go to the document id, then reading order.
 */
export function nearestPassages(
  db: DatabaseSync,
  model: string,
  scope: SearchScope,
  query: Float32Array,
  depth: number,
): NearPassage[] {
  if (
    depth <= 0 || (scope.folderIds !== null && scope.folderIds.length === 0 && scope.documentIds.length === 0)
  ) {
    return [];
  }
  let queryNorm = 0;
  for (const x of query) queryNorm += x * x;
  if (!(queryNorm > 0)) return [];
  const sets = vectorSets(db, model);
  if (sets.size === 0) return [];
  // The scope is read from the index on every search; only the vectors are kept in memory.
  const inScope = documentsInScope(db, scope);
  const best: NearPassage[] = [];
  for (const { document_id } of inScope) {
    const set = sets.get(document_id);
    if (!set || set.dimensions !== query.length) continue;
    const { dimensions: dims, passages: count, norms, vectors } = set;
    for (let i = 0; i < count; i++) {
      const norm = norms[i]!;
      if (norm === 0) continue;
      let dot = 0;
      const base = i * dims;
      for (let d = 0; d < dims; d++) dot += query[d]! * vectors[base + d]!;
      const score = dot / norm;
      if (best.length === depth && !(score > best[depth - 1]!.score)) continue;
      const near = { document_id, ordinal: i, score };
      let at = best.length;
      while (at > 0 && before(near, best[at - 1]!)) at--;
      best.splice(at, 0, near);
      if (best.length > depth) best.pop();
    }
  }
  return best;
}

/** The vectors of one model, per document, kept per database until the projection's rows change. */
const memory = new WeakMap<DatabaseSync, { model: string; changes: number; sets: Map<string, VectorSet> }>();

function vectorSets(db: DatabaseSync, model: string): Map<string, VectorSet> {
  const changes = vectorChanges(db);
  const kept = memory.get(db);
  if (kept && kept.model === model && kept.changes === changes) return kept.sets;
  const sets = readVectorSets(db, model);
  memory.set(db, { model, changes, sets });
  return sets;
}

function before(a: NearPassage, b: NearPassage): boolean {
  if (a.score !== b.score) return a.score > b.score;
  if (a.document_id !== b.document_id) return a.document_id < b.document_id;
  return a.ordinal < b.ordinal;
}
