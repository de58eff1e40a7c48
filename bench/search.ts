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
import { openProjector, sizePageCache } from "../projections/projector.ts";
import type { PassageDraft } from "../projections/_passages.ts";
import { analysisVersion, ftsColumns, searchIndexProjection } from "../projections/search_index.ts";
import { searchPassages } from "../src/search/lexical.ts";
import { passageScopeTokens } from "../src/analysis/scope.ts";
import type { BuildDocument } from "./_search_build_worker.ts";
import { type CorpusFile, loadCorpus } from "./_corpus_text.ts";
import {
  benchDebianQuality,
  benchDictionaries,
  benchGuidesQuality,
  benchHandbookQuality,
  benchMaintQuality,
  benchQuality,
} from "./_search_quality.ts";
import type { DictionaryLookup } from "../src/search/dictionaries.ts";

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
/** Workers analyzing passages while the index is built, and documents sent to one at a time. */
const BUILD_WORKERS = 2;
const BUILD_GROUP = 10;

type Analyzed = { draft: PassageDraft; columns: ReturnType<typeof ftsColumns> };

/** Runs the speed and quality benchmarks and returns their figures. */
export async function benchSearch(opts: BenchSearchOptions): Promise<Record<string, unknown>> {
  const corpus = await loadCorpus();
  const sizes = opts.sizes ?? (opts.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]);
  const speed: Record<string, unknown> = {};
  const dictionaries = await benchDictionaries();
  for (const size of sizes) speed[String(size)] = await benchSize(corpus, size, dictionaries);
  return {
    speed,
    quality: await benchQuality(corpus),
    quality_debian: await benchDebianQuality(),
    quality_handbook: await benchHandbookQuality(),
    quality_guides: await benchGuidesQuality(),
    quality_maint: await benchMaintQuality(),
  };
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
  /** Seconds to build the Sergo index (null: reused from an earlier run, built by the same index version). */
  build_seconds: number | null;
  /** Seconds to build the plain FTS5 table (null: reused). */
  plain_build_seconds: number | null;
  sergo_path: string;
  plain_path: string;
}

function removeDatabase(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      Deno.removeSync(path + suffix);
    } catch {
      // Absent.
    }
  }
}

/**
 * Builds (or reopens) the Sergo index and the plain FTS5 table of `size`
 * synthetic pages. A Sergo index is reused only when built by the same
 * index version (layout and analysis, `analysisVersion()`); one of another
 * version is deleted and built again. `only` builds one of the two (the
 * other may be built by another process at the same time).
 */
export async function buildIndexes(
  corpus: CorpusFile[],
  size: number,
  only?: "sergo" | "plain",
): Promise<BuiltIndex> {
  Deno.mkdirSync(DATA, { recursive: true });
  const version = createHash("sha256").update(analysisVersion()).digest("hex").slice(0, 8);
  const sergoPath = new URL(`sergo-${size}-v${version}.db`, DATA).pathname;
  const plainPath = new URL(`plain-${size}.db`, DATA).pathname;
  const sergoDone = `${sergoPath}.done`;
  const plainDone = `${plainPath}.done`;
  const exists = (path: string) => {
    try {
      Deno.statSync(path);
      return true;
    } catch {
      return false;
    }
  };
  const buildSergo = !exists(sergoDone) && only !== "plain";
  const buildPlain = !exists(plainDone) && only !== "sergo";
  if (buildSergo) {
    // Indexes of this size built by other versions (and the unversioned ones of before) are stale.
    for (const entry of Deno.readDirSync(DATA)) {
      if (entry.name.startsWith(`sergo-${size}.`) || entry.name.startsWith(`sergo-${size}-`)) {
        Deno.removeSync(new URL(entry.name, DATA));
      }
    }
    try {
      Deno.removeSync(new URL(`built-${size}.done`, DATA));
    } catch {
      // Absent.
    }
  }
  if (buildPlain) removeDatabase(plainPath);
  let buildSeconds: number | null = null;
  let plainSeconds: number | null = null;
  if (buildSergo) {
    const started = performance.now();
    await buildSergoIndex(corpus, size, sergoPath);
    buildSeconds = Math.round((performance.now() - started) / 100) / 10;
    Deno.writeTextFileSync(sergoDone, String(buildSeconds));
  }
  if (buildPlain) {
    const started = performance.now();
    const plain = new DatabaseSync(plainPath);
    plain.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    plain.exec("CREATE VIRTUAL TABLE plain USING fts5 (text, tokenize = 'porter unicode61')");
    const insertPlain = plain.prepare("INSERT INTO plain (rowid, text) VALUES (?, ?)");
    let rowid = 0;
    plain.exec("BEGIN");
    for (const text of syntheticPages(corpus, size)) {
      insertPlain.run(++rowid, text);
      if (rowid % 20_000 === 0) {
        plain.exec("COMMIT");
        plain.exec("BEGIN");
      }
    }
    plain.exec("COMMIT");
    plain.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    plain.close();
    plainSeconds = Math.round((performance.now() - started) / 100) / 10;
    Deno.writeTextFileSync(plainDone, String(plainSeconds));
  }
  return {
    sergo: new DatabaseSync(sergoPath),
    plain: new DatabaseSync(plainPath),
    build_seconds: buildSeconds,
    plain_build_seconds: plainSeconds,
    sergo_path: sergoPath,
    plain_path: plainPath,
  };
}

/** The synthetic documents of `size` pages: `PAGES_PER_DOCUMENT` pages each, in ten folders. */
export function* syntheticDocuments(corpus: CorpusFile[], size: number): Generator<BuildDocument> {
  let pages: ProcessedPage[] = [];
  let position = 0;
  const document = (): BuildDocument => {
    const documentId = `doc${position}`;
    position += 2;
    const made = { document_id: documentId, name: `${documentId}.pdf`, type: "pdf", pages };
    pages = [];
    return made;
  };
  for (const text of syntheticPages(corpus, size)) {
    pages.push({ page: pages.length + 1, text, marked: false, image_only: false });
    if (pages.length === PAGES_PER_DOCUMENT) yield document();
  }
  if (pages.length > 0) yield document();
}

/** The events a user's log holds for one synthetic document (its upload at `position`, then its result). */
export function documentEvents(document: BuildDocument, position: number): RecordedEvent[] {
  return [
    recorded(position, {
      type: "DocumentUploaded",
      data: {
        document_id: document.document_id,
        person_id: PERSON,
        folder_id: `folder-${position % 10}`,
        name: document.name,
        type: "pdf",
        size: 1,
        sha256: "0".repeat(64),
        preset: "basic",
      },
    }),
    recorded(position + 1, {
      type: "DocumentProcessed",
      data: {
        document_id: document.document_id,
        preset: "basic",
        page_count: document.pages.length,
        pages_estimated: false,
        pages: document.pages,
      },
    }),
  ];
}

/**
 * Builds the Sergo index of `size` synthetic pages at `path` as the search
 * index projection would from their events, faster: the projection's own
 * `init` makes the tables, workers run its `ftsColumns` over the passages,
 * and this thread writes the rows its `apply` writes for an upload and a
 * processing result, in transactions of many documents, then its
 * checkpoint. `test/bench/search_build_test.ts` checks the digest equals the
 * projector's over the same events.
 */
export async function buildSergoIndex(
  corpus: CorpusFile[],
  size: number,
  path: string,
  group = BUILD_GROUP,
): Promise<void> {
  const projector = openProjector(path, [searchIndexProjection]);
  const db = projector.db;
  // For the build only (nothing here is stored in the index): no journal (a build cut short is built again,
  // see buildIndexes), and a page cache that holds FTS5's segments while it merges them.
  db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144");
  const workers = Array.from(
    { length: BUILD_WORKERS },
    () => new Worker(new URL("./_search_build_worker.ts", import.meta.url), { type: "module" }),
  );
  const pending = new Map<number, (analyzed: Analyzed[][]) => void>();
  for (const worker of workers) {
    worker.onmessage = (event: MessageEvent<{ id: number; analyzed: Analyzed[][] }>) => {
      pending.get(event.data.id)!(event.data.analyzed);
      pending.delete(event.data.id);
    };
  }
  let nextId = 0;
  const analyze = (documents: BuildDocument[]) =>
    new Promise<Analyzed[][]>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      workers[id % workers.length]!.postMessage({ id, documents });
    });
  const insertDocument = db.prepare(
    "INSERT INTO search_documents (document_id, person_id, folder_id, name, type) VALUES (?, ?, ?, ?, ?)",
  );
  const insertPassage = db.prepare(
    `INSERT INTO search_passages (document_id, person_id, folder_id, page, chunk, section, marked, text, notes,
      length, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertFts = db.prepare(
    "INSERT INTO search_fts (rowid, body, heading, notes, name, scope) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const processed = db.prepare(
    `UPDATE search_documents SET pages_estimated = ?, image_only_pages = ?, passages = ?, tokens = ?
     WHERE document_id = ?`,
  );
  let position = 0;
  const write = (documents: BuildDocument[], analyzed: Analyzed[][]) => {
    db.exec("BEGIN");
    documents.forEach((document, index) => {
      const folderId = `folder-${(position + 1) % 10}`;
      position += 2;
      insertDocument.run(document.document_id, PERSON, folderId, document.name, document.type);
      const scope = passageScopeTokens(document.document_id, folderId, PERSON);
      let tokens = 0;
      for (const { draft, columns } of analyzed[index]!) {
        const id = insertPassage.run(
          document.document_id,
          PERSON,
          folderId,
          draft.page,
          draft.chunk,
          draft.section,
          draft.marked ? 1 : 0,
          draft.text,
          draft.notes,
          columns.length,
          columns.language,
        ).lastInsertRowid;
        insertFts.run(id, columns.body, columns.heading, columns.notes, columns.name, scope);
        tokens += columns.length;
      }
      processed.run(0, "[]", analyzed[index]!.length, tokens, document.document_id);
    });
    db.prepare(
      `INSERT INTO projection_checkpoints (name, position) VALUES ('search_index', ?)
       ON CONFLICT (name) DO UPDATE SET position = excluded.position`,
    ).run(position);
    db.exec("COMMIT");
  };
  try {
    const inFlight: Array<{ documents: BuildDocument[]; analyzed: Promise<Analyzed[][]> }> = [];
    let documents: BuildDocument[] = [];
    const send = () => {
      inFlight.push({ documents, analyzed: analyze(documents) });
      documents = [];
    };
    const drainOne = async () => {
      const { documents, analyzed } = inFlight.shift()!;
      write(documents, await analyzed);
    };
    for (const document of syntheticDocuments(corpus, size)) {
      documents.push(document);
      if (documents.length === group) send();
      if (inFlight.length > 2 * BUILD_WORKERS) await drainOne();
    }
    if (documents.length > 0) send();
    while (inFlight.length > 0) await drainOne();
  } finally {
    for (const worker of workers) worker.terminate();
  }
  db.exec("PRAGMA journal_mode = WAL");
  projector.close();
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

/**
 * Reads each index file once, start to end, so that the timings measure the
 * ranking on an index in memory (as a serving replica's is after its first
 * minutes) and not the disk: at 1M pages the two files are 9 GB, and a query
 * that meets pages not read yet waits for them (a cold first read made
 * Sergo's slowest queries 2-4 s, for either index alike). Only when both fit
 * in the memory available with a quarter to spare; says whether it did.
 */
function warmPageCache(paths: string[]): boolean {
  const files = paths.flatMap((path) => [path, `${path}-wal`]).filter((path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  });
  const bytes = files.reduce((sum, path) => sum + Deno.statSync(path).size, 0);
  if (bytes * 1.25 > Deno.systemMemoryInfo().available) return false;
  const buffer = new Uint8Array(8 << 20);
  for (const path of files) {
    const file = Deno.openSync(path, { read: true });
    try {
      while ((file.readSync(buffer) ?? 0) > 0) {
        // Read and dropped: the kernel keeps the pages.
      }
    } finally {
      file.close();
    }
  }
  return true;
}

/** RSS now and peak RSS (`VmHWM`) of this process, MB (peak null where /proc is absent). */
function processMemory(): { rss: number; peak: number | null } {
  let peak: number | null = null;
  try {
    const kib = Deno.readTextFileSync("/proc/self/status").match(/^VmHWM:\s+(\d+) kB/m)?.[1];
    if (kib) peak = round(Number(kib) / 1024, 1);
  } catch {
    // Not Linux.
  }
  return { rss: round(Deno.memoryUsage().rss / 2 ** 20, 1), peak };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

async function benchSize(
  corpus: CorpusFile[],
  size: number,
  dictionaries: DictionaryLookup,
): Promise<Record<string, unknown>> {
  const built = await buildIndexes(corpus, size);
  const { sergo, plain, build_seconds, plain_build_seconds } = built;
  const queries = benchQueries(corpus);
  // Sergo as served: with the installed dictionaries (English questions translated); beside it, without.
  const options = { personId: PERSON, folderIds: null, documentIds: [], depth: DEPTH, dictionaries };
  const withoutDictionaries = { ...options, dictionaries: null };
  const warmed = warmPageCache([built.sergo_path, built.plain_path]);
  // Both with the page cache a serving replica's projections database sizes for itself (the baseline too).
  const cacheKiB = [sergo, plain].map(sizePageCache);
  for (const query of queries.slice(0, 20)) {
    searchPassages(sergo, { ...options, query });
    searchPassages(sergo, { ...withoutDictionaries, query });
    plainSearch(plain, query, DEPTH);
  }
  const sergoMs: number[] = [];
  const withoutMs: number[] = [];
  const plainMs: number[] = [];
  let sergoEmpty = 0;
  const loadAtStart = Deno.loadavg()[0];
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
    const timeWithout = () => {
      const started = performance.now();
      searchPassages(sergo, { ...withoutDictionaries, query });
      withoutMs.push(performance.now() - started);
    };
    // The three in turn, each first as often as the others.
    const order = [timeSergo, timePlain, timeWithout];
    for (let k = 0; k < 3; k++) order[(index + k) % 3]!();
    if (index % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  const loadAtEnd = Deno.loadavg()[0];
  // A small scope inside the large index: one document of 100 pages, a different one per query.
  const scopedMs: number[] = [];
  const documents = Math.ceil(size / PAGES_PER_DOCUMENT);
  for (const [index, query] of queries.entries()) {
    const documentId = `doc${2 * ((index * 7919) % documents)}`;
    const started = performance.now();
    searchPassages(sergo, { ...options, folderIds: [], documentIds: [documentId], query });
    scopedMs.push(performance.now() - started);
  }
  // This process's memory with both indexes open and searched (their page caches, the dictionaries, V8).
  const memory = processMemory();
  sergo.close();
  plain.close();
  const bytes = (path: string) => {
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += Deno.statSync(path + suffix).size;
      } catch {
        // No WAL left.
      }
    }
    return Math.round(total / size);
  };
  const result = {
    pages: size,
    build_seconds,
    plain_build_seconds,
    /** The whole index database (passages with their text, FTS5, documents) per page, and plain FTS5's. */
    sergo_bytes_per_page: bytes(built.sergo_path),
    plain_bytes_per_page: bytes(built.plain_path),
    sergo_ms: { p50: round(percentile(sergoMs, 0.5)), p99: round(percentile(sergoMs, 0.99)) },
    plain_ms: { p50: round(percentile(plainMs, 0.5)), p99: round(percentile(plainMs, 0.99)) },
    /** `sergo_ms` is with the installed dictionaries (these pairs); this is the same search without them. */
    dictionaries: dictionaries.pairs().map((pair) => pair.pair),
    sergo_without_dictionaries_ms: {
      p50: round(percentile(withoutMs, 0.5)),
      p99: round(percentile(withoutMs, 0.99)),
    },
    ratio: {
      p50: round(percentile(sergoMs, 0.5) / percentile(plainMs, 0.5), 3),
      p99: round(percentile(sergoMs, 0.99) / percentile(plainMs, 0.99), 3),
    },
    sergo_queries_without_hits: sergoEmpty,
    /** Both index files were read once before timing, so neither's figures include first reads from disk. */
    page_cache_warmed: warmed,
    /** Each connection's own page cache (sized as the projector sizes it), KiB: Sergo's, the baseline's. */
    sqlite_cache_kib: cacheKiB,
    /** The machine's 1-minute load average when the interleaved timing began and ended (2 cores). */
    load_average: { start: round(loadAtStart ?? 0), end: round(loadAtEnd ?? 0) },
    index_version: analysisVersion(),
    sergo_one_document_scope_ms: {
      p50: round(percentile(scopedMs, 0.5)),
      p99: round(percentile(scopedMs, 0.99)),
    },
    /** The bench process's RSS after the timing and its peak so far (VmHWM, the build included), MB. */
    process_memory_mb: memory,
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
