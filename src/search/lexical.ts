/**
 * Lexical ranking: BM25 over fields, with proximity and coverage of the
 * query's terms, computed from the statistics of the searched scope only.
 *
 * FTS5's own `bm25()` counts document frequencies and lengths over the whole
 * index, so one person's files would change the order of another's results.
 * Here every figure comes from the scope: the number of passages and their
 * mean length from `search_documents`' per-document sums, each term's
 * document frequency from an FTS5 query joined to the scope's tokens, and
 * candidates only from passages in the scope. Term frequencies, fields and
 * positions come from analyzing the candidates' own stored text (in the
 * language the index found for it). So a ranking
 * depends on nothing outside the scope, by construction.
 *
 * Two stages keep the cost bounded: the scope's passages that hold the
 * rarest terms (within a budget) are candidates, scored by BM25 with every
 * matched term counted once (the more common terms only add to candidates
 * found by the rare ones); the best {@linkcode RERANK} are re-scored from their
 * text. When every term is common (in {@linkcode DF_CAP} passages, or a
 * quarter of the scope's), the newest passages holding all the terms come
 * first, then those holding any, at most {@linkcode DF_CAP} of each.
 *
 * The index is read through the queries of `projections/search_index.ts`
 * (the scope's sums, full-text matches, the candidates' rows); the scoring
 * here is arithmetic over what they return.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import {
  candidateRows,
  matchingRowids,
  pageNeighbours,
  passageHit,
  type RescoringRow,
  rescoringRow,
  scopeHoldsEveryPassage,
  scopeStatistics,
} from "../../projections/search_index.ts";
import {
  type AnalysisOptions,
  DEFAULT_ANALYSIS,
  type QueryTerm,
  queryTerms,
  quoteTerm,
  termExpression,
  TermMatcher,
} from "../analysis/analysis.ts";
import type { DictionaryLookup } from "./dictionaries.ts";
import { installedDictionaries } from "./installed_dictionaries.ts";
import { passageFields } from "../analysis/fields.ts";
import { isEmptyScope, scopeTokens, type SearchScope } from "../analysis/scope.ts";
import { translateTerms } from "./translation.ts";

/** Which parts of the ranking run (all by default; the search benchmark turns them off one at a time). */
export interface RankingOptions {
  /** Headings, notes and file names weigh apart from the body (else they count as body). */
  fields: boolean;
  /** Terms count as often as they occur (else once). */
  termFrequency: boolean;
  /** Query terms near each other in the body add to the score. */
  proximity: boolean;
  /** The share of the query's terms a passage holds scales its score. */
  coverage: boolean;
  /** Candidates are re-scored from their text (else the first stage's order stands). */
  rescore: boolean;
  /** How many of the first stage's best are re-scored (at least the depth asked). */
  rerank: number;
  /**
   * A page's other re-scored passages add this share of their scores to its best passage's, so a page
   * whose evidence is spread over its passages is not outranked by one that packs it in one (0: off).
   */
  pageEvidence: number;
  /**
   * A question in another language is also ranked with its translatable words in English only, and every
   * `englishEvery`th place of the answer is that ranking's next passage (0: off). Its own words found in
   * its own language's pages otherwise keep English pages out of reach (`back` terms are searched in English
   * only where the scope lacks their own forms).
   */
  englishEvery: number;
  /**
   * A translated word's document frequency is counted apart for its own forms and for its translations,
   * and a passage is weighed by the one it is read in (its own forms, or translations only), instead of
   * pooled over both languages, which lowered the weight of an English question's translatable words
   * against its names and numbers on English pages.
   */
  languageIdf: boolean;
  /**
   * Each page of the re-scored passages is scored as a whole too (BM25 over all its passages' text, with the
   * scope's statistics and the same terms; its other passages are read for it), and its best passage adds
   * this share of that score to its own (0: off).
   */
  pageScore: number;
}

/** The ranking search uses. */
export const DEFAULT_RANKING: Readonly<RankingOptions> = {
  // Measured and off: no gain on the held-out questions (see the README's ablation table).
  fields: false,
  termFrequency: true,
  proximity: true,
  coverage: true,
  rescore: true,
  // The best 100 showed no gain over the best 50 on the held-out questions.
  rerank: 50,
  // Measured and off: a quarter or a half of the other passages' scores lowered the tuning questions' MRR
  // (0.813 -> 0.806 -> 0.802 with dictionaries on), paraphrases included.
  pageEvidence: 0,
  languageIdf: false,
  // Every third place: on four sets, questions about English pages asked in German, Dutch, Russian and
  // Japanese found (recall 0.642 -> 0.667 on the fourth set, 0.786 -> 0.800 on the second), MRR within
  // 0.002 on each but the fourth (+0.007); every second place cost same-language MRR (docs/search.md).
  englishEvery: 3,
  // Measured and off: 0.5 gained main held-out MRR (0.822 -> 0.837) but lost recall there (0.945 -> 0.932)
  // and both figures on the third set (0.850/0.682 -> 0.813/0.655), same-language included (docs/search.md).
  pageScore: 0,
};

/** What to search and where. */
export interface SearchOptions extends SearchScope {
  /** The user's words or question. */
  query: string;
  /** How many passages to return at most. */
  depth: number;
  /** The analysis, when measuring one without some of its parts (the index must have been built with it). */
  analysis?: AnalysisOptions;
  /** The ranking, when measuring one without some of its parts. */
  ranking?: RankingOptions;
  /** The dictionaries an English question is translated through (default: the installed ones; null: none). */
  dictionaries?: DictionaryLookup | null;
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
  /** The ranking's score, negated: lower is better. */
  rank: number;
}

/** One passage found, with its score (higher is better). */
export interface RankedPassage {
  passage_id: number;
  document_id: string;
  score: number;
}

/** Document frequencies are counted up to this many passages. */
export const DF_CAP = 4000;
/** A term in more than this share of the scope's passages is common, whatever the scope's size. */
const COMMON_SHARE = 0.25;
/** The rarest terms whose passages together stay under this many find the candidates. */
const DRIVER_BUDGET = 6000;
/** This many of the best first-stage candidates are re-scored from their text. */
export const RERANK = 100;
const K1 = 1.2;
const B = 0.75;
const WEIGHTS = { heading: 2.0, notes: 0.6, name: 1.0 };
/** Terms at most this many tokens apart in the body count as near. */
const NEAR = 8;
const PROXIMITY_WEIGHT = 0.5;
/** The score of a passage holding few of the query's terms keeps at least this share. */
const COVERAGE_FLOOR = 0.5;

interface Term {
  query: QueryTerm;
  expression: string;
  df: number;
  idf: number;
  /** The scope's passages holding the term, newest first, at most {@linkcode DF_CAP} (all when df is below). */
  rowids: number[];
  /** A translated term counted apart ({@linkcode RankingOptions.languageIdf}): its own forms, its translations. */
  split?: { own: Side; translated: Side };
}

/** One side of a translated term: the idf of its forms there and the passages holding them (up to the cap). */
interface Side {
  idf: number;
  rowids: Set<number>;
}

interface Candidate {
  passage_id: number;
  document_id: string;
  length: number;
  /** Indexes (into the terms) of the terms the passage holds. */
  holds: Set<number>;
  /** The passage's page (null for a file without pages), known once re-scored. */
  page?: number | null;
  /** Each term's count in the passage (all fields), known once re-scored. */
  counts?: number[];
  /** The passage's proximity bonus, known once re-scored. */
  near?: number;
  /** 1 when every term is common and the passage holds them all: such passages come first. */
  tier: number;
  score: number;
}

/**
 * The best passages for a query in a person's scope, best first, at most
 * `depth`, ranked from the scope's own statistics. Ties are broken by
 * document id, then reading order, so the same search always gives the same
 * order.
 */
export function searchPassages(db: DatabaseSync, options: SearchOptions): SearchHit[] {
  return lexicalSearch(db, options).map(({ passage_id, document_id, score }) => {
    const row = passageHit(db, passage_id)!;
    return {
      document_id,
      page: row.page,
      section: row.section,
      marked: row.marked === 1,
      text: row.text,
      rank: -score,
    };
  });
}

/** The best passages in scope for a query, best first, at most `depth`, with their scores. */
export function lexicalSearch(db: DatabaseSync, options: SearchOptions): RankedPassage[] {
  const depth = Math.max(0, Math.floor(options.depth));
  const analysis = options.analysis ?? DEFAULT_ANALYSIS;
  const ranking = options.ranking ?? DEFAULT_RANKING;
  const dictionaries = options.dictionaries === undefined ? installedDictionaries() : options.dictionaries;
  const queried = translateTerms(queryTerms(options.query, analysis), options.query, dictionaries, analysis);
  if (queried.length === 0 || depth === 0 || isEmptyScope(options)) return [];
  const stats = scopeStatistics(db, options);
  if (stats.passages === 0) return [];
  const scope = scopeTokens(options).map(quoteTerm).join(" OR ");
  // Every full-text query is limited to the scope's passages, by their tokens; when the scope holds every
  // passage of the index, they would match every row and are left out.
  const within: Within = scopeHoldsEveryPassage(db, options)
    ? (expression) => expression
    : (expression) => `(${scope}) AND ${expression}`;
  const rank = (queried: QueryTerm[]) => rankTerms(db, queried, { depth, analysis, ranking, stats, within });
  const primary = rank(queried);
  if (ranking.englishEvery < 2 || !queried.some((term) => term.back)) return primary;
  return interleave(primary, rank(inEnglish(queried)), ranking.englishEvery, depth);
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * A question in another language with its translatable words in English only: each word the dictionaries
 * translate back is searched as its English translations, and a Chinese or Japanese question's characters
 * (which would match its own language's pages) are left out; names, numbers and unknown words stay.
 */
function inEnglish(queried: QueryTerm[]): QueryTerm[] {
  return queried.flatMap((term) => {
    if (term.back && term.own !== undefined) {
      return [{ word: term.word, terms: term.terms.slice(term.own), prefix: false }];
    }
    return CJK.test(term.word) ? [] : [term];
  });
}

/** Two rankings merged: the first's, with every `every`th place the second's next, each passage once. */
function interleave(
  first: RankedPassage[],
  second: RankedPassage[],
  every: number,
  depth: number,
): RankedPassage[] {
  const out: RankedPassage[] = [];
  const seen = new Set<number>();
  let i = 0;
  let j = 0;
  while (out.length < depth && (i < first.length || j < second.length)) {
    const fromSecond = (out.length + 1) % every === 0 ? j < second.length : i >= first.length;
    const next = fromSecond ? second[j++]! : first[i++]!;
    if (seen.has(next.passage_id)) continue;
    seen.add(next.passage_id);
    out.push(next);
  }
  return out;
}

interface RankContext {
  depth: number;
  analysis: AnalysisOptions;
  ranking: RankingOptions;
  stats: { passages: number; tokens: number };
  within: Within;
}

function rankTerms(db: DatabaseSync, queried: QueryTerm[], context: RankContext): RankedPassage[] {
  const { depth, analysis, ranking, stats, within } = context;
  const terms: Term[] = [];
  const idfOf = (df: number) => Math.log(1 + (stats.passages - df + 0.5) / (df + 0.5));
  for (const query of queried) {
    const expression = termExpression(query);
    if (ranking.languageIdf && query.own !== undefined && query.own < query.terms.length) {
      // Each side's passages, newest first; together (the newest DF_CAP of both) they are the pooled term's.
      const [own, translated] = [query.terms.slice(0, query.own), query.terms.slice(query.own)].map((part) =>
        matchingRowids(db, { match: within(termExpression({ ...query, terms: part })), limit: DF_CAP })
      ) as [number[], number[]];
      const found = [...new Set([...own, ...translated])].sort((a, b) => b - a).slice(0, DF_CAP);
      if (found.length === 0) continue;
      const side = (list: number[]): Side => ({
        idf: idfOf(Math.max(1, list.length)),
        rowids: new Set(list),
      });
      terms.push({
        query,
        expression,
        df: found.length,
        idf: idfOf(found.length),
        rowids: found,
        split: { own: side(own), translated: side(translated) },
      });
      continue;
    }
    // A word of a question in another language is searched in its English translations only where the
    // scope holds none of its own forms: a page in the question's language that holds them is not outranked by
    // English pages holding a translation.
    if (query.back && query.own !== undefined && query.own > 0) {
      const own = { ...query, terms: query.terms.slice(0, query.own) };
      const found = matchingRowids(db, { match: within(termExpression(own)), limit: DF_CAP });
      if (found.length > 0) {
        terms.push({
          query: own,
          expression: termExpression(own),
          df: found.length,
          idf: idfOf(found.length),
          rowids: found,
        });
        continue;
      }
    }
    // The passages found count the term's document frequency (up to the cap) and serve as candidates below.
    const found = matchingRowids(db, { match: within(expression), limit: DF_CAP });
    const df = found.length;
    if (df === 0) continue;
    terms.push({ query, expression, df, idf: idfOf(df), rowids: found });
  }
  if (terms.length === 0) return [];
  const averageLength = Math.max(1, stats.tokens / stats.passages);
  const candidates = findCandidates(db, within, terms, Math.min(DF_CAP, stats.passages * COMMON_SHARE));
  for (const candidate of candidates.values()) {
    const norm = 1 - B + B * (candidate.length / averageLength);
    const idfs = idfsOf(terms, candidate.passage_id);
    for (const index of candidate.holds) {
      candidate.score += idfs[index]! * (K1 + 1) / (1 + K1 * norm);
    }
  }
  let ranked = [...candidates.values()].sort(byScore);
  if (ranking.rescore) {
    const rerank = ranked.slice(0, Math.max(ranking.rerank, depth));
    rescore(db, rerank, terms, averageLength, analysis, ranking);
    if (ranking.pageScore > 0) {
      const pages = widenToPages(db, rerank);
      rescore(
        db,
        rerank.filter((candidate) => candidate.counts === undefined),
        terms,
        averageLength,
        analysis,
        ranking,
      );
      addPageScores(pages, terms, averageLength, ranking);
    }
    if (ranking.pageEvidence > 0) addPageEvidence(rerank, ranking.pageEvidence);
    ranked = rerank.sort(byScore);
  }
  return ranked.slice(0, depth).map(({ passage_id, document_id, score }) => ({
    passage_id,
    document_id,
    score,
  }));
}

/**
 * Each term's idf for one passage: a translated term counted apart weighs by its translations' idf in a
 * passage read in translation (holding some term's translations and not its own forms), else by its own.
 */
function idfsOf(terms: Term[], passageId: number): number[] {
  if (!terms.some((term) => term.split)) return terms.map((term) => term.idf);
  const translation = terms.some((term) =>
    term.split && term.split.translated.rowids.has(passageId) && !term.split.own.rowids.has(passageId)
  );
  return terms.map((term) => term.split ? (translation ? term.idf : term.split.own.idf) : term.idf);
}

/** A full-text expression limited to the searched scope. */
type Within = (expression: string) => string;

/** The scope's passages holding the query's terms, with which terms each holds. */
function findCandidates(
  db: DatabaseSync,
  within: Within,
  terms: Term[],
  common: number,
): Map<number, Candidate> {
  const order = terms.map((_, index) => index).sort((a, b) => terms[a]!.df - terms[b]!.df || a - b);
  const drivers: number[] = [];
  let budget = 0;
  for (const index of order) {
    const { df } = terms[index]!;
    if (df >= DF_CAP || budget + df > DRIVER_BUDGET) break;
    drivers.push(index);
    budget += df;
  }
  const holding = new Map<number, Set<number>>();
  const first = new Set<number>();
  const hold = (rowid: number, index: number) => {
    const set = holding.get(rowid) ?? new Set<number>();
    set.add(index);
    holding.set(rowid, set);
  };
  if (terms.some((term) => term.df < common)) {
    // Drivers hold fewer than DF_CAP passages each, so their lists are whole.
    for (const index of drivers) {
      for (const rowid of terms[index]!.rowids) hold(rowid, index);
    }
    const anyDriver = `(${drivers.map((index) => terms[index]!.expression).join(" OR ")})`;
    // The drivers' passages (whole lists) are all the passages the other terms are looked for in.
    let lowest = Infinity;
    for (const rowid of holding.keys()) lowest = Math.min(lowest, rowid);
    for (const index of order.filter((index) => !drivers.includes(index))) {
      const term = terms[index]!;
      // A whole list meets the drivers' passages here, and so does a capped one from its last passage on
      // (it holds every passage of the term from there); below that, the index finds them (at most the
      // budget, which the drivers' passages stay under, so the limit never cuts).
      const found = term.rowids.filter((rowid) => holding.has(rowid));
      if (term.df >= DF_CAP && term.rowids.at(-1)! > lowest) {
        found.push(...matchingRowids(db, {
          match: within(`${anyDriver} AND ${term.expression}`),
          limit: DRIVER_BUDGET,
          fromRowid: lowest,
          beforeRowid: term.rowids.at(-1)!,
        }));
      }
      for (const rowid of found) hold(rowid, index);
    }
  } else {
    // Every term is common: the newest passages holding all of them, then any of them.
    const all = terms.map((term) => term.expression);
    const tiers = terms.length > 1 ? [within(all.join(" AND "))] : [];
    for (const rowid of tiers.length ? matchingRowids(db, { match: tiers[0]!, limit: DF_CAP }) : []) {
      for (const index of terms.keys()) hold(rowid, index);
      first.add(rowid);
    }
    if (holding.size < RERANK) {
      const found = matchingRowids(db, { match: within(`(${all.join(" OR ")})`), limit: DF_CAP });
      const floor = found.at(-1) ?? 0;
      const fresh = new Set(found.filter((rowid) => !holding.has(rowid)));
      for (const index of terms.keys()) {
        const term = terms[index]!;
        // The term's list holds every passage from `floor` on when it is whole or reaches below `floor`.
        const covers = term.rowids.length < DF_CAP || term.rowids.at(-1)! <= floor;
        const from = covers
          ? term.rowids.filter((rowid) => rowid >= floor)
          : matchingRowids(db, { match: within(term.expression), limit: DF_CAP, fromRowid: floor });
        for (const rowid of from) {
          if (fresh.has(rowid)) hold(rowid, index);
        }
      }
    }
  }
  const out = new Map<number, Candidate>();
  for (const [passage_id, document_id, length] of candidateRows(db, [...holding.keys()])) {
    const tier = first.has(passage_id) ? 1 : 0;
    out.set(passage_id, { passage_id, document_id, length, holds: holding.get(passage_id)!, tier, score: 0 });
  }
  return out;
}

/** Re-scores candidates from their stored text: BM25 over fields, proximity, coverage. */
function rescore(
  db: DatabaseSync,
  candidates: Candidate[],
  terms: Term[],
  averageLength: number,
  analysis: AnalysisOptions,
  ranking: RankingOptions,
): void {
  const matcher = new TermMatcher(terms.map((term) => term.query), analysis);
  for (const candidate of candidates) {
    const row = rescoringRow(db, candidate.passage_id);
    if (!row) continue;
    candidate.page = row.page;
    candidate.score = scoreFromText(row, candidate, { terms, matcher, averageLength, ranking });
  }
}

/** What {@linkcode scoreFromText} weighs a passage by, the same for every candidate of a search. */
interface TextScoring {
  terms: Term[];
  matcher: TermMatcher;
  averageLength: number;
  ranking: RankingOptions;
}

/** A candidate's score from its passage's stored text: BM25 over fields, proximity, coverage. */
function scoreFromText(row: RescoringRow, candidate: Candidate, scoring: TextScoring): number {
  const { terms, matcher, averageLength, ranking } = scoring;
  const tf = ranking.termFrequency ? (n: number) => n : (n: number) => Math.min(n, 1);
  const fields = passageFields(row, row);
  const language = row.language;
  const body = matcher.positions(fields.body, language);
  const heading = fields.heading ? matcher.positions(fields.heading, language) : null;
  const notes = fields.notes ? matcher.positions(fields.notes, language) : null;
  const name = matcher.positions(fields.name, "en");
  const norm = 1 - B + B * (candidate.length / averageLength);
  const idfs = idfsOf(terms, candidate.passage_id);
  const totalIdf = idfs.reduce((sum, idf) => sum + idf, 0);
  let score = 0;
  let held = 0;
  candidate.counts = [];
  terms.forEach((_term, index) => {
    const counts = {
      body: body[index]!.length,
      heading: heading ? heading[index]!.length : 0,
      notes: notes ? notes[index]!.length : 0,
      name: name[index]!.length,
    };
    const weighted = ranking.fields
      ? tf(counts.body) / norm + WEIGHTS.heading * tf(counts.heading) + WEIGHTS.notes * tf(counts.notes) +
        WEIGHTS.name * tf(counts.name)
      : tf(counts.body + counts.heading + counts.notes + counts.name) / norm;
    candidate.counts!.push(counts.body + counts.heading + counts.notes + counts.name);
    if (weighted > 0) {
      score += idfs[index]! * weighted * (K1 + 1) / (weighted + K1);
      held += idfs[index]!;
    }
  });
  candidate.near = ranking.proximity ? proximity(body, idfs) : 0;
  if (ranking.proximity) score += PROXIMITY_WEIGHT * candidate.near;
  if (ranking.coverage && totalIdf > 0) score *= COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * (held / totalIdf);
  return score;
}

/** One page of the re-scored passages: its passages among the candidates (all of them once widened). */
interface Page {
  passages: Candidate[];
  length: number;
}

/**
 * Adds every other passage of the candidates' pages to the candidates (not yet re-scored), and returns the
 * candidates grouped by page. A passage without a page is a page of its own.
 */
function widenToPages(db: DatabaseSync, candidates: Candidate[]): Page[] {
  const known = new Map(candidates.map((candidate) => [candidate.passage_id, candidate]));
  const pages = new Map<string, Page>();
  for (const candidate of [...candidates]) {
    const key = candidate.page === null || candidate.page === undefined
      ? `#${candidate.passage_id}`
      : `${candidate.document_id}\u0000${candidate.page}`;
    let page = pages.get(key);
    if (!page) {
      page = { passages: [], length: 0 };
      pages.set(key, page);
      for (
        const [passage_id, document_id, length] of pageNeighbours(
          db,
          candidate.passage_id,
          candidate.document_id,
          candidate.page ?? null,
        )
      ) {
        if (known.has(passage_id)) continue;
        const added: Candidate = {
          passage_id,
          document_id,
          length,
          holds: new Set(),
          tier: candidate.tier,
          score: 0,
        };
        known.set(passage_id, added);
        candidates.push(added);
        page.passages.push(added);
      }
    }
    page.passages.push(candidate);
  }
  for (const page of pages.values()) page.length = page.passages.reduce((sum, p) => sum + p.length, 0);
  return [...pages.values()];
}

/**
 * Scores each page as a whole (BM25 over its passages' summed term counts and length, against the mean length
 * of the candidates' pages; its best passage's proximity; the coverage of the terms it holds anywhere) and
 * adds {@linkcode RankingOptions.pageScore} of it to its best passage's score.
 */
function addPageScores(pages: Page[], terms: Term[], averageLength: number, ranking: RankingOptions): void {
  const passages = pages.reduce((sum, page) => sum + page.passages.length, 0);
  const averagePage = averageLength * Math.max(1, passages / Math.max(1, pages.length));
  const tf = ranking.termFrequency ? (n: number) => n : (n: number) => Math.min(n, 1);
  for (const page of pages) {
    const scored = page.passages.filter((p) => p.counts !== undefined);
    if (scored.length === 0) continue;
    const idfs = idfsOf(terms, scored[0]!.passage_id);
    const totalIdf = idfs.reduce((sum, idf) => sum + idf, 0);
    const norm = 1 - B + B * (page.length / averagePage);
    let score = 0;
    let held = 0;
    terms.forEach((_term, index) => {
      const count = tf(scored.reduce((sum, p) => sum + p.counts![index]!, 0)) / norm;
      if (count > 0) {
        score += idfs[index]! * count * (K1 + 1) / (count + K1);
        held += idfs[index]!;
      }
    });
    if (ranking.proximity) score += PROXIMITY_WEIGHT * Math.max(...scored.map((p) => p.near ?? 0));
    if (ranking.coverage && totalIdf > 0) score *= COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * (held / totalIdf);
    const best = scored.reduce((a, b) => byScore(a, b) <= 0 ? a : b);
    best.score += ranking.pageScore * score;
  }
}

/** Adds `share` of the scores of a page's other passages to its best passage's. */
function addPageEvidence(candidates: Candidate[], share: number): void {
  const pages = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    if (candidate.page === null || candidate.page === undefined || candidate.score <= 0) continue;
    const key = `${candidate.document_id}\u0000${candidate.page}`;
    const list = pages.get(key);
    if (list) list.push(candidate);
    else pages.set(key, [candidate]);
  }
  for (const list of pages.values()) {
    if (list.length < 2) continue;
    list.sort(byScore);
    const others = list.slice(1).reduce((sum, candidate) => sum + candidate.score, 0);
    list[0]!.score += share * others;
  }
}

/** For each pair of distinct terms, the smaller idf over their distance when they come within {@linkcode NEAR}. */
function proximity(positions: number[][], idfs: number[]): number {
  let bonus = 0;
  for (let a = 0; a < positions.length; a++) {
    for (let b = a + 1; b < positions.length; b++) {
      const distance = nearest(positions[a]!, positions[b]!);
      if (distance <= NEAR) bonus += Math.min(idfs[a]!, idfs[b]!) / distance;
    }
  }
  return bonus;
}

/** The smallest distance between two sorted lists of positions (Infinity when either is empty). */
function nearest(a: number[], b: number[]): number {
  let best = Infinity;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const distance = Math.abs(a[i]! - b[j]!);
    if (distance > 0 && distance < best) best = distance;
    if (a[i]! < b[j]!) i++;
    else j++;
  }
  return best;
}

function byScore(a: Candidate, b: Candidate): number {
  if (a.tier !== b.tier) return b.tier - a.tier;
  if (a.score !== b.score) return b.score - a.score;
  if (a.document_id !== b.document_id) return a.document_id < b.document_id ? -1 : 1;
  return a.passage_id - b.passage_id;
}
