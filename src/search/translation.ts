/**
 * Cross-language search without a model: an English question's words are
 * translated through the bilingual dictionaries that are installed
 * (`dictionaries.ts`), at query time, so adding a dictionary needs no reindex.
 *
 * The translations of one word join that word's own index terms as
 * alternatives of one query term — a structured query (Pirkola 1998): the
 * term's document frequency is that of the passages holding any of them and
 * its term frequency counts them all, so a word with twenty translations
 * weighs as one word, no more. Words the dictionaries do not know (names,
 * codes, numbers) stay as they are. A Latin translation that is also an
 * English word is left out: it would match English pages in its English sense.
 * Stop words are not translated, and translations that are stop words are
 * left out (they match most pages of their language and say nothing).
 *
 * A question in another language goes the other way: its words get their
 * English translations as alternatives, marked `back`, which `lexical.ts`
 * searches only where the scope holds none of the word's own forms.
 *
 * @module
 */
import {
  type AnalysisOptions,
  DEFAULT_ANALYSIS,
  indexTermsIn,
  indexTermsOf,
  isLatinLanguage,
  isStopWord,
  partTerms,
  type QueryTerm,
} from "../analysis/analysis.ts";
import { questionLanguageOf } from "../analysis/question_language.ts";
import { type DictionaryLookup, TRANSLATE_BACK, type Translation } from "./dictionaries.ts";
import { foldCharacters, UNSPACED_RUN } from "../analysis/folding.ts";
import { cyrillicSpellings } from "./transliteration.ts";

const LATIN_WORD = /^[\p{Script=Latin}]+$/u;
/** A question holding Cyrillic, Arabic, Chinese or Japanese is asked in that language. */
const FOREIGN_SCRIPT =
  /[\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * Whether an English question's words with no Russian translation (names: Kemerovo, Interfax) are also searched
 * as Russian pages spell them (main set's held-out MRR 0.823 -> 0.831, English -> Russian 0.461 -> 0.568, no
 * question lost on the five sets; docs/search.md).
 */
export const TRANSLITERATE = true;

/** The query's terms with the translations of its English words among their alternatives. */
export function translateTerms(
  terms: QueryTerm[],
  query: string,
  dictionaries: DictionaryLookup | null,
  options: AnalysisOptions = DEFAULT_ANALYSIS,
): QueryTerm[] {
  if (!dictionaries || dictionaries.empty) return terms;
  const language = questionLanguageOf(query);
  if (TRANSLATE_BACK && (language !== "en" || FOREIGN_SCRIPT.test(query))) {
    return translateBack(terms, query, language, dictionaries, options);
  }
  if (language !== "en") return terms;
  const phrases = phraseTranslations(query, dictionaries, options);
  return terms.map((term) => {
    if (term.prefix || !LATIN_WORD.test(term.word)) return term;
    // A stop word is searched as asked (a question of nothing else keeps its stop words): its translations
    // are the other languages' commonest words ("that": der, que, что), which match most foreign pages.
    if (isStopWord(term.word)) return term;
    // A Latin translation that is itself an English word ("route" for routing, "tour" for file) would
    // match English pages that do not mean the word: left out.
    const translations = dictionaries.foreignTranslations(term.word);
    const alternatives = new Set(term.terms);
    for (const translation of translations) {
      // A translation that is a stop word of its language ("уже" for already, "раз" for time) says as little.
      if (isStopWord(translation.word)) continue;
      for (const indexTerm of translationTerms(translation, options)) alternatives.add(indexTerm);
    }
    // A two-word phrase's translations ("file system": Dateisystem, ファイルシステム) are each word's too.
    for (const indexTerm of phrases.get(term.word) ?? []) alternatives.add(indexTerm);
    // A German or Dutch compound's part is searched in the question's own word too: a cognate (System,
    // Partition) is no translation, since it is an English word, yet a compound holds it.
    if (options.compounds && term.word.length >= 4) {
      for (const part of partTerms(term.word)) alternatives.add(part);
    }
    // A word with no Russian translation (a name: Kemerovo, Interfax) is also looked for as Russian pages
    // spell it.
    if (TRANSLITERATE && !translations.some((translation) => translation.language === "ru")) {
      for (const spelling of cyrillicSpellings(term.word)) {
        for (const indexTerm of indexTermsOf(spelling, options)) alternatives.add(indexTerm);
      }
    }
    if (alternatives.size === term.terms.length) return term;
    return { ...term, terms: [...alternatives], own: term.terms.length };
  });
}

/**
 * The index terms a translation is looked for under: a Latin-script one's as the pages of its own language
 * index it (`indexTermsIn`), not also its stems under the other languages' rules, which are other words
 * (German "Heer", army, is "he" under French rules, "getan", done, "get" under Spanish ones), which matched
 * English pages by chance and made the lists long; another script's as {@linkcode indexTermsOf} gives them.
 */
function translationTerms({ language, word }: Translation, options: AnalysisOptions): string[] {
  return isLatinLanguage(language) ? indexTermsIn(word, language, options) : indexTermsOf(word, options);
}

/** For each word of an English question, the index terms of the two-word phrases it starts or ends. */
function phraseTranslations(
  query: string,
  dictionaries: DictionaryLookup,
  options: AnalysisOptions,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const words = foldCharacters(query).toLowerCase().match(/[\p{Script=Latin}]+/gu) ?? [];
  for (let i = 0; i + 1 < words.length; i++) {
    const [a, b] = [words[i]!, words[i + 1]!];
    if (isStopWord(a) || isStopWord(b)) continue;
    const found = dictionaries.foreignTranslations(`${a} ${b}`)
      .filter((translation) => !isStopWord(translation.word))
      .flatMap((translation) => translationTerms(translation, options));
    if (found.length === 0) continue;
    for (const word of [a, b]) out.set(word, [...(out.get(word) ?? []), ...found]);
  }
  return out;
}

const CYRILLIC_WORD = /^[\p{Script=Cyrillic}]+$/u;
const ARABIC_WORD = /^[\p{Script=Arabic}]+$/u;
const KANA = /[\u3040-\u30ff]/u;
const segmenters = {
  zh: new Intl.Segmenter("zh", { granularity: "word" }),
  ja: new Intl.Segmenter("ja", { granularity: "word" }),
};

/**
 * A question in another language, towards English pages: each word the dictionaries know (read the other
 * way) gets its English stems among its alternatives; a Chinese or Japanese question's dictionary words
 * (ICU's segmenter) become terms of their own, their English translations beside them.
 */
function translateBack(
  terms: QueryTerm[],
  query: string,
  language: string,
  dictionaries: DictionaryLookup,
  options: AnalysisOptions,
): QueryTerm[] {
  const out = terms.map((term) => {
    if (term.prefix) return term;
    const from = LATIN_WORD.test(term.word) && language !== "en"
      ? language
      : CYRILLIC_WORD.test(term.word)
      ? "ru"
      : ARABIC_WORD.test(term.word)
      ? "ar"
      : null;
    if (from === null) return term;
    const english = term.terms.flatMap((indexTerm) => dictionaries.translateBack(from, indexTerm));
    if (english.length === 0) return term;
    const terms = [...new Set([...term.terms, ...english])];
    return terms.length === term.terms.length ? term : { ...term, terms, own: term.terms.length, back: true };
  });
  const seen = new Set(out.map((term) => term.word));
  for (const run of foldCharacters(query).match(new RegExp(UNSPACED_RUN.source, "gu")) ?? []) {
    const from = KANA.test(run) ? "ja" : "zh";
    for (const { segment, isWordLike } of segmenters[from].segment(run)) {
      if (!isWordLike || [...segment].length < 2 || seen.has(segment)) continue;
      const english = [
        ...new Set([
          ...dictionaries.translateBack(from, segment),
          ...dictionaries.translateBack("ja", segment),
        ]),
      ];
      if (english.length === 0) continue;
      seen.add(segment);
      const own = indexTermsOf(segment, options);
      out.push({ word: segment, terms: [...own, ...english], prefix: false, own: own.length, back: true });
    }
  }
  return out;
}
