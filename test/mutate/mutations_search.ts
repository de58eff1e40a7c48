/**
 * Planted bugs for cross-language search (issue 27): each a change of one
 * piece of one line, with the test files that must fail with it.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const CROSS_LANGUAGE = "test/search/cross_language_test.ts";
const DICTIONARIES_HEALTH = "test/search/dictionaries_health_test.ts";
const DICTIONARY_STORE = "test/search/dictionary_store_test.ts";
const TRANSLATION = "test/search/translation_test.ts";
const WHOLE_SCOPE = "test/search/whole_scope_test.ts";

/** The planted bugs of the h-search branch. */
export const MUTATIONS_SEARCH: Mutation[] = [
  {
    name: "an English question's names are not searched in Cyrillic spelling",
    file: "src/search/translation.ts",
    from: "for (const spelling of cyrillicSpellings(term.word)) {",
    to: "for (const spelling of cyrillicSpellings(term.word).slice(0, 0)) {",
    tests: [CROSS_LANGUAGE],
  },
  {
    name: "kh is read as к and х, not х",
    file: "src/search/transliteration.ts",
    from: '["kh", "х"],',
    to: '["kh", "кх"],',
    tests: ["test/search/transliteration_test.ts"],
  },
  {
    name: "translations are not added to the question's terms",
    file: "src/search/translation.ts",
    from: "for (const indexTerm of translationTerms(translation, options)) alternatives.add(indexTerm);",
    to: "for (const indexTerm of translationTerms(translation, options)) void indexTerm;",
    tests: [CROSS_LANGUAGE, TRANSLATION],
  },
  {
    name: "a Latin translation is looked for under every language's stemming rules, not its own",
    file: "src/search/translation.ts",
    from:
      "return isLatinLanguage(language) ? indexTermsIn(word, language, options) : indexTermsOf(word, options);",
    to: "return indexTermsOf(word, options);",
    tests: [TRANSLATION],
  },
  {
    name: "a question's stop words are translated",
    file: "src/search/translation.ts",
    from: "if (isStopWord(term.word)) return term;",
    to: "if (isStopWord(term.word)) void term;",
    tests: [TRANSLATION],
  },
  {
    name: "a translation that is a stop word is searched",
    file: "src/search/translation.ts",
    from: "if (isStopWord(translation.word)) continue;",
    to: "if (isStopWord(translation.word)) void translation;",
    tests: [TRANSLATION],
  },
  {
    name: "a Chinese or Japanese translation's phrase is not matched in the text (its term frequency is 0)",
    file: "src/analysis/analysis.ts",
    from: "if (following.every((set, k) => set.has(start + k + 1))) out[index]!.push(start);",
    to: "if (following.every((set, k) => set.has(start + k + 2))) out[index]!.push(start);",
    tests: [CROSS_LANGUAGE],
  },
  {
    name: "/healthz says the dictionaries are off whatever the setting",
    file: "src/server/services.ts",
    from: 'if (config.dictionaryDir === null) return { on: false, detail: "off (SERGO_DICTIONARIES=off)" };',
    to: 'return { on: false, detail: "off (SERGO_DICTIONARIES=off)" };',
    tests: [DICTIONARIES_HEALTH],
  },
  {
    name: "Apertium's English–Spanish translations are read but not merged into the pair",
    file: "src/search/dictionaries.ts",
    from: "      compiled ?? new Map(),",
    to: "      new Map(),",
    tests: [CROSS_LANGUAGE],
  },
  {
    name: "English→French through Esperanto is read but not merged into the French pair",
    file: "src/search/dictionaries.ts",
    from: "mergeTranslations(pivoted.get(pivot.language) ?? read.get(pivot.language) ?? new Map(), entries),",
    to: "mergeTranslations(pivoted.get(pivot.language) ?? read.get(pivot.language) ?? new Map(), new Map()),",
    tests: [CROSS_LANGUAGE],
  },
  {
    name: "the dictionaries' file is not keyed by Apertium's dictionary (nor may its subprocess read it)",
    file: "src/search/dictionaries.ts",
    from: "    files.push(...Object.values(APERTIUM_PAIRS).map((file) => `${apertiumDir}/${file}`));",
    to: "    void apertiumDir;",
    tests: [DICTIONARY_STORE],
  },
  {
    name: "the dictionaries' file is opened as kept whatever dictionaries are installed now",
    file: "src/search/dictionary_store.ts",
    from: "if (store.key === key) return store;",
    to: "if (store.key !== null) return store;",
    tests: [DICTIONARY_STORE],
  },
  {
    name: "the dictionaries' file loses the translations a search adds",
    file: "src/search/dictionary_store.ts",
    from: 'return row.foreign_words.split("\\t").map((tagged) => {',
    to: 'return row.foreign_words.split("\\t").slice(1).map((tagged) => {',
    tests: [DICTIONARY_STORE, CROSS_LANGUAGE],
  },
  {
    name: "serve holds the dictionaries in memory instead of looking them up in their file",
    file: "src/server/services.ts",
    from:
      "useInstalledDictionaries({ dir: config.dictionaryDir, store: join(app.dataDir, DICTIONARY_FILE) })",
    to: "useInstalledDictionaries({ dir: config.dictionaryDir })",
    tests: [DICTIONARIES_HEALTH],
  },
  {
    name: "a common term's passages older than its newest are not looked for among the drivers' passages",
    file: "src/search/lexical.ts",
    from: "if (term.df >= DF_CAP && term.rowids.at(-1)! > lowest) {",
    to: "if (term.df >= DF_CAP && term.rowids.at(-1)! < lowest) {",
    tests: [WHOLE_SCOPE],
  },
  {
    name:
      "a scope of a person's every folder leaves out its tokens while a person whose id sorts first has files",
    file: "projections/search_index.ts",
    from: "`SELECT EXISTS (SELECT 1 FROM search_passages WHERE person_id < ?1)",
    to: "`SELECT EXISTS (SELECT 1 FROM search_passages WHERE person_id < ?1 AND 0)",
    tests: [WHOLE_SCOPE],
  },
  {
    name:
      "a scope of a person's every folder leaves out its tokens while a person whose id sorts last has files",
    file: "projections/search_index.ts",
    from: "OR EXISTS (SELECT 1 FROM search_passages WHERE person_id > ?1)",
    to: "OR EXISTS (SELECT 1 FROM search_passages WHERE person_id > ?1 AND 0)",
    tests: [WHOLE_SCOPE],
  },
  {
    name:
      "a scope of a person's every folder leaves out its tokens while the person has a file outside a folder",
    file: "projections/search_index.ts",
    from: "WHERE person_id = ?1 AND folder_id IS NULL) AS outside",
    to: "WHERE person_id = ?1 AND folder_id IS NULL AND 0) AS outside",
    tests: [WHOLE_SCOPE],
  },
  {
    name:
      "a question in another language is searched in every word's English translations, held in scope or not",
    file: "src/search/lexical.ts",
    from: "if (found.length > 0) {\n        terms.push({\n          query: own,",
    to: "if (found.length < 0) {\n        terms.push({\n          query: own,",
    tests: [CROSS_LANGUAGE],
  },
  {
    name: "a German question with one German marker word is read as English and translated",
    file: "src/analysis/question_language.ts",
    from: 'if (read !== "en" && words.some((word) => FUNCTION_WORDS[read].has(word))) return read;',
    to: 'if (read !== "en" && words.some((word) => FUNCTION_WORDS[read].has(word))) return "en";',
    tests: ["test/analysis/question_language_test.ts"],
  },
];
