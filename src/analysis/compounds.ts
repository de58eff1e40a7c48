/**
 * German compounds split into their parts, so a page's _Festplattenpartitionierung_ is found by
 * _Festplatte_ and by _Partitionierung_ (and so by an English question's translations of _hard disk_ or
 * _partitioning_), as well as by the whole word.
 *
 * The parts are words of the German Hunspell dictionary (igerman98's 75,000 words, the `dictionary-de` npm
 * package, read when the first long German word is): a word of eight letters or more splits where its
 * beginning is a dictionary word (or one with a linking _s_, _n_, _e_, _en_ or _es_) and its end is a noun
 * of the dictionary or a form of one (the same Snowball stem), or splits again. The fewest parts win, then
 * the longest last part. No statistics of any index are used, so a passage's terms depend on its own text.
 *
 * @module
 */
import { stemmer as germanStem } from "@orama/stemmers/german";

/** Words shorter than this are not split. */
const MIN_COMPOUND = 8;
/** Parts shorter than this are not split off. */
const MIN_PART = 4;
/** Linking letters between a compound's parts (Arbeit-s-platz, Seite-n-zahl). */
const LINKS = ["s", "n", "e", "en", "es"];
const LETTERS = /^\p{L}+$/u;
/**
 * Prepositions and verb particles: words that begin other words as prefixes, not as compounds' parts
 * (_Unterscheidung_ is no _Scheidung_, _Wiederherstellung_ no _Herstellung_).
 */
const PARTICLES = new Set([
  "durch",
  "gegen",
  "hinter",
  "neben",
  "über",
  "unter",
  "wider",
  "wieder",
  "zusammen",
  "zurück",
  "weiter",
  "heraus",
  "herab",
  "hervor",
  "herum",
  "herunter",
  "hinaus",
  "hinab",
  "hinein",
  "herein",
  "voran",
  "vorbei",
  "entgegen",
  "gegenüber",
  "nieder",
  "empor",
  "fort",
  "dahin",
  "daran",
  "darauf",
  "heran",
  "hinzu",
  "außer",
  "innen",
  "außen",
  "oben",
  "unten",
  "vorn",
  "vorne",
  "hinten",
  "mitte",
  "zwischen",
  "nach",
  "ohne",
  "gleich",
]);

interface Lexicon {
  /** Every word, folded: a compound's first parts. */
  words: Set<string>;
  /** The Snowball stems of its nouns (written with a capital): a compound's last part. */
  stems: Set<string>;
  /** Its nouns, folded. */
  nouns: Set<string>;
}

let lexicon: Lexicon | null = null;

function germanLexicon(): Lexicon {
  if (lexicon) return lexicon;
  const words = new Set<string>();
  const stems = new Set<string>();
  const nouns = new Set<string>();
  const dic = new URL("./index.dic", import.meta.resolve("dictionary-de")).pathname;
  for (const line of Deno.readTextFileSync(dic).split("\n")) {
    const written = line.split("/")[0]!.trim();
    const word = written.toLowerCase();
    if (word.length < MIN_PART || !LETTERS.test(word)) continue;
    words.add(word);
    if (written[0] !== word[0]) {
      nouns.add(word);
      stems.add(germanStem(word));
    }
  }
  return lexicon = { words, stems, nouns };
}

const cache = new Map<string, readonly string[]>();
const CACHE_SIZE = 50_000;

/**
 * The words a folded German compound holds besides itself: each part (a first part without its linking
 * letters) and each run of adjacent parts (_netz|werk|schnitt|stelle_ holds _netzwerk_ and _schnittstelle_,
 * which the dictionary does not list alone). Empty when it is not a compound the dictionary knows.
 */
export function germanParts(word: string): readonly string[] {
  if (word.length < MIN_COMPOUND || !LETTERS.test(word)) return NONE;
  let found = cache.get(word);
  if (found !== undefined) return found;
  if (cache.size > CACHE_SIZE) cache.clear();
  const parts = split(word, germanLexicon(), 0);
  found = parts ? spans(word, parts) : NONE;
  cache.set(word, found);
  return found;
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
    const base = modifier(word.slice(0, at), words);
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
function isNoun(part: string, { nouns, stems }: Lexicon): boolean {
  if (nouns.has(part)) return true;
  const stem = germanStem(part);
  return stem.length >= MIN_PART && stems.has(stem);
}

/** The dictionary word a compound's first part is, without its linking letters, or null. */
function modifier(part: string, words: Set<string>): string | null {
  if (PARTICLES.has(part)) return null;
  for (const link of LINKS) {
    if (
      part.endsWith(link) && part.length - link.length >= MIN_PART && words.has(part.slice(0, -link.length))
    ) {
      return part.slice(0, -link.length);
    }
  }
  return words.has(part) ? part : null;
}
