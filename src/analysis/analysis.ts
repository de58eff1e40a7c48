/**
 * Text analysis for search, the same for indexed text and queries, in the
 * manner of a Lucene analyzer chain: fold (see `folding.ts`), cut into
 * tokens, then per script:
 *
 * - Latin: stemmed by the Snowball stemmer of the text's language (English,
 *   French, Spanish, Portuguese, German, Indonesian), told apart by their
 *   commonest words; English when none stands out. A query word is looked for
 *   under every one of these stemmers, so a question finds a page in another
 *   language that shares its word ("transport", "Merbridge").
 * - Cyrillic: the Russian Snowball stemmer (`russianStemming`), its
 *   unstable stems indexed both ways (романам → роман, роман → рома), so a
 *   question's inflected form meets the page's (кто сравнил законы с
 *   советской квартирой → «как новые советские квартиры»).
 * - Arabic script: light stemming of prefixes and suffixes (`_arabic_stem.ts`).
 * - Chinese, Japanese, Korean, Thai: overlapping two-character tokens (each
 *   counting half in a passage's length, `projections/search_index.ts`). With
 *   `segmentation` (measured and off), Chinese and Japanese runs also give
 *   the words of three characters or more of ICU's dictionary segmenter
 *   (`Intl.Segmenter`), in the index and in queries.
 * - Numbers written with group separators (1,234,567; 39 921 700; 1.000.000)
 *   also give their digits joined, so "39921700" finds "39 921 700,00".
 * - Tokens holding a digit (codes such as IP54, Caa1, 2cdda5c8) are never stemmed.
 *
 * Which parts are on is decided by the search benchmark's ablation (README).
 *
 * Private-use characters never reach a token: the index's scope tokens start with one.
 *
 * @module
 */
import { stemmer as english } from "@orama/stemmers/english";
import { stemmer as french } from "@orama/stemmers/french";
import { stemmer as german } from "@orama/stemmers/german";
import { stemmer as indonesian } from "@orama/stemmers/indonesian";
import { stemmer as dutch } from "@orama/stemmers/dutch";
import { stemmer as portuguese } from "@orama/stemmers/portuguese";
import { stemmer as russian } from "@orama/stemmers/russian";
import { stemmer as spanish } from "@orama/stemmers/spanish";
import { arabicLightStem } from "./_arabic_stem.ts";
import { COMPOUND_LANGUAGES, compoundParts, isCompoundLanguage } from "./compounds.ts";
import { bigrams, foldCharacters, foldText, isUnspacedToken, UNSPACED_RUN } from "./folding.ts";

/** Which parts of the analysis run (all by default; the search benchmark turns them off one at a time). */
export interface AnalysisOptions {
  /** Snowball stemming of Latin-script words (English, French, Spanish, Portuguese, German, Indonesian). */
  stemming: boolean;
  /** Snowball stemming of Cyrillic words (Russian). */
  russianStemming: boolean;
  /** A Russian stem stemmed again is indexed too, and looked for (романам → роман → рома). */
  russianBothWays: boolean;
  /** Light stemming of Arabic and Persian words. */
  arabicStemming: boolean;
  /** Chinese and Japanese runs also give their dictionary words of three characters or more. */
  segmentation: boolean;
  /** Digits of grouped numbers joined into one token. */
  numbers: boolean;
  /** A Chinese, Japanese, Korean or Thai two-character token counts half in a passage's length for BM25. */
  halfUnspacedLength: boolean;
  /**
   * A German or Dutch compound's parts are indexed beside it (`compounds.ts`), marked as parts; a German or
   * Dutch translation and an English question's own word (System, Partition) are also looked for as parts.
   */
  compounds: boolean;
}

/** The analysis the index and the queries use. */
export const DEFAULT_ANALYSIS: Readonly<AnalysisOptions> = {
  stemming: true,
  // On since the Russian held-out questions grew from 5 to 19: their MRR 0.851 → 0.947 (README).
  russianStemming: true,
  russianBothWays: true,
  arabicStemming: true,
  // Measured and left off: no gain on the question set (see the README's ablation table).
  segmentation: false,
  numbers: true,
  halfUnspacedLength: true,
  // English questions about German and Dutch pages found through their compounds' parts (docs/search.md,
  // "German and Dutch compounds").
  compounds: true,
};

/**
 * Marks a German or Dutch compound's part in the index (a private-use character, which the index's tokenizer
 * keeps in the token): only translations and an English question's own words look for parts, so German and
 * Dutch questions, and English pages, see the index as before.
 */
export const PART = "\ue001";

/** The Latin-script languages told apart by {@linkcode latinLanguageOf}. */
export type LatinLanguage = "en" | "fr" | "es" | "pt" | "de" | "id" | "nl";

const STEMMERS: Readonly<Record<LatinLanguage, (word: string) => string>> = {
  en: english,
  fr: french,
  es: spanish,
  pt: portuguese,
  de: german,
  id: indonesian,
  nl: dutch,
};
const LATIN_LANGUAGES = Object.keys(STEMMERS) as LatinLanguage[];

/** Each language's commonest words (folded), which tell a text's language. */
const MARKERS: Readonly<Record<LatinLanguage, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries({
    en: "the and of to is in that for with are this be on was by as it not or from",
    fr: "le la les des et est une du dans pour qui sur pas au avec ce sont par il",
    es: "el los las del y es una por para con se su al como mas pero sus lo",
    pt: "os do da dos das um uma para com nao em no na ao pelo pela e",
    de: "der die das und ist nicht ein eine zu mit von den dem sich auf fur im",
    id: "yang dan di ini itu dengan untuk dari dalam tidak adalah pada ke akan",
    // Not "en", "van", "dit", "met", "er" or "door": words of Spanish, French, English or German too.
    nl: "het een dat zijn niet voor aan ook wordt worden bij naar deze kunnen geen heeft hebben ze",
  }).map(([language, words]) => [language, new Set(words.split(" "))]),
) as unknown as Record<LatinLanguage, ReadonlySet<string>>;

/** How many of each Latin-script language's commonest words a text uses (in its first 400 words). */
export function markerCounts(text: string): Map<LatinLanguage, number> {
  const counts = new Map<LatinLanguage, number>();
  let seen = 0;
  for (const match of foldCharacters(text.slice(0, 4000)).matchAll(/\p{L}+/gu)) {
    if (++seen > 400) break;
    for (const language of LATIN_LANGUAGES) {
      if (MARKERS[language].has(match[0])) counts.set(language, (counts.get(language) ?? 0) + 1);
    }
  }
  return counts;
}

/** At most this many distinct terms of a query are searched. */
export const MAX_QUERY_TERMS = 32;

/** A word: letters, digits and marks (never a private-use character). */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** A grouped number (1,234,567; 39 921 700; 1.000.000; 1'000). */
const GROUPED_NUMBER = /(?<![\p{N}.,])\p{N}{1,3}(?:[,.'\u00a0\u202f ]\p{N}{3})+(?![\p{N}]|[,.]\p{N}{3})/gu;
/** Whether a text may hold a grouped number (a quick test before the full one). */
const GROUP_HINT = /\p{N}[,.'\u00a0\u202f ]\p{N}{3}/u;
const DIGIT = /\p{N}/u;
const LATIN = /^[\p{Script=Latin}\p{M}]+$/u;
const CYRILLIC = /^[\p{Script=Cyrillic}\p{M}]+$/u;
const ARABIC = /^[\p{Script=Arabic}\p{M}]+$/u;
const ARABIC_LETTER = /\p{Script=Arabic}/u;
const KANA = /[\u3040-\u30ff\u31f0-\u31ff]/u;
const HANGUL_OR_THAI = /[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\u0e00-\u0e7f]/u;
/** A character of a script written without spaces (the ranges of `folding.ts`). */
const UNSPACED = new RegExp(UNSPACED_RUN.source.replace(/\+$/, ""), "u");
/** Splits a word into runs of unspaced script and the rest (the runs at odd indexes). */
const UNSPACED_SPLIT = new RegExp(`(${UNSPACED_RUN.source})`, "u");

const segmenters = {
  zh: new Intl.Segmenter("zh", { granularity: "word" }),
  ja: new Intl.Segmenter("ja", { granularity: "word" }),
};

/** Terms already computed, per language and analysis: a document repeats its words. */
const termCaches = new Map<string, Map<string, string>>();
const TERM_CACHE_SIZE = 20_000;

function termCache(language: LatinLanguage, options: AnalysisOptions): Map<string, string> {
  const key = `${language}${+options.stemming}${+options.russianStemming}${+options.arabicStemming}`;
  let cache = termCaches.get(key);
  if (!cache) termCaches.set(key, cache = new Map());
  if (cache.size > TERM_CACHE_SIZE) cache.clear();
  return cache;
}

function stem(language: LatinLanguage | "ru", word: string): string {
  return (language === "ru" ? russian : STEMMERS[language])(word);
}

/**
 * The language of a Latin-script text: the one whose commonest words it uses
 * most (at least twice), else English.
 */
export function latinLanguageOf(text: string): LatinLanguage {
  const counts = markerCounts(text);
  let best: LatinLanguage = "en";
  let most = 1;
  for (const language of LATIN_LANGUAGES) {
    const count = counts.get(language) ?? 0;
    if (count > most) {
      best = language;
      most = count;
    }
  }
  return best;
}

/**
 * Calls `emit` with each surface word of folded text and the term the index
 * holds for it, in reading order; the joined digits of grouped numbers come last.
 */
function eachTerm(
  folded: string,
  language: LatinLanguage,
  options: AnalysisOptions,
  emit: (word: string, term: string) => void,
): void {
  const cache = termCache(language, options);
  for (const match of folded.matchAll(WORD)) {
    const word = match[0];
    if (!UNSPACED.test(word)) {
      let term = cache.get(word);
      if (term === undefined) cache.set(word, term = termOf(word, language, options));
      emit(word, term);
      const again = restemmed(word, term, options);
      if (again !== null) emit(word, again);
      if (options.compounds && options.stemming && isCompoundLanguage(language)) {
        for (const part of compoundParts(word, language)) emit(word, PART + stem(language, part));
      }
      continue;
    }
    word.split(UNSPACED_SPLIT).forEach((part, index) => {
      if (part === "") return;
      if (index % 2 === 0) {
        emit(part, cache.get(part) ?? termOf(part, language, options));
        return;
      }
      for (const pair of bigrams(part)) emit(pair, pair);
      if (options.segmentation) { for (const word of dictionaryWords(part)) emit(word, word); }
    });
  }
  if (options.numbers && GROUP_HINT.test(folded)) {
    for (const match of folded.matchAll(GROUPED_NUMBER)) {
      const joined = match[0].replace(/[^\p{N}]/gu, "");
      emit(joined, joined);
    }
  }
}

/**
 * The dictionary words of three characters or more in a run of Chinese or
 * Japanese (ICU's segmenter, `Intl.Segmenter`; Japanese when the run holds
 * kana), which the index holds beside the run's two-character tokens.
 */
export function dictionaryWords(run: string): string[] {
  return dictionarySegments(run).map((segment) => segment.word);
}

/** {@linkcode dictionaryWords} with where each starts in the run (in characters). */
function dictionarySegments(run: string): Array<{ word: string; at: number }> {
  if (HANGUL_OR_THAI.test(run) || [...run].length < 3) return [];
  const segmenter = KANA.test(run) ? segmenters.ja : segmenters.zh;
  const out: Array<{ word: string; at: number }> = [];
  let at = 0;
  for (const { segment, isWordLike } of segmenter.segment(run)) {
    const length = [...segment].length;
    if (isWordLike && length >= 3) out.push({ word: segment, at });
    at += length;
  }
  return out;
}

/**
 * A Russian word's stem stemmed again, when that differs: Snowball's Russian
 * stems are not stable (романам → роман, but роман → рома), so the index holds
 * both and a query finds either form.
 */
function restemmed(word: string, term: string, options: AnalysisOptions): string | null {
  if (!options.russianStemming || !options.russianBothWays || term === word || !CYRILLIC.test(word)) {
    return null;
  }
  const again = stem("ru", term);
  return again === term ? null : again;
}

/** The indexed form of one word in a text of `language`. */
function termOf(word: string, language: LatinLanguage, options: AnalysisOptions): string {
  if (DIGIT.test(word)) return word;
  if (options.stemming && LATIN.test(word)) return stem(language, word);
  if (options.russianStemming && CYRILLIC.test(word)) return stem("ru", word);
  if (options.arabicStemming && ARABIC.test(word)) return arabicLightStem(word);
  return word;
}

/** The terms of a text in reading order, as the index holds them. */
export function analyze(
  text: string,
  options: AnalysisOptions = DEFAULT_ANALYSIS,
  language: LatinLanguage = latinLanguageOf(text),
): string[] {
  const out: string[] = [];
  eachTerm(foldCharacters(text), language, options, (_word, term) => out.push(term));
  return out;
}

/** One term of a query: the index terms that count as it (any of them), and how to match them in FTS5. */
export interface QueryTerm {
  /** The query's word, folded. */
  word: string;
  /** Index terms that match it. */
  terms: string[];
  /** A single Chinese, Japanese, Korean or Thai character: matches the two-character tokens it starts. */
  prefix: boolean;
  /** With translations among `terms`: how many of the first are the query's own forms (the rest translate). */
  own?: number;
  /** Its translations are the English ones of a word of a question in another language (`translation.ts`). */
  back?: boolean;
}

/**
 * The distinct terms of a query, in order of appearance, without stop words
 * unless nothing else is left, and at most {@linkcode MAX_QUERY_TERMS}.
 *
 * A Latin word counts under the stem of each language (and the stem of that
 * stem, since Snowball's stems are not always stable). Chinese, Japanese,
 * Korean and Thai give their two-character tokens (a single character
 * matches the tokens it starts); with `segmentation`, Chinese and Japanese
 * dictionary words of three characters or more are terms too.
 */
export function queryTerms(query: string, options: AnalysisOptions = DEFAULT_ANALYSIS): QueryTerm[] {
  const all: QueryTerm[] = [];
  const seen = new Set<string>();
  const add = (word: string, term: string, unspaced = false) => {
    if (seen.has(word)) return;
    seen.add(word);
    if (unspaced) {
      all.push({ word, terms: [term], prefix: [...word].length === 1 });
      return;
    }
    all.push({ word, terms: alternatives(word, term, options), prefix: false });
  };
  const folded = foldCharacters(query);
  for (const match of folded.matchAll(WORD)) {
    match[0].split(UNSPACED_SPLIT).forEach((part, index) => {
      if (part === "") return;
      if (index % 2 === 0) {
        add(part, termOf(part, "en", options));
      } else {
        for (const pair of bigrams(part)) add(pair, pair, true);
        if (options.segmentation) { for (const word of dictionaryWords(part)) add(word, word); }
      }
    });
  }
  if (options.numbers && GROUP_HINT.test(folded)) {
    for (const match of folded.matchAll(GROUPED_NUMBER)) {
      const joined = match[0].replace(/[^\p{N}]/gu, "");
      add(joined, joined);
    }
  }
  const content = all.filter((term) => !isWeak(term.word));
  return (content.length > 0 ? content : all).slice(0, MAX_QUERY_TERMS);
}

function alternatives(word: string, term: string, options: AnalysisOptions): string[] {
  if (DIGIT.test(word)) return [term];
  if (options.stemming && LATIN.test(word)) {
    const stems = new Set<string>();
    for (const language of LATIN_LANGUAGES) {
      const first = stem(language, word);
      stems.add(first).add(stem(language, first));
    }
    return [...stems];
  }
  if (options.russianStemming && options.russianBothWays && CYRILLIC.test(word)) {
    return [...new Set([term, stem("ru", term)])];
  }
  return [term];
}

/**
 * The index terms a folded word of any language stands for, as
 * alternatives of one query term: a Latin word's stems in each language, a
 * Cyrillic or Arabic word's stem, a Chinese or Japanese word as the phrase of
 * its two-character tokens (`"服务 务网 网格"`, a space between them). A single
 * Chinese or Japanese character gives none.
 */
export function indexTermsOf(word: string, options: AnalysisOptions = DEFAULT_ANALYSIS): string[] {
  if (UNSPACED.test(word)) {
    if (!isUnspacedToken(word)) return [];
    const pairs = bigrams(word);
    return [...word].length < 2 ? [] : [pairs.join(" ")];
  }
  return alternatives(word, termOf(word, "en", options), options);
}

/**
 * The index terms a folded word of a known Latin-script language stands for: as a page in that language
 * indexes it (its stem there, and that stem's stem, as for a question's words) and as a page read as English
 * does (a short text has too few common words to tell its language). Not its stems under the other
 * languages' rules, which would be other words. A word of another script, or with a digit, gives
 * {@linkcode indexTermsOf}'s.
 */
export function indexTermsIn(
  word: string,
  language: LatinLanguage,
  options: AnalysisOptions = DEFAULT_ANALYSIS,
): string[] {
  if (!options.stemming || DIGIT.test(word) || !LATIN.test(word)) return indexTermsOf(word, options);
  const stems = new Set<string>();
  for (const each of new Set<LatinLanguage>([language, "en"])) {
    const first = stem(each, word);
    stems.add(first).add(stem(each, first));
  }
  // A German or Dutch translation is also looked for as a part of the compounds that hold it.
  if (options.compounds && isCompoundLanguage(language)) stems.add(PART + stem(language, word));
  return [...stems];
}

/** A Latin word as the index holds it when it is a part of a German or Dutch compound. */
export function partTerms(word: string): string[] {
  return [...new Set(COMPOUND_LANGUAGES.map((language) => PART + stem(language, word)))];
}

/** Whether a language code is one of the Latin-script languages the analysis stems. */
export function isLatinLanguage(code: string): code is LatinLanguage {
  return Object.hasOwn(STEMMERS, code);
}

/** Quotes a term for FTS5 MATCH: the term becomes a string, never an operator. */
export function quoteTerm(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** A query term as an FTS5 expression: any of its index terms, or a prefix query for a single character. */
export function termExpression(term: QueryTerm): string {
  if (term.prefix) return `${quoteTerm(term.word)}*`;
  return term.terms.length === 1 ? quoteTerm(term.terms[0]!) : `(${term.terms.map(quoteTerm).join(" OR ")})`;
}

/**
 * Finds where the query's terms occur in texts, as the index would analyze
 * them, without stemming every word: a word is stemmed only when its first
 * letter can start one of the terms (or it is Arabic script, whose prefixes
 * come off).
 */
export class TermMatcher {
  readonly #terms: readonly QueryTerm[];
  readonly #options: AnalysisOptions;
  readonly #byTerm = new Map<string, number[]>();
  readonly #prefixes = new Map<string, number[]>();
  readonly #starts = new Set<string>();
  /** Whether a term is a Chinese or Japanese dictionary word, so runs must be segmented. */
  readonly #words: boolean;

  constructor(terms: readonly QueryTerm[], options: AnalysisOptions = DEFAULT_ANALYSIS) {
    this.#terms = terms;
    this.#options = options;
    this.#words = options.segmentation && terms.some((term) =>
      !term.prefix && isUnspacedToken(term.word) &&
      [...term.word].length >= 3
    );
    terms.forEach((term, index) => {
      if (term.prefix) push(this.#prefixes, term.word, index);
      else {
        for (const indexTerm of term.terms) {
          if (indexTerm.includes(" ")) {
            // A phrase of index terms (a translation written in Chinese or Japanese): matched where its
            // terms follow each other; its parts are looked for under their own index.
            const parts = indexTerm.split(" ");
            const atoms = parts.map((part) => {
              let atom = this.#atoms.get(part);
              if (atom === undefined) {
                this.#atoms.set(part, atom = this.#atoms.size);
                push(this.#byTerm, part, terms.length + atom);
                this.#starts.add(part[0]!);
              }
              return atom;
            });
            this.#phrases.push({ index, atoms });
            continue;
          }
          push(this.#byTerm, indexTerm, index);
          this.#starts.add(indexTerm[0]!);
        }
      }
    });
  }

  /** The parts of phrases, numbered after the terms. */
  readonly #atoms = new Map<string, number>();
  readonly #phrases: Array<{ index: number; atoms: number[] }> = [];

  /** The positions of each term (by the terms' order) in `text`, analyzed as text of `language`. */
  positions(text: string, language: LatinLanguage): number[][] {
    const out: number[][] = [...this.#terms.map(() => []), ...[...this.#atoms.keys()].map(() => [])];
    const folded = foldCharacters(text);
    const cache = termCache(language, this.#options);
    const hit = (indexTerm: string, position: number) => {
      const found = this.#byTerm.get(indexTerm);
      if (found) { for (const index of found) out[index]!.push(position); }
    };
    let position = 0;
    for (const match of folded.matchAll(WORD)) {
      const word = match[0];
      if (!UNSPACED.test(word)) {
        if (this.#starts.has(word[0]!) || ARABIC_LETTER.test(word[0]!)) {
          let term = cache.get(word);
          if (term === undefined) cache.set(word, term = termOf(word, language, this.#options));
          hit(term, position);
          const again = restemmed(word, term, this.#options);
          if (again !== null) hit(again, position);
        }
        if (
          this.#options.compounds && this.#options.stemming && this.#starts.has(PART) &&
          isCompoundLanguage(language)
        ) {
          for (const part of compoundParts(word, language)) hit(PART + stem(language, part), position);
        }
        position++;
        continue;
      }
      word.split(UNSPACED_SPLIT).forEach((part, index) => {
        if (part === "") return;
        if (index % 2 === 0) {
          hit(cache.get(part) ?? termOf(part, language, this.#options), position++);
          return;
        }
        if (this.#words) {
          for (const { word, at } of dictionarySegments(part)) hit(word, position + at);
        }
        for (const pair of bigrams(part)) {
          hit(pair, position);
          const starting = this.#prefixes.get([...pair][0]!);
          if (starting) { for (const index of starting) out[index]!.push(position); }
          position++;
        }
      });
    }
    if (this.#options.numbers && GROUP_HINT.test(folded)) {
      for (const match of folded.matchAll(GROUPED_NUMBER)) {
        hit(match[0].replace(/[^\p{N}]/gu, ""), position++);
      }
    }
    const atoms = out.splice(this.#terms.length);
    for (const { index, atoms: parts } of this.#phrases) {
      const following = parts.slice(1).map((atom) => new Set(atoms[atom]));
      for (const start of atoms[parts[0]!]!) {
        if (following.every((set, k) => set.has(start + k + 1))) out[index]!.push(start);
      }
      if (out[index]!.length > 1) out[index]!.sort((a, b) => a - b);
    }
    return out;
  }
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

// Words that say little about what is asked, in the languages of the corpus.
const STOP_WORDS = new Set(
  (
    // English, with the words questions are made of.
    "a about above after again against all am an and any are aren as at be because been before being below " +
    "between both but by can cannot could couldn did didn do does doesn doing don down during each few for " +
    "from further had has have having he her here hers herself him himself his how i if in into is isn it " +
    "its itself let me more most my myself no nor not of off on once only or other ought our ours ourselves " +
    "out over own same she should so some such than that the their theirs them themselves then there these " +
    "they this those through to too under until up very was wasn we were weren what when where which while " +
    "who whom why with won would you your yours yourself yourselves also will shall might must please " +
    "tell show find explain describe give according mentioned say says said anything something there's " +
    "whats what's how's does do did done get got one ones many much " +
    // French
    "le la les un une des du de d l et est en au aux ce cet cette ces que qui quoi dans pour par sur avec " +
    "sont ou où il elle ils elles nous vous on ne pas plus se sa son ses leur leurs comment quel quelle " +
    "quels quelles " +
    // Spanish and Portuguese
    "el los las y es del al lo que en por para con una unos unas su sus como cual cuál qué cuando dónde " +
    "o um uma os as do da dos das no na nos nas em e é são pelo pela " +
    // German
    "der die das den dem des ein eine einer eines einem einen und ist sind im in zu mit von für auf wie " +
    "was wer wo wann warum welche welcher nicht auch es sie er wir ihr " +
    // Dutch
    "het een van dat op te voor aan als bij ook om naar wat welke waar waarom wanneer deze " +
    // Russian
    "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было " +
    "вот от меня еще нет о из ему теперь когда даже ну ли если уже или ни быть был него до вас нибудь " +
    "опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была " +
    "сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним " +
    "здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об " +
    "другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем " +
    "хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между " +
    // Arabic and Persian
    "في من على الى إلى عن هل ما هي هو التي الذي ذلك هذا هذه او أو ان أن كان كيف لماذا متى " +
    "در به از که این را با است برای آن آیا چه"
  ).split(/\s+/).map((word) => foldText(word).trim()),
);

/** Whether a folded word is a stop word of one of the analysis's languages (it says little about what is asked). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

function isWeak(word: string): boolean {
  if (STOP_WORDS.has(word)) return true;
  const length = [...word].length;
  if (length === 1 && !/\p{N}/u.test(word)) return true;
  return length === 1 && isUnspacedToken(word);
}
