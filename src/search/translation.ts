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
 *
 * @module
 */
import {
  type AnalysisOptions,
  DEFAULT_ANALYSIS,
  indexTermsOf,
  latinLanguageOf,
  type QueryTerm,
} from "./analysis.ts";
import type { Dictionaries } from "./dictionaries.ts";

const LATIN_WORD = /^[\p{Script=Latin}]+$/u;

/** The query's terms with the translations of its English words among their alternatives. */
export function translateTerms(
  terms: QueryTerm[],
  query: string,
  dictionaries: Dictionaries | null,
  options: AnalysisOptions = DEFAULT_ANALYSIS,
): QueryTerm[] {
  if (!dictionaries || dictionaries.empty || latinLanguageOf(query) !== "en") return terms;
  return terms.map((term) => {
    if (term.prefix || !LATIN_WORD.test(term.word)) return term;
    const translations = dictionaries.translate(term.word);
    if (translations.length === 0) return term;
    const alternatives = new Set(term.terms);
    for (const translation of translations) {
      // A Latin translation that is itself an English word ("route" for routing, "tour" for file) would
      // match English pages that do not mean the word: left out.
      if (LATIN_WORD.test(translation) && dictionaries.translate(translation).length > 0) continue;
      for (const indexTerm of indexTermsOf(translation, options)) alternatives.add(indexTerm);
    }
    return { ...term, terms: [...alternatives] };
  });
}
