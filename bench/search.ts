/**
 * Search benchmark (issue 9): speed of `searchPassages` against a plain FTS5
 * bm25 OR query over the same pages, at 1k, 10k, 100k (and 1M in the full
 * run) pages made from the corpus text; and quality (recall@10, MRR) over the
 * real corpus pages, in `_search_quality.ts`.
 *
 * Run alone: `deno run -A bench/search.ts [--quick] [--sizes=1000,100000]`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import type { ProcessedPage, RecordedEvent } from "../events/types.ts";
import { openProjector } from "../projections/projector.ts";
import { analysisVersion, searchIndexProjection, searchPassages } from "../projections/search_index.ts";
import { type CorpusFile, loadCorpus } from "./_corpus_text.ts";
import { benchQuality } from "./_search_quality.ts";

/** Options of {@linkcode benchSearch}. */
export interface BenchSearchOptions {
  /** Only 1k and 10k pages (and the quality run). */
  quick: boolean;
  /** Page counts to measure, instead of the defaults. */
  sizes?: number[];
}

const DATA = new URL("./data/", import.meta.url);
const PERSON = "bench-person";
const PAGES_PER_DOCUMENT = 100;
const DEPTH = 50;
const QUERY_COUNT = 300;

/** Runs the speed and quality benchmarks and returns their figures. */
export async function benchSearch(opts: BenchSearchOptions): Promise<Record<string, unknown>> {
  const corpus = await loadCorpus();
  const sizes = opts.sizes ?? (opts.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]);
  const speed: Record<string, unknown> = {};
  for (const size of sizes) speed[String(size)] = await benchSize(corpus, size);
  return { speed, quality: await benchQuality(corpus) };
}

/** A seeded random generator (mulberry32), so pages and queries are the same every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?。！？])\s+|\n\s*\n/).map((s) => s.trim()).filter((s) => s.length > 20);
}

/** `count` pages, each a real page with about a third of its sentences swapped for others. */
function* syntheticPages(corpus: CorpusFile[], count: number): Generator<string> {
  const sources = corpus.flatMap((file) => file.pages).map(sentencesOf).filter((s) => s.length >= 3);
  const pool = sources.flat();
  const next = random(count);
  for (let i = 0; i < count; i++) {
    const base = sources[i % sources.length]!;
    const sentences = base.map((sentence) =>
      next() < 0.35 ? pool[Math.floor(next() * pool.length)]! : sentence
    );
    yield sentences.join(i % 3 === 0 ? "\n\n" : " ");
  }
}

/** 300 queries of 2 to 8 words from the corpus vocabulary: keywords and questions. */
export function benchQueries(corpus: CorpusFile[]): string[] {
  const next = random(42);
  const sentences = corpus.flatMap((file) => file.pages.flatMap(sentencesOf));
  const queries: string[] = [];
  const starts = ["what is", "how does", "what are the", "which", "why do", "when was the", "where is the"];
  while (queries.length < QUERY_COUNT) {
    const words = sentences[Math.floor(next() * sentences.length)]!.match(/[\p{L}\p{N}]{3,}/gu) ?? [];
    if (words.length < 6) continue;
    const question = next() < 0.5;
    const length = question ? 2 + Math.floor(next() * 4) : 2 + Math.floor(next() * 7);
    const from = Math.floor(next() * (words.length - length));
    const picked = words.slice(from, from + length).join(" ");
    queries.push(question ? `${starts[Math.floor(next() * starts.length)]} ${picked}?` : picked);
  }
  return queries;
}

function recorded(position: number, event: Pick<RecordedEvent, "type" | "data">): RecordedEvent {
  return {
    ...event,
    metadata: { time: "2026-01-01T00:00:00.000Z" },
    position,
    stream: `document-${position}`,
    stream_version: 1,
    schema_version: 1,
    prev_hash: "0".repeat(64),
    hash: "0".repeat(64),
  } as RecordedEvent;
}

interface BuiltIndex {
  sergo: DatabaseSync;
  plain: DatabaseSync;
  build_seconds: number | null;
}

/** Builds (or reopens) the Sergo index and the plain FTS5 table of `size` synthetic pages. */
export function buildIndexes(corpus: CorpusFile[], size: number): BuiltIndex {
  Deno.mkdirSync(DATA, { recursive: true });
  const sergoPath = new URL(`sergo-${size}.db`, DATA).pathname;
  const plainPath = new URL(`plain-${size}.db`, DATA).pathname;
  // An index built with another analysis is built again.
  const analysis = createHash("sha256").update(analysisVersion()).digest("hex").slice(0, 8);
  const donePath = new URL(`built-${size}-${analysis}.done`, DATA).pathname;
  let buildSeconds: number | null = null;
  try {
    Deno.statSync(donePath);
  } catch {
    for (const path of [sergoPath, plainPath, `${sergoPath}-wal`, `${sergoPath}-shm`]) {
      try {
        Deno.removeSync(path);
      } catch {
        // Absent.
      }
    }
    const started = performance.now();
    const projector = openProjector(sergoPath, [searchIndexProjection]);
    const plain = new DatabaseSync(plainPath);
    plain.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    plain.exec("CREATE VIRTUAL TABLE plain USING fts5 (text, tokenize = 'porter unicode61')");
    const insertPlain = plain.prepare("INSERT INTO plain (rowid, text) VALUES (?, ?)");
    let position = 0;
    let batch: RecordedEvent[] = [];
    let pages: ProcessedPage[] = [];
    let rowid = 0;
    const flushDocument = () => {
      const documentId = `doc${position}`;
      batch.push(recorded(++position, {
        type: "DocumentUploaded",
        data: {
          document_id: documentId,
          person_id: PERSON,
          folder_id: `folder-${position % 10}`,
          name: `${documentId}.pdf`,
          type: "pdf",
          size: 1,
          sha256: "0".repeat(64),
          preset: "basic",
        },
      }));
      batch.push(recorded(++position, {
        type: "DocumentProcessed",
        data: {
          document_id: documentId,
          preset: "basic",
          page_count: pages.length,
          pages_estimated: false,
          pages,
        },
      }));
      pages = [];
      if (batch.length >= 40) {
        projector.applyBatch(batch);
        batch = [];
      }
    };
    plain.exec("BEGIN");
    for (const text of syntheticPages(corpus, size)) {
      pages.push({ page: pages.length + 1, text, marked: false, image_only: false });
      insertPlain.run(++rowid, text);
      if (pages.length === PAGES_PER_DOCUMENT) flushDocument();
      if (rowid % 20_000 === 0) {
        plain.exec("COMMIT");
        plain.exec("BEGIN");
      }
    }
    if (pages.length > 0) flushDocument();
    projector.applyBatch(batch);
    plain.exec("COMMIT");
    projector.close();
    plain.close();
    buildSeconds = Math.round((performance.now() - started) / 100) / 10;
    Deno.writeTextFileSync(donePath, String(buildSeconds));
  }
  return {
    sergo: new DatabaseSync(sergoPath),
    plain: new DatabaseSync(plainPath),
    build_seconds: buildSeconds,
  };
}

/** The plain baseline: every word of the query OR-ed, ranked by bm25 (optionally within a row id range). */
export function plainSearch(
  db: DatabaseSync,
  query: string,
  depth: number,
  range?: readonly [number, number],
): number[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  if (words.length === 0) return [];
  const match = words.map((word) => `"${word}"`).join(" OR ");
  const [from, to] = range ?? [0, Number.MAX_SAFE_INTEGER];
  const rows = db.prepare(
    "SELECT rowid FROM plain WHERE plain MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT ?",
  ).all(match, from, to, depth) as Array<{ rowid: number }>;
  return rows.map((row) => row.rowid);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

async function benchSize(corpus: CorpusFile[], size: number): Promise<Record<string, unknown>> {
  const { sergo, plain, build_seconds } = buildIndexes(corpus, size);
  const queries = benchQueries(corpus);
  const options = { personId: PERSON, folderIds: null, documentIds: [], depth: DEPTH };
  for (const query of queries.slice(0, 20)) {
    searchPassages(sergo, { ...options, query });
    plainSearch(plain, query, DEPTH);
  }
  const sergoMs: number[] = [];
  const plainMs: number[] = [];
  let sergoEmpty = 0;
  for (const [index, query] of queries.entries()) {
    const timeSergo = () => {
      const started = performance.now();
      const hits = searchPassages(sergo, { ...options, query });
      sergoMs.push(performance.now() - started);
      if (hits.length === 0) sergoEmpty++;
    };
    const timePlain = () => {
      const started = performance.now();
      plainSearch(plain, query, DEPTH);
      plainMs.push(performance.now() - started);
    };
    if (index % 2 === 0) {
      timeSergo();
      timePlain();
    } else {
      timePlain();
      timeSergo();
    }
    if (index % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  // A small scope inside the large index: one document of 100 pages, a different one per query.
  const scopedMs: number[] = [];
  const documents = Math.ceil(size / PAGES_PER_DOCUMENT);
  for (const [index, query] of queries.entries()) {
    const documentId = `doc${2 * ((index * 7919) % documents)}`;
    const started = performance.now();
    searchPassages(sergo, { ...options, folderIds: [], documentIds: [documentId], query });
    scopedMs.push(performance.now() - started);
  }
  sergo.close();
  plain.close();
  const bytes = (name: string) => {
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += Deno.statSync(new URL(`${name}-${size}.db${suffix}`, DATA)).size;
      } catch {
        // No WAL left.
      }
    }
    return Math.round(total / size);
  };
  const result = {
    pages: size,
    build_seconds,
    /** The whole index database (passages with their text, FTS5, documents) per page, and plain FTS5's. */
    sergo_bytes_per_page: bytes("sergo"),
    plain_bytes_per_page: bytes("plain"),
    sergo_ms: { p50: round(percentile(sergoMs, 0.5)), p99: round(percentile(sergoMs, 0.99)) },
    plain_ms: { p50: round(percentile(plainMs, 0.5)), p99: round(percentile(plainMs, 0.99)) },
    ratio: {
      p50: round(percentile(sergoMs, 0.5) / percentile(plainMs, 0.5), 3),
      p99: round(percentile(sergoMs, 0.99) / percentile(plainMs, 0.99), 3),
    },
    sergo_queries_without_hits: sergoEmpty,
    sergo_one_document_scope_ms: {
      p50: round(percentile(scopedMs, 0.5)),
      p99: round(percentile(scopedMs, 0.99)),
    },
  };
  console.error(JSON.stringify(result));
  return result;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const sizes = Deno.args.find((arg) => arg.startsWith("--sizes="))?.slice(8).split(",").filter(Boolean).map(
    Number,
  );
  console.log(JSON.stringify(await benchSearch({ quick, sizes }), null, 2));
}
