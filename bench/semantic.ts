/**
 * Semantic search benchmark (issue 15): with an embedding model on, search
 * quality (recall@10, MRR) of the fused ranking beside the lexical one and
 * plain bm25 OR on the evaluation set of `_search_quality.ts`, overall, per
 * part and per kind; search p99 at 100k pages (10k with `--quick`), the
 * query's embedding included, beside plain bm25 OR and lexical search in the
 * same run; and the cost of vectors: embedding time per 1,000 pages on this
 * machine, the model's memory, and disk per 100k pages.
 *
 * The model is the tests' (`test/search/_glove_model.ts`: GloVe 6B 100-d word
 * vectors as an ONNX sentence encoder, English only), run in this process as
 * `SERGO_EMBEDDINGS_MODEL_DIR` runs it; with the `SERGO_EMBEDDINGS_*`
 * settings in the environment, the model they name is measured instead. The corpus pages get their own
 * vectors; the synthetic pages of the speed run are given vectors of corpus
 * pages (in turn), since embedding 100k pages per run would take this model's
 * tokenizer many minutes and a scan's cost depends only on the number of
 * vectors and their size.
 *
 * Run alone: `deno run -A bench/semantic.ts [--quick]`.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { DocumentType, RecordedEvent } from "../events/types.ts";
import { openProjector } from "../projections/projector.ts";
import { searchIndexProjection } from "../projections/search_index.ts";
import { type SearchHit, searchPassages } from "../src/search/lexical.ts";
import { passageInputs, searchVectorsProjection } from "../projections/search_vectors.ts";
import { onnxEmbedder } from "../src/search/embedders/onnx.ts";
import { createEmbedder } from "../src/search/embedders/mod.ts";
import { loadConfig } from "../src/config.ts";
import { fuse, type FusionOptions, type SearchCandidates, SemanticSearch } from "../src/search/semantic.ts";
import { packVectors } from "../src/search/vectors.ts";
import { gloveModelDir } from "../test/search/_glove_model.ts";
import { loadCorpus } from "./_corpus_text.ts";
import { e5ShapeModelDir } from "./_e5_shape_model.ts";
import { buildQualityIndexes, loadQuestions, scoreSearch } from "./_search_quality.ts";
import { benchQueries, buildIndexes, plainSearch } from "./search.ts";
import type { SummaryRow } from "./_table.ts";

const PERSON = "bench-person";
const DEPTH = 50;
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

let position = 0;
function recorded(event: Pick<RecordedEvent, "type" | "data">): RecordedEvent {
  position++;
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

/** Runs the quality, speed and cost measurements. */
export async function benchSemantic(
  opts: { quick: boolean; qualityOnly?: boolean },
): Promise<Record<string, unknown>> {
  const corpus = await loadCorpus();
  const rssBefore = Deno.memoryUsage().rss;
  // A deployment measures its own model with the same settings `serve` reads.
  const configured = loadConfig([]).embeddings;
  const embedder = configured
    ? await createEmbedder(configured)
    : await onnxEmbedder(await gloveModelDir(), { query: "", passage: "" });
  const modelRss = Deno.memoryUsage().rss - rssBefore;
  const semantic = new SemanticSearch(embedder);
  try {
    // Quality: the corpus pages, indexed and embedded as `serve` would.
    const projector = openProjector(":memory:", [searchIndexProjection, searchVectorsProjection]);
    const db = projector.db;
    const events: RecordedEvent[] = [];
    for (const [index, { file, pages }] of corpus.entries()) {
      events.push(recorded({
        type: "DocumentUploaded",
        data: {
          document_id: `d${index}`,
          person_id: PERSON,
          folder_id: "corpus",
          name: file.split("/").at(-1)!,
          type: file.split(".").at(-1) as DocumentType,
          size: 1,
          sha256: "0".repeat(64),
          preset: "basic",
        },
      }));
      events.push(recorded({
        type: "DocumentProcessed",
        data: {
          document_id: `d${index}`,
          preset: "basic",
          page_count: pages.length,
          pages_estimated: false,
          pages: pages.map((text, i) => ({ page: i + 1, text, marked: false, image_only: false })),
        },
      }));
    }
    projector.applyBatch(events);
    let passages = 0;
    let embedMs = 0;
    let eventBytes = 0;
    const corpusVectors: Float32Array[] = [];
    for (const index of corpus.keys()) {
      const inputs = passageInputs(db, `d${index}`);
      if (inputs.texts.length === 0) continue;
      const started = performance.now();
      const vectors = await embedder.embed(inputs.texts, "passage");
      embedMs += performance.now() - started;
      passages += vectors.length;
      corpusVectors.push(...vectors.filter((vector) => Number.isFinite(vector[0])));
      const event = recorded({
        type: "PassagesEmbedded",
        data: {
          document_id: `d${index}`,
          model: semantic.model,
          dimensions: vectors[0]!.length,
          passages: vectors.length,
          text_sha256: inputs.sha256,
          vectors: packVectors(vectors, vectors[0]!.length),
        },
      });
      eventBytes += JSON.stringify(event.data).length;
      projector.applyBatch([event]);
    }
    const corpusPages = corpus.reduce((sum, file) => sum + file.pages.length, 0);
    const questions = await loadQuestions(corpus);
    const fileOf = new Map(corpus.map(({ file }, index) => [`d${index}`, file]));
    const options = { personId: PERSON, folderIds: null, documentIds: [], depth: DEPTH };
    // Both rankings of every question, once; fusions are computed from them.
    const candidates = new Map<string, SearchCandidates>();
    for (const question of questions) {
      candidates.set(
        question.question,
        await semantic.candidates(db, { ...options, query: question.question }),
      );
    }
    const pagesOf = (hits: SearchHit[]) => hits.map((hit) => `${fileOf.get(hit.document_id)}#${hit.page}`);
    const fusedWith = (fusion: FusionOptions) => {
      const figures = scoreSearch(
        questions,
        (query) => pagesOf(fuse(candidates.get(query)!, DEPTH, fusion)),
      );
      return { ...figures, ranks: undefined } as Record<string, unknown>;
    };
    const fused = fusedWith(semantic.fusion);
    // How far the nearest answer passage stands out, for the questions whose answer the vectors find.
    const answerSimilarity: Record<string, number[]> = { tuning: [], held_out: [] };
    for (const question of questions) {
      const wanted = new Set(
        question.answers.flatMap(({ file, pages }) => pages.map((page) => `${file}#${page}`)),
      );
      const near = candidates.get(question.question)!.semantic.find((near) =>
        wanted.has(`${fileOf.get(near.hit.document_id)}#${near.hit.page}`)
      );
      if (near) {
        answerSimilarity[question.split === "tuning" ? "tuning" : "held_out"]!.push(
          round(near.similarity, 2),
        );
      }
    }
    for (const list of Object.values(answerSimilarity)) list.sort((a, b) => a - b);
    // The grid the defaults were chosen from, on the tuning part only.
    const grid: Array<Record<string, unknown>> = [];
    for (const semanticWeight of FUSION_WEIGHTS) {
      for (const minSimilarity of FUSION_FLOORS) {
        const figures = fusedWith({ semanticWeight, minSimilarity });
        grid.push({ semanticWeight, minSimilarity, tuning: figures.tuning, held_out: figures.held_out });
      }
    }
    // The best on the tuning part: MRR, then recall; a higher floor wins a tie (fewer vector-only answers).
    const best = grid.reduce((a, b) => {
      const [ta, tb] = [a.tuning as Record<string, number>, b.tuning as Record<string, number>];
      const better = tb.mrr! - ta.mrr! || tb.recall_at_10! - ta.recall_at_10! ||
        (b.minSimilarity as number) - (a.minSimilarity as number);
      return better > 0 ? b : a;
    });
    const offTopic = await offTopicAnswers(semantic, db, options);
    const lexical = (query: string) =>
      searchPassages(db, { ...options, query }).map((hit) => `${fileOf.get(hit.document_id)}#${hit.page}`);
    const plainIndex = buildQualityIndexes(corpus);
    const quality = {
      questions: questions.length,
      fusion: semantic.fusion,
      fused,
      grid,
      best_on_tuning: best,
      off_topic: offTopic,
      answer_similarity: answerSimilarity,
      fused_without_floor: { ...fusedWith({ ...semantic.fusion, minSimilarity: -1 }), kinds: undefined },
      lexical: { ...scoreSearch(questions, lexical), ranks: undefined },
      plain_bm25_or: { ...scoreSearch(questions, plainIndex.plain), ranks: undefined },
    };
    plainIndex.close();
    projector.close();
    if (opts.qualityOnly) {
      const partial = { model: semantic.model, quality } as unknown as Parameters<typeof rowsOf>[0];
      return { model: semantic.model, quality, rows: rowsOf(partial) };
    }

    // Speed at 100k pages (10k quick), the query's vector included.
    const size = opts.quick ? 10_000 : 100_000;
    const speed = await speedAt(size, semantic, corpusVectors, corpus);
    const passagesPerPage = passages / corpusPages;
    const cost = {
      corpus_pages: corpusPages,
      passages,
      embed_ms_per_1000_pages: round((embedMs / corpusPages) * 1000, 0),
      model_rss_mb: round(modelRss / 1e6, 1),
      event_bytes_per_100k_pages: Math.round((eventBytes / corpusPages) * 100_000),
      projection_bytes_per_100k_pages: Math.round(((speed.vector_bytes as number) / size) * 100_000),
    };
    await embedder.close();
    const e5 = await e5Shape(opts.quick, size, corpus, corpusPassageTexts(corpus), passagesPerPage);
    const result = {
      model: semantic.model,
      dimensions: corpusVectors[0]?.length ?? null,
      quality,
      speed,
      cost,
      e5,
    };
    return { ...result, rows: rowsOf(result) };
  } finally {
    await embedder.close().catch(() => {});
  }
}

/** The fusion weights and floors measured (the defaults are the best on the tuning questions). */
const FUSION_WEIGHTS = [1, 0.5, 0.25];
const FUSION_FLOORS = [-1, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01];

/**
 * Questions about nothing in the corpus (written for this measure, in
 * English, the tests' model's language): how many are answered "Nothing
 * matched.", and how many get a passage only the vectors found, lexically
 * and with the model, with and without the floor.
 */
const OFF_TOPIC = [
  "how long should sourdough bread dough rise before baking",
  "best tennis racket for a beginner with a weak backhand",
  "how fast does lava flow during a volcanic eruption",
  "blues guitar chord progression in the key of E",
  "how do I teach my puppy to sit and stay",
  "knitting pattern for a chunky wool scarf",
  "which wine goes with blue cheese",
  "how to fold an origami crane step by step",
  "Sicilian defense chess opening moves",
  "yoga poses that relieve lower back pain",
  "how were the Egyptian pyramids built",
  "hummingbird migration across the Gulf of Mexico",
  "descaling an espresso machine with vinegar",
  "how to wax a snowboard at home",
  "why are honeybee colonies collapsing",
  "saxophone improvisation tips for jazz beginners",
  "how to land an ollie on a skateboard",
  "growing tomatoes on a balcony in pots",
  "what causes the northern lights aurora",
  "recipe for French onion soup",
];

async function offTopicAnswers(
  semantic: SemanticSearch,
  db: DatabaseSync,
  options: { personId: string; folderIds: null; documentIds: string[]; depth: number },
): Promise<Record<string, unknown>> {
  let lexicalNothing = 0, fusedNothing = 0, floorlessNothing = 0;
  let vectorOnly = 0, floorlessVectorOnly = 0;
  const topSimilarity: number[] = [];
  for (const query of OFF_TOPIC) {
    const found = await semantic.candidates(db, { ...options, query });
    topSimilarity.push(round(found.semantic[0]?.similarity ?? 0, 2));
    const lexicalKeys = new Set(found.lexical.map((hit) => `${hit.document_id}#${hit.page}#${hit.text}`));
    const onlyVectors = (hits: SearchHit[]) =>
      hits.slice(0, 10).some((hit) => !lexicalKeys.has(`${hit.document_id}#${hit.page}#${hit.text}`));
    const fused = fuse(found, options.depth, semantic.fusion);
    const floorless = fuse(found, options.depth, { ...semantic.fusion, minSimilarity: -1 });
    if (found.lexical.length === 0) lexicalNothing++;
    if (fused.length === 0) fusedNothing++;
    if (floorless.length === 0) floorlessNothing++;
    if (onlyVectors(fused)) vectorOnly++;
    if (onlyVectors(floorless)) floorlessVectorOnly++;
  }
  return {
    queries: OFF_TOPIC.length,
    nothing_matched: { lexical: lexicalNothing, fused: fusedNothing, fused_without_floor: floorlessNothing },
    with_a_vector_only_passage_in_top_10: { fused: vectorOnly, fused_without_floor: floorlessVectorOnly },
    nearest_similarity: topSimilarity.sort((a, b) => a - b),
  };
}

/** The corpus's passage texts, as the index cuts them (for the e5-shaped model's cost). */
function corpusPassageTexts(corpus: Awaited<ReturnType<typeof loadCorpus>>): string[] {
  const projector = openProjector(":memory:", [searchIndexProjection]);
  projector.applyBatch(corpus.flatMap(({ file, pages }, index) => [
    recorded({
      type: "DocumentUploaded",
      data: {
        document_id: `d${index}`,
        person_id: PERSON,
        folder_id: "corpus",
        name: file.split("/").at(-1)!,
        type: file.split(".").at(-1) as DocumentType,
        size: 1,
        sha256: "0".repeat(64),
        preset: "basic",
      },
    }),
    recorded({
      type: "DocumentProcessed",
      data: {
        document_id: `d${index}`,
        preset: "basic",
        page_count: pages.length,
        pages_estimated: false,
        pages: pages.map((text, i) => ({ page: i + 1, text, marked: false, image_only: false })),
      },
    }),
  ]));
  const texts = corpus.flatMap((_, index) => passageInputs(projector.db, `d${index}`).texts);
  projector.close();
  return texts;
}

/**
 * The cost of a model of multilingual-e5-small's shape (random weights, see
 * `_e5_shape_model.ts`): embedding time over an even sample of the corpus's
 * passages, the model's memory, its query latency, and search p99 with its
 * 384-dimension vectors at the same size.
 */
async function e5Shape(
  quick: boolean,
  size: number,
  corpus: Awaited<ReturnType<typeof loadCorpus>>,
  texts: string[],
  passagesPerPage: number,
): Promise<Record<string, unknown>> {
  const rssBefore = Deno.memoryUsage().rss;
  const embedder = await onnxEmbedder(await e5ShapeModelDir(), { query: "query: ", passage: "passage: " });
  try {
    const sample = texts.filter((_, i) => i % Math.ceil(texts.length / (quick ? 48 : 160)) === 0);
    await embedder.embed(sample.slice(0, 4), "passage");
    const started = performance.now();
    const vectors = await embedder.embed(sample, "passage");
    const perPassage = (performance.now() - started) / sample.length;
    const rss = Deno.memoryUsage().rss - rssBefore;
    const queryMs: number[] = [];
    for (const query of benchQueries(corpus).slice(0, quick ? 20 : 60)) {
      const at = performance.now();
      await embedder.embed([query], "query");
      queryMs.push(performance.now() - at);
    }
    const semantic = new SemanticSearch(embedder);
    const speed = await speedAt(size, semantic, vectors, corpus);
    const dims = vectors[0]!.length;
    return {
      model: "multilingual-e5-small's shape, random weights",
      dimensions: dims,
      sample_passages: sample.length,
      embed_ms_per_1000_pages: Math.round(perPassage * passagesPerPage * 1000),
      model_rss_mb: round(rss / 1e6, 1),
      query_embed_ms: {
        p50: round(percentile(queryMs, 0.5), 2),
        p99: round(percentile(queryMs, 0.99), 2),
      },
      speed,
      event_bytes_per_100k_pages: Math.round(passagesPerPage * 100_000 * (Math.ceil((dims * 4) / 3) + 200)),
      projection_bytes_per_100k_pages: Math.round(((speed.vector_bytes as number) / size) * 100_000),
    };
  } finally {
    await embedder.close();
  }
}

async function speedAt(
  size: number,
  semantic: SemanticSearch,
  vectors: Float32Array[],
  corpus: Awaited<ReturnType<typeof loadCorpus>>,
): Promise<Record<string, unknown>> {
  const built = await buildIndexes(corpus, size);
  // Vectors go into a copy, so the cached index stays as the search benchmark measures it (size included).
  built.sergo.close();
  const copy = Deno.makeTempFileSync({ suffix: ".db" });
  Deno.copyFileSync(built.sergo_path, copy);
  const sergo = new DatabaseSync(copy);
  const { plain } = built;
  searchVectorsProjection.init(sergo);
  fillVectors(sergo, semantic.model, vectors);
  const vectorBytes = (sergo.prepare("SELECT sum(length(vectors)) AS n FROM search_vector_sets").get() as {
    n: number;
  }).n;
  const queries = benchQueries(corpus);
  const options = { personId: PERSON, folderIds: null, documentIds: [], depth: DEPTH };
  for (const query of queries.slice(0, 10)) {
    await semantic.search(sergo, { ...options, query: `${query} warm` });
  }
  const fusedMs: number[] = [], lexicalMs: number[] = [], plainMs: number[] = [];
  const loadAtStart = Deno.loadavg()[0] ?? 0;
  for (const [index, query] of queries.entries()) {
    const runs = [
      async () => {
        const started = performance.now();
        await semantic.search(sergo, { ...options, query });
        fusedMs.push(performance.now() - started);
      },
      () => {
        const started = performance.now();
        searchPassages(sergo, { ...options, query });
        lexicalMs.push(performance.now() - started);
      },
      () => {
        const started = performance.now();
        plainSearch(plain, query, DEPTH);
        plainMs.push(performance.now() - started);
      },
    ];
    for (let i = 0; i < runs.length; i++) await runs[(i + index) % runs.length]!();
  }
  const loadAtEnd = Deno.loadavg()[0] ?? 0;
  const rss = Deno.memoryUsage().rss;
  sergo.close();
  plain.close();
  Deno.removeSync(copy);
  const ms = (values: number[]) => ({
    p50: round(percentile(values, 0.5), 2),
    p99: round(percentile(values, 0.99), 2),
  });
  return {
    pages: size,
    fused_ms: ms(fusedMs),
    lexical_ms: ms(lexicalMs),
    plain_ms: ms(plainMs),
    fused_vs_plain_p99: round(percentile(fusedMs, 0.99) / percentile(plainMs, 0.99)),
    rss_mb: round(rss / 1e6, 1),
    vector_bytes: vectorBytes,
    /** The 1-minute load average when the interleaved timing began and ended (2 cores). */
    load_average: { start: round(loadAtStart, 2), end: round(loadAtEnd, 2) },
  };
}

/** Gives every synthetic document's passages vectors of corpus pages, in turn, as `PassagesEmbedded` would. */
function fillVectors(db: DatabaseSync, model: string, vectors: Float32Array[]): void {
  const documents =
    (db.prepare("SELECT document_id FROM search_documents ORDER BY document_id").all() as Array<
      { document_id: string }
    >).map((row) => row.document_id);
  let next = 0;
  db.exec("BEGIN");
  for (const documentId of documents) {
    const inputs = passageInputs(db, documentId);
    const chosen = inputs.texts.map(() => vectors[next++ % vectors.length]!);
    searchVectorsProjection.apply(
      db,
      recorded({
        type: "PassagesEmbedded",
        data: {
          document_id: documentId,
          model,
          dimensions: chosen[0]!.length,
          passages: chosen.length,
          text_sha256: inputs.sha256,
          vectors: packVectors(chosen, chosen[0]!.length),
        },
      }),
    );
  }
  db.exec("COMMIT");
}

function rowsOf(result: {
  quality: Record<string, unknown>;
  speed: Record<string, unknown>;
  cost: Record<string, unknown>;
  e5: Record<string, unknown>;
}): SummaryRow[] {
  const obj = (value: unknown) => value as Record<string, Record<string, number>>;
  const fused = obj(result.quality.fused), lexical = obj(result.quality.lexical);
  const rows: SummaryRow[] = [];
  for (const part of ["overall", "tuning", "held_out"]) {
    const f = fused[part]!, l = lexical[part]!;
    rows.push({
      figure: `semantic on, ${part.replace("_", "-")} (${f.questions} q.): fused vs lexical recall@10, MRR`,
      sergo: `${f.recall_at_10}, ${f.mrr}`,
      baseline: `${l.recall_at_10}, ${l.mrr}`,
      ratio: l.mrr ? round(f.mrr! / l.mrr) : null,
      budget: "reported",
      pass: null,
    });
  }
  const kinds = fused.kinds as unknown as Record<string, Record<string, number>>;
  const lexicalKinds = lexical.kinds as unknown as Record<string, Record<string, number>>;
  for (const [kind, f] of Object.entries(kinds)) {
    if ((f.questions ?? 0) < 15) continue;
    const l = lexicalKinds[kind]!;
    rows.push({
      figure: `  kind ${kind} (${f.questions} q.): fused vs lexical`,
      sergo: `${f.recall_at_10}, ${f.mrr}`,
      baseline: `${l.recall_at_10}, ${l.mrr}`,
      ratio: l.mrr ? round(f.mrr! / l.mrr) : null,
      budget: "reported",
      pass: null,
    });
  }
  const best = result.quality.best_on_tuning as Record<string, Record<string, number>>;
  const bestHeld = best.held_out!, lexicalHeld = lexical.held_out!;
  rows.push({
    figure:
      `  fusion best on the tuning part (vector weight ${best.semanticWeight}, min. cosine ${best.minSimilarity}): held-out vs lexical`,
    sergo: `${bestHeld.recall_at_10}, ${bestHeld.mrr}`,
    baseline: `${lexicalHeld.recall_at_10}, ${lexicalHeld.mrr}`,
    ratio: lexicalHeld.mrr ? round(bestHeld.mrr! / lexicalHeld.mrr) : null,
    budget: "reported",
    pass: null,
  });
  const offTopic = result.quality.off_topic as Record<string, Record<string, number>>;
  rows.push({
    figure:
      `  ${offTopic.queries} questions about nothing in the corpus: with a vector-only passage in the top 10`,
    sergo: `${offTopic.with_a_vector_only_passage_in_top_10!.fused} (floor ${
      (result.quality.fusion as Record<string, number>).minSimilarity
    })`,
    baseline: "0 (lexical)",
    ratio: null,
    budget: "reported",
    pass: null,
  });
  if (!result.speed) return rows;
  const speed = result.speed as Record<string, Record<string, number>>;
  rows.push({
    figure: `semantic search p99 at ${
      (speed.pages as unknown as number).toLocaleString("en")
    } pages (query vector included) ÷ plain bm25 OR`,
    sergo: `p50 ${speed.fused_ms!.p50} ms, p99 ${speed.fused_ms!.p99} ms (lexical alone p99 ${
      speed.lexical_ms!.p99
    } ms)`,
    baseline: `p50 ${speed.plain_ms!.p50} ms, p99 ${speed.plain_ms!.p99} ms`,
    ratio: speed.fused_vs_plain_p99 as unknown as number,
    budget: "reported",
    pass: null,
  });
  const e5 = result.e5 as Record<string, Record<string, number>>;
  const e5Speed = e5.speed as unknown as Record<string, Record<string, number>>;
  rows.push({
    figure: `  with a model of multilingual-e5-small's shape (384-d, random weights): p99 ÷ plain bm25 OR`,
    sergo: `p50 ${e5Speed.fused_ms!.p50} ms, p99 ${e5Speed.fused_ms!.p99} ms (query vector p50 ${
      e5.query_embed_ms!.p50
    } ms)`,
    baseline: `p50 ${e5Speed.plain_ms!.p50} ms, p99 ${e5Speed.plain_ms!.p99} ms`,
    ratio: e5Speed.fused_vs_plain_p99 as unknown as number,
    budget: "reported",
    pass: null,
  });
  const cost = result.cost as Record<string, number>;
  rows.push({
    figure:
      "semantic cost: embedding per 1,000 pages; model memory; disk per 100k pages (events + projection)",
    sergo: `${(cost.embed_ms_per_1000_pages! / 1000).toFixed(1)} s; ${cost.model_rss_mb} MB; ${
      ((cost.event_bytes_per_100k_pages! + cost.projection_bytes_per_100k_pages!) / 1e6).toFixed(0)
    } MB`,
    baseline: "",
    ratio: null,
    budget: "reported",
    pass: null,
  });
  const e5Cost = e5 as unknown as Record<string, number>;
  rows.push({
    figure: "  the same cost with multilingual-e5-small's shape (fp32, in process)",
    sergo: `${(e5Cost.embed_ms_per_1000_pages! / 1000).toFixed(0)} s; ${e5Cost.model_rss_mb} MB; ${
      ((e5Cost.event_bytes_per_100k_pages! + e5Cost.projection_bytes_per_100k_pages!) / 1e6).toFixed(0)
    } MB`,
    baseline: "",
    ratio: null,
    budget: "reported",
    pass: null,
  });
  return rows;
}

if (import.meta.main) {
  const result = await benchSemantic({
    quick: Deno.args.includes("--quick"),
    qualityOnly: Deno.args.includes("--quality-only"),
  });
  console.log(JSON.stringify({ ...result, rows: undefined }, null, 2));
}
