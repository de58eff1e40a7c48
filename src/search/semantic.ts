/**
 * Semantic search where a model is configured: the lexical ranking and the
 * passages nearest to the query's vector (of the configured model, in the
 * same scope), fused by reciprocal rank. A document whose vectors are not
 * ready yet is still found lexically; when the model cannot embed the query,
 * the lexical ranking is the answer and `/healthz` says why.
 *
 * The fused list has the lexical search's form and depth, so the `search`
 * tool's result, caps and paging are the same with or without a model.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { type SearchHit, type SearchOptions, searchPassages } from "./lexical.ts";
import { MAX_EMBED_CHARS, passageAt, vectorCoverage } from "../../projections/search_vectors.ts";
import type { Embedder } from "./embedders/embedder.ts";
import { reciprocalRankFusion } from "./fusion.ts";
import { nearestPassages } from "./vectors.ts";

/** How long a search waits for its query's vector before answering lexically. */
export const QUERY_EMBED_TIMEOUT_MS = 5_000;
/** Query vectors kept for repeated queries (an agent paging through results asks the same query again). */
const QUERY_CACHE = 256;

/** What `/healthz` says about search. */
export type SearchStatus =
  | { mode: "lexical" }
  | {
    mode: "hybrid";
    provider: Embedder["provider"];
    model: string;
    /** The cosine a nearest passage needs to join the results. */
    min_similarity: number;
    documents: { with_vectors: number; waiting: number };
    last_error?: string;
  };

/** The lexical ranking and the passages nearest to the query, each with how far it stands out, before fusion. */
export interface SearchCandidates {
  lexical: SearchHit[];
  /** Nearest first, each with its cosine similarity to the query. */
  semantic: Array<{ hit: SearchHit; similarity: number }>;
}

/** How the two rankings are fused. */
export interface FusionOptions {
  /** How much the vector ranking weighs against the lexical one's 1. */
  semanticWeight: number;
  /**
   * A nearest passage joins only when its cosine similarity to the query is
   * at least this: a query near nothing finds nothing by its vector, so
   * "Nothing matched." still means something with a model on. Each model has
   * its own scale of cosines (`SERGO_EMBEDDINGS_MIN_SIMILARITY`).
   */
  minSimilarity: number;
}

/**
 * Weight 1 (fusion as published) and a floor of cosine 0 (no model calls a
 * passage at or below it related). With the tests' model no floor below 1
 * keeps fusion from losing to lexical search on the tuning questions (see the
 * README), so a deployment sets its model's floor from `deno task bench --only semantic`.
 */
export const DEFAULT_FUSION: Readonly<FusionOptions> = { semanticWeight: 1, minSimilarity: 0 };

/** Semantic search over one embedding model. */
export class SemanticSearch {
  readonly embedder: Embedder;
  #lastError: string | null = null;
  readonly #queries = new Map<string, Float32Array>();

  /** How the rankings are fused (the benchmark varies it). */
  readonly fusion: FusionOptions;

  constructor(embedder: Embedder, options: Partial<FusionOptions> = {}) {
    this.embedder = embedder;
    this.fusion = { ...DEFAULT_FUSION, ...options };
  }

  /** The model whose vectors are compared. */
  get model(): string {
    return this.embedder.model;
  }

  /** Remembers the last failure of the model (shown by `/healthz` until the model works again). */
  noteFailure(error: unknown): void {
    this.#lastError = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 500);
  }

  noteSuccess(): void {
    this.#lastError = null;
  }

  /** The lexical and the vector rankings, fused; the lexical one alone if the query cannot be embedded. */
  async search(db: DatabaseSync, options: SearchOptions): Promise<SearchHit[]> {
    return fuse(await this.candidates(db, options), options.depth, this.fusion);
  }

  /** Both rankings of a query, unfused (the semantic one empty if the query cannot be embedded). */
  async candidates(db: DatabaseSync, options: SearchOptions): Promise<SearchCandidates> {
    const lexical = searchPassages(db, options);
    const query = await this.#queryVector(options.query);
    if (query === null) return { lexical, semantic: [] };
    let norm = 0;
    for (const x of query) norm += x * x;
    norm = Math.sqrt(norm);
    const near = nearestPassages(db, this.model, options, query, options.depth);
    const semantic: SearchCandidates["semantic"] = [];
    for (const passage of near) {
      const row = passageAt(db, passage.document_id, passage.ordinal);
      if (!row) continue;
      const hit = {
        document_id: passage.document_id,
        page: row.page,
        section: row.section,
        marked: row.marked === 1,
        text: row.text,
        rank: -passage.score,
      };
      // Scores are the cosine times the query's norm.
      semantic.push({ hit, similarity: norm > 0 ? passage.score / norm : 0 });
    }
    return { lexical, semantic };
  }

  /** What `/healthz` shows. */
  status(db: DatabaseSync): SearchStatus {
    const coverage = vectorCoverage(db, this.model);
    return {
      mode: "hybrid",
      provider: this.embedder.provider,
      model: this.model,
      min_similarity: this.fusion.minSimilarity,
      documents: { with_vectors: coverage.ready, waiting: coverage.pending },
      ...(this.#lastError !== null ? { last_error: this.#lastError } : {}),
    };
  }

  async #queryVector(text: string): Promise<Float32Array | null> {
    const query = text.trim().slice(0, MAX_EMBED_CHARS);
    const cached = this.#queries.get(query);
    if (cached) {
      this.#queries.delete(query);
      this.#queries.set(query, cached);
      return cached;
    }
    try {
      const [vector] = await this.embedder.embed(
        [query],
        "query",
        AbortSignal.timeout(QUERY_EMBED_TIMEOUT_MS),
      );
      if (!vector) return null;
      this.#queries.set(query, vector);
      if (this.#queries.size > QUERY_CACHE) this.#queries.delete(this.#queries.keys().next().value!);
      return vector;
    } catch (error) {
      this.noteFailure(error);
      return null;
    }
  }
}

/** Fuses the rankings by reciprocal rank, the nearest passages below the similarity floor left out. */
export function fuse(candidates: SearchCandidates, depth: number, fusion: FusionOptions): SearchHit[] {
  const semantic = candidates.semantic.filter((near) => near.similarity >= fusion.minSimilarity)
    .map((near) => near.hit);
  if (semantic.length === 0) return candidates.lexical.slice(0, depth);
  return reciprocalRankFusion([candidates.lexical, semantic], passageKey, depth, {
    weights: [1, fusion.semanticWeight],
  });
}

/** The same passage from either ranking. */
function passageKey(hit: SearchHit): string {
  return `${hit.document_id}\u0000${hit.page ?? ""}\u0000${hit.section ?? ""}\u0000${hit.text}`;
}
