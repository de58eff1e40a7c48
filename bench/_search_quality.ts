/**
 * Search quality (issue 15): recall@10 and MRR of Sergo's search beside a
 * plain FTS5 bm25 OR query over the same corpus pages, in the same run, on two
 * question sets:
 *
 * - `search_questions.json`, the main set: questions written from the corpus
 *   pages' text (not from what Sergo returns), in many languages, tagged with
 *   kinds, split by id into a tuning part and a held-out part. Each carries
 *   `evidence`, a phrase copied from its first answer page: a question whose
 *   evidence is not on that page (as `_corpus_text.ts` reads it) fails the
 *   benchmark, so the set cannot drift from the pages it names.
 * - `search_eval.json`, the older 58 questions (secondary).
 * - `search_questions_debian.json`, the second set (issue 27): 54 questions written before any ranking ran
 *   on them, over Debian's own manuals as their packages install them (`_debian_docs.ts`); all held out.
 * - `search_questions_handbook.json`, the third set (issue 27): 80 questions written and committed before
 *   any ranking ran on them, over The Debian Administrator's Handbook in eleven languages
 *   (`_handbook_docs.ts`), mostly English questions about pages in another language; all held out.
 * - `search_questions_guides.json`, the fourth set (issue 27): 81 questions written and committed before any
 *   ranking ran on them, over the Debian Installation Guide and the Debian Developer's Reference in twelve
 *   languages (`_guides_docs.ts`): English questions about pages in another language, questions in the
 *   page's own language, and questions in another language about the English pages; all held out.
 * - `search_questions_maint.json`, the fifth set: 91 questions written and committed before any ranking ran
 *   on them, over the New Maintainers' Guide, the aptitude manual and the Debian Reference's Spanish, French
 *   and Portuguese translations (`_maint_docs.ts`): half in the page's own language, four in ten English
 *   questions about pages in another language, one in ten in another language about the English pages;
 *   all held out.
 *
 * Sergo searches with the installed dictionaries (cross-language translation); the ablation shows it
 * without them.
 *
 * Figures are reported overall, for the tuning and held-out parts, and per
 * kind (with the number of questions of each); then an ablation: Sergo with
 * one part of its analysis or ranking turned off at a time, on the same
 * questions, so each part shows what it brings (on the held-out part).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { DocumentType, RecordedEvent } from "../events/types.ts";
import { openProjector } from "../projections/projector.ts";
import { createSearchIndexProjection } from "../projections/search_index.ts";
import { type AnalysisOptions, DEFAULT_ANALYSIS } from "../src/analysis/analysis.ts";
import { DEFAULT_RANKING, type RankingOptions, searchPassages } from "../src/search/lexical.ts";
import type { DictionaryLookup } from "../src/search/dictionaries.ts";
import { openDictionaryStore } from "../src/search/dictionary_store.ts";
import { distinctExcerpts, pageOfPassages } from "../src/mcp/tools/search.ts";
import type { CorpusFile } from "./_corpus_text.ts";
import { loadDebianDocs } from "./_debian_docs.ts";
import { loadGuidesDocs } from "./_guides_docs.ts";
import { loadHandbookDocs } from "./_handbook_docs.ts";
import { loadMaintDocs } from "./_maint_docs.ts";

/** One question of the main set. */
export interface QualityQuestion {
  id: number;
  /** `tuning` questions may guide changes to the ranking; `held-out` ones never do. */
  split: "tuning" | "held-out";
  question: string;
  /** The question's language (ISO 639-1). */
  language: string;
  /** The language of the answer page. */
  document_language: string;
  /**
   * What the question exercises: same-language, cross-language, paraphrase, keyword, exact, table, …;
   * inflected: a word of the page asked in another inflected or affixed form (Russian cases, Arabic
   * and Persian prefixes and suffixes).
   */
  kinds: string[];
  /** The pages that answer it: any of them counts. */
  answers: Array<{ file: string; pages: number[] }>;
  /** A phrase copied from the first answer page. */
  evidence: string;
}

/** One question of the older set. */
interface OldQuestion {
  question: string;
  file: string;
  pages: number[];
}

/** A search to measure: the query's pages (`file#page`) in rank order. */
export type PageSearch = (query: string) => string[];

/** Recall@10 and MRR of one search over some questions. */
export interface Figures {
  questions: number;
  recall_at_10: number;
  mrr: number;
}

const PERSON = "bench-person";
const DEPTH = 50;
/** The `search` tool's default limit: the excerpts an agent sees in its first answer. */
const SHOWN_LIMIT = 10;
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
const normalize = (text: string) => text.normalize("NFC").replace(/\s+/g, " ").trim();

/** Reads a set (the main one by default) and checks every question's evidence against its page. */
export async function loadQuestions(
  corpus: CorpusFile[],
  file = "search_questions.json",
): Promise<QualityQuestion[]> {
  const questions = JSON.parse(
    await Deno.readTextFile(new URL(`./${file}`, import.meta.url)),
  ) as QualityQuestion[];
  const pages = new Map(corpus.map((file) => [file.file, file.pages]));
  for (const question of questions) {
    const first = question.answers[0];
    const text = first ? pages.get(first.file)?.[first.pages[0]! - 1] : undefined;
    if (text === undefined || !normalize(text).includes(normalize(question.evidence))) {
      throw new Error(
        `Question ${question.id} names a page without its evidence: "${question.evidence}" is not on ${first?.file} page ${
          first?.pages[0]
        }`,
      );
    }
  }
  return questions;
}

/** The rank (1-based) of the first answer page among the first 10 distinct pages, or 0. */
function rankOf(found: string[], wanted: ReadonlySet<string>): number {
  const distinct = [...new Set(found)].slice(0, 10);
  return distinct.findIndex((page) => wanted.has(page)) + 1;
}

function figuresOf(ranks: number[]): Figures {
  const n = ranks.length;
  return {
    questions: n,
    recall_at_10: n ? round(ranks.filter((rank) => rank > 0).length / n) : 0,
    mrr: n ? round(ranks.reduce((sum, rank) => sum + (rank > 0 ? 1 / rank : 0), 0) / n) : 0,
  };
}

/** Figures of one search on the main set: overall, per part, per kind, and the held-out misses. */
export function scoreSearch(questions: QualityQuestion[], search: PageSearch): Record<string, unknown> {
  const ranks = new Map<number, number>();
  for (const question of questions) {
    const wanted = new Set(
      question.answers.flatMap(({ file, pages }) => pages.map((page) => `${file}#${page}`)),
    );
    ranks.set(question.id, rankOf(search(question.question), wanted));
  }
  const of = (subset: QualityQuestion[]) => figuresOf(subset.map((question) => ranks.get(question.id)!));
  const kinds = [...new Set(questions.flatMap((question) => question.kinds))].sort();
  const byKind = (subset: QualityQuestion[]) =>
    Object.fromEntries(
      kinds.map((kind) => [kind, of(subset.filter((question) => question.kinds.includes(kind)))]),
    );
  const pairs = [...new Set(questions.map(languagePair))].sort();
  const tuning = questions.filter((question) => question.split === "tuning");
  const heldOut = questions.filter((question) => question.split === "held-out");
  return {
    overall: of(questions),
    tuning: of(tuning),
    held_out: of(heldOut),
    kinds: byKind(questions),
    held_out_kinds: byKind(heldOut),
    languages: Object.fromEntries(
      pairs.map((pair) => [pair, of(questions.filter((question) => languagePair(question) === pair))]),
    ),
    ranks: Object.fromEntries(ranks),
  };
}

/** The question's language and the page's, such as `en→ja`. */
function languagePair(question: QualityQuestion): string {
  return `${question.language}→${question.document_language}`;
}

/** The corpus indexed twice: by Sergo's projection and as a plain FTS5 table, one row per page. */
export interface QualityIndexes {
  sergo: PageSearch;
  /**
   * Sergo's pages as the `search` tool shows them to an agent: the first answer at the default limit (10
   * excerpts, each document at most half of them, repeated excerpts once), grouped by document in the order of
   * each document's best excerpt, read top to bottom. What an outside evaluation through MCP counts.
   */
  shown: PageSearch;
  /** The same view of Sergo's search with another ranking. */
  shownRanked(ranking: RankingOptions, dictionaries?: DictionaryLookup | null): PageSearch;
  /** Sergo's search with another ranking over the same index. */
  ranked(ranking: RankingOptions, dictionaries?: DictionaryLookup | null): PageSearch;
  plain: PageSearch;
  close(): void;
}

/** Builds both indexes over the corpus pages, Sergo's with `analysis`. */
export function buildQualityIndexes(
  corpus: CorpusFile[],
  analysis = DEFAULT_ANALYSIS,
  dictionaries: DictionaryLookup | null = null,
): QualityIndexes {
  const projector = openProjector(":memory:", [createSearchIndexProjection(analysis)]);
  const plain = new DatabaseSync(":memory:");
  plain.exec("CREATE VIRTUAL TABLE plain USING fts5 (text, tokenize = 'porter unicode61')");
  const insertPlain = plain.prepare("INSERT INTO plain (rowid, text) VALUES (?, ?)");
  const plainPages: string[] = [];
  const events: RecordedEvent[] = [];
  const recorded = (event: Pick<RecordedEvent, "type" | "data">): RecordedEvent =>
    ({
      ...event,
      metadata: { time: "2026-01-01T00:00:00.000Z" },
      position: events.length + 1,
      stream: `document-${events.length + 1}`,
      stream_version: 1,
      schema_version: 1,
      prev_hash: "0".repeat(64),
      hash: "0".repeat(64),
    }) as RecordedEvent;
  for (const [index, { file, pages }] of corpus.entries()) {
    const type = file.split(".").at(-1) as DocumentType;
    events.push(recorded({
      type: "DocumentUploaded",
      data: {
        document_id: `d${index}`,
        person_id: PERSON,
        folder_id: "corpus",
        name: file.split("/").at(-1)!,
        type,
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
    pages.forEach((text, i) => {
      plainPages.push(`${file}#${i + 1}`);
      insertPlain.run(plainPages.length, text);
    });
  }
  projector.applyBatch(events);
  const fileOf = new Map(corpus.map(({ file }, index) => [`d${index}`, file]));
  const searchPlain = plain.prepare("SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY rank LIMIT ?");
  const hits = (query: string, ranking: RankingOptions, withDictionaries: DictionaryLookup | null) =>
    searchPassages(projector.db, {
      personId: PERSON,
      folderIds: null,
      documentIds: [],
      query,
      depth: DEPTH,
      analysis,
      ranking,
      dictionaries: withDictionaries,
    });
  const pageOf = (hit: { document_id: string; page: number | null }) =>
    `${fileOf.get(hit.document_id)}#${hit.page}`;
  const ranked = (ranking: RankingOptions, withDictionaries = dictionaries): PageSearch => (query) =>
    hits(query, ranking, withDictionaries).map(pageOf);
  const shownRanked = (ranking: RankingOptions, withDictionaries = dictionaries): PageSearch => (query) => {
    const { page } = pageOfPassages(
      distinctExcerpts(hits(query, ranking, withDictionaries)),
      SHOWN_LIMIT,
      0,
    );
    const byDocument = Map.groupBy(page, (hit) => hit.document_id);
    return [...byDocument.values()].flat().map(pageOf);
  };
  return {
    sergo: ranked(DEFAULT_RANKING),
    shown: shownRanked(DEFAULT_RANKING),
    shownRanked,
    ranked,
    plain: (query) => {
      const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
      if (words.length === 0) return [];
      const rows = searchPlain.all(words.map((word) => `"${word}"`).join(" OR "), DEPTH) as Array<
        { rowid: number }
      >;
      return rows.map((row) => plainPages[row.rowid - 1]!);
    },
    close() {
      projector.close();
      plain.close();
    },
  };
}

/** The questions a part of the analysis or ranking is for (a subset named by the questions' own tags). */
interface Target {
  name: string;
  test(question: QualityQuestion): boolean;
}

/** One part of the analysis or ranking turned off (or, for a part left out, on). */
interface Ablation {
  name: string;
  analysis?: Partial<AnalysisOptions>;
  ranking?: Partial<RankingOptions>;
  /** The questions the part is for, beside all of them. */
  target?: Target;
  /** Without the dictionaries (cross-language translation off). */
  withoutDictionaries?: true;
}

const CROSS_LANGUAGE: Target = {
  name: "question in another language than the page's",
  test: (q) => q.kinds.includes("cross-language"),
};
const SNOWBALL_LANGUAGES = new Set(["en", "fr", "es", "pt", "de", "id"]);
const TARGETS = {
  snowball: {
    name: "question and page in a Snowball language (en fr es pt de id)",
    test: (q) => SNOWBALL_LANGUAGES.has(q.language) && SNOWBALL_LANGUAGES.has(q.document_language),
  },
  cyrillic: {
    name: "question in Russian or Ukrainian",
    test: (q) => q.language === "ru" || q.language === "uk",
  },
  arabic: { name: "question in Arabic or Persian", test: (q) => q.language === "ar" || q.language === "fa" },
  cjk: { name: "question in Chinese or Japanese", test: (q) => q.language === "zh" || q.language === "ja" },
  notEnglish: { name: "question not in English", test: (q) => q.language !== "en" },
  cjkPage: {
    name: "page in Chinese, Japanese or Korean",
    test: (q) => ["zh", "ja", "ko"].includes(q.document_language),
  },
  number: { name: "kind number", test: (q) => q.kinds.includes("number") },
  slides: { name: "kind slides", test: (q) => q.kinds.includes("slides") },
  long: { name: "kind long", test: (q) => q.kinds.includes("long") },
  multiword: { name: "kind question (full sentences)", test: (q) => q.kinds.includes("question") },
  paraphrase: { name: "kind paraphrase", test: (q) => q.kinds.includes("paraphrase") },
  sameLanguage: {
    name: "question in the page's language",
    test: (q) => !q.kinds.includes("cross-language"),
  },
} satisfies Record<string, Target>;

/** Each part in turn turned off (or on, for one that is off), with the questions it is for. */
export const ABLATIONS: readonly Ablation[] = [
  { name: "without the dictionaries (no translation)", withoutDictionaries: true, target: CROSS_LANGUAGE },
  {
    name: `translated words' document frequency ${
      DEFAULT_RANKING.languageIdf ? "pooled over both languages" : "counted apart per side"
    }`,
    ranking: { languageIdf: !DEFAULT_RANKING.languageIdf },
    target: TARGETS.sameLanguage,
  },
  {
    name: "without Snowball stemming (Latin script)",
    analysis: { stemming: false },
    target: TARGETS.snowball,
  },
  {
    name: "without Russian stemming",
    analysis: { russianStemming: false },
    target: TARGETS.cyrillic,
  },
  {
    name: "Russian stems one way (not both)",
    analysis: { russianStemming: true, russianBothWays: false },
    target: TARGETS.cyrillic,
  },
  {
    name: "without Arabic/Persian light stemming",
    analysis: { arabicStemming: false },
    target: TARGETS.arabic,
  },
  {
    name: `${DEFAULT_ANALYSIS.segmentation ? "without" : "with"} Chinese/Japanese dictionary words`,
    analysis: { segmentation: !DEFAULT_ANALYSIS.segmentation },
    target: TARGETS.cjk,
  },
  { name: "without joined grouped numbers", analysis: { numbers: false }, target: TARGETS.number },
  {
    name: "without half length for Chinese/Japanese/Korean tokens",
    analysis: { halfUnspacedLength: false },
    target: TARGETS.cjkPage,
  },
  {
    name: `${DEFAULT_RANKING.fields ? "without" : "with"} fields (heading, notes, name weighed apart)`,
    ranking: { fields: !DEFAULT_RANKING.fields },
    target: TARGETS.slides,
  },
  { name: "without term frequency", ranking: { termFrequency: false }, target: TARGETS.long },
  { name: "without proximity", ranking: { proximity: false }, target: TARGETS.multiword },
  { name: "without coverage", ranking: { coverage: false }, target: TARGETS.multiword },
  {
    name: "with page evidence (a page's other passages add a quarter of their scores to its best)",
    ranking: { pageEvidence: 0.25 },
    target: TARGETS.paraphrase,
  },
  {
    name: "with page scores (a page's BM25 over all its passages, half of it added to its best passage)",
    ranking: { pageScore: 0.5 },
    target: TARGETS.paraphrase,
  },
  {
    name: "without the English ranking beside a question in another language (every third place)",
    ranking: { englishEvery: 0 },
    target: TARGETS.notEnglish,
  },
  { name: "re-scoring the best 100 (not 50)", ranking: { rerank: 100 } },
  { name: "re-scoring the best 200 (not 50)", ranking: { rerank: 200 } },
  { name: "without re-scoring (first stage only)", ranking: { rescore: false } },
];

/** Figures of a search on some questions, split into tuning and held-out. */
function parts(questions: QualityQuestion[], ranks: Record<string, unknown>) {
  const of = (subset: QualityQuestion[]) => figuresOf(subset.map((question) => Number(ranks[question.id])));
  return {
    tuning: of(questions.filter((question) => question.split === "tuning")),
    held_out: of(questions.filter((question) => question.split === "held-out")),
  };
}

/** Sergo with each part changed in turn: figures tuning and held-out, overall and on the part's target. */
function ablate(
  corpus: CorpusFile[],
  questions: QualityQuestion[],
  indexes: QualityIndexes,
  shipped: Record<string, unknown>,
  dictionaries: DictionaryLookup | null,
): unknown[] {
  const out: unknown[] = [];
  for (const ablation of ABLATIONS) {
    const analysis = { ...DEFAULT_ANALYSIS, ...ablation.analysis };
    const ranking = { ...DEFAULT_RANKING, ...ablation.ranking };
    const built = ablation.analysis ? buildQualityIndexes(corpus, analysis, dictionaries) : null;
    try {
      const search = (built ?? indexes).ranked(ranking, ablation.withoutDictionaries ? null : dictionaries);
      const figures = scoreSearch(questions, search);
      const targeted = ablation.target ? questions.filter(ablation.target.test) : null;
      out.push({
        name: ablation.name,
        overall: figures.overall,
        tuning: figures.tuning,
        held_out: figures.held_out,
        target: targeted && {
          name: ablation.target!.name,
          without: parts(targeted, obj(figures.ranks)),
          shipped: parts(targeted, obj(shipped.ranks)),
        },
      });
    } finally {
      built?.close();
    }
  }
  return out;
}

/**
 * The installed dictionaries as `serve` uses them: looked up in their SQLite file (made on the first run,
 * in `bench/data/`, and again when a dictionary changes).
 */
export async function benchDictionaries(): Promise<DictionaryLookup> {
  const data = new URL("./data/", import.meta.url);
  await Deno.mkdir(data, { recursive: true });
  return openDictionaryStore({ path: new URL("dictionaries.sqlite", data).pathname });
}

/**
 * Sergo and plain bm25 on a set whose questions were written before any ranking ran on them and never
 * guide a change (all held out): overall, per kind and per language pair, without the dictionaries, as
 * the search tool shows it, and the misses.
 */
async function benchUnseenSet(corpus: CorpusFile[], file: string): Promise<Record<string, unknown>> {
  const questions = await loadQuestions(corpus, file);
  const dictionaries = await benchDictionaries();
  const indexes = buildQualityIndexes(corpus, DEFAULT_ANALYSIS, dictionaries);
  try {
    const sergo = scoreSearch(questions, indexes.sergo);
    const withoutDictionaries = scoreSearch(questions, indexes.ranked(DEFAULT_RANKING, null));
    const shown = scoreSearch(questions, indexes.shown);
    const plain = scoreSearch(questions, indexes.plain);
    const misses = questions
      .filter((question) => obj(sergo.ranks)[question.id] === 0)
      .map((question) => `${question.id}: ${question.question}`);
    return {
      questions: questions.length,
      sergo: { ...sergo, tuning: undefined, held_out: undefined, held_out_kinds: undefined },
      plain_bm25_or: { ...plain, tuning: undefined, held_out: undefined, held_out_kinds: undefined },
      without_dictionaries: { overall: withoutDictionaries.overall, kinds: withoutDictionaries.kinds },
      as_shown: { overall: shown.overall, kinds: shown.kinds },
      misses,
    };
  } finally {
    indexes.close();
  }
}

/** Sergo and plain bm25 on the second set (Debian's manuals, `_debian_docs.ts`). */
export async function benchDebianQuality(): Promise<Record<string, unknown>> {
  return benchUnseenSet(await loadDebianDocs(), "search_questions_debian.json");
}

/** Sergo and plain bm25 on the third set (The Debian Administrator's Handbook, `_handbook_docs.ts`). */
export async function benchHandbookQuality(): Promise<Record<string, unknown>> {
  return benchUnseenSet(await loadHandbookDocs(), "search_questions_handbook.json");
}

/**
 * Sergo and plain bm25 on the fourth set (the Debian Installation Guide and Developer's Reference,
 * `_guides_docs.ts`).
 */
export async function benchGuidesQuality(): Promise<Record<string, unknown>> {
  return benchUnseenSet(await loadGuidesDocs(), "search_questions_guides.json");
}

/**
 * Sergo and plain bm25 on the fifth set (the New Maintainers' Guide, the aptitude manual and the Debian
 * Reference's Spanish, French and Portuguese translations, `_maint_docs.ts`).
 */
export async function benchMaintQuality(): Promise<Record<string, unknown>> {
  return benchUnseenSet(await loadMaintDocs(), "search_questions_maint.json");
}

/** Recall@10 and MRR of Sergo and plain bm25 on both sets. */
export async function benchQuality(corpus: CorpusFile[]): Promise<Record<string, unknown>> {
  const questions = await loadQuestions(corpus);
  const dictionaries = await benchDictionaries();
  const old = JSON.parse(
    await Deno.readTextFile(new URL("./search_eval.json", import.meta.url)),
  ) as OldQuestion[];
  const indexes = buildQualityIndexes(corpus, DEFAULT_ANALYSIS, dictionaries);
  try {
    const sergo = scoreSearch(questions, indexes.sergo);
    const shown = scoreSearch(questions, indexes.shown);
    const plain = scoreSearch(questions, indexes.plain);
    const oldFigures = (search: PageSearch) =>
      figuresOf(
        old.map((q) => rankOf(search(q.question), new Set(q.pages.map((page) => `${q.file}#${page}`)))),
      );
    const misses = questions
      .filter((question) => question.split === "held-out" && obj(sergo.ranks)[question.id] === 0)
      .map((question) => `${question.id}: ${question.question}`);
    return {
      questions: questions.length,
      sergo: { ...sergo, ranks: undefined },
      plain_bm25_or: { ...plain, ranks: undefined },
      as_shown: {
        overall: shown.overall,
        tuning: shown.tuning,
        held_out: shown.held_out,
        kinds: shown.kinds,
      },
      held_out_misses: misses,
      dictionaries: dictionaries.pairs(),
      ablation: ablate(corpus, questions, indexes, sergo, dictionaries),
      search_eval_58: { sergo: oldFigures(indexes.sergo), plain_bm25_or: oldFigures(indexes.plain) },
    };
  } finally {
    indexes.close();
  }
}

function obj(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? value as Record<string, unknown> : {};
}
