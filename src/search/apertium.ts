/**
 * Apertium's bilingual dictionaries as Debian's `apertium-*` packages install
 * them: compiled lttoolbox transducers (`eng-spa.autobil.bin`) that map a
 * lemma and its tags to the other language's (`house<n>` → `casa<n><f>`).
 * Read here in TypeScript, so no lttoolbox program is run: `lt-print`, which
 * prints a transducer as text, is in `lttoolbox-dev` (with ICU's headers),
 * which the dictionary packages do not pull, and running it would widen what
 * `serve` and its dictionary subprocess may run.
 *
 * Only one-word lemma pairs of content words are kept (nouns, verbs,
 * adjectives, adverbs): their first tag says which, on both sides.
 *
 * The format, as lttoolbox 3.7 writes it (`file_utils.cc`, `alphabet.cc`,
 * `transducer.cc`, `compression.cc`): an optional `LTTB` header and 8 bytes of
 * features; the alphabet's letters; its tags (strings) and its symbol pairs
 * (each side a character, a tag as a negative number, or 0 for nothing);
 * then named transducers, each an optional `LTTD` header (features: bit 0,
 * weights), its initial state, its final states and every state's
 * transitions (a symbol pair and a target state, both as differences).
 * Numbers are lttoolbox's big-endian variable-length integers.
 *
 * @module
 */

/** Where Debian's Apertium language pairs install their data. */
export const DEFAULT_APERTIUM_DIR = "/usr/share/apertium";

/** The first tags of the content words kept: nouns, lexical verbs, adjectives, adverbs. */
const CONTENT = new Set(["n", "vblex", "adj", "adv"]);
/** A lemma kept: letters only, one word (no blank, no `#` of a verb's particle, no digits). */
const LEMMA = /^[\p{L}\p{M}'’-]{2,}$/u;
const LETTERS = /^[\p{L}\p{M}'’-]+$/u;
/** Paths longer than this are not followed (a lemma and its tags are far shorter; regular expressions loop). */
const MAX_DEPTH = 80;

/** One lemma pair of a bilingual transducer: each side's lemma and first tag. */
export interface LemmaPair {
  left: string;
  right: string;
  /** The left side's first tag, such as `n` or `vblex`. */
  tag: string;
}

class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error("The transducer file ends too soon");
    return this.bytes[this.offset++]!;
  }

  /** lttoolbox's `Compression::multibyte_read`. */
  number(): number {
    const up = this.byte();
    if (up < 0x40) return up;
    if (up < 0x80) return ((up & 0x3f) << 8) | this.byte();
    if (up < 0xc0) return (((up & 0x3f) << 16) | (this.byte() << 8) | this.byte()) >>> 0;
    return ((up & 0x3f) * 0x1000000) + ((this.byte() << 16) | (this.byte() << 8) | this.byte());
  }

  /** `Compression::long_multibyte_read` (a weight), skipped: mantissa and exponent, each one or two numbers. */
  skipWeight(): void {
    for (let part = 0; part < 2; part++) if (this.number() >= 0x04000000) this.number();
  }

  string(): string {
    const length = this.number();
    let out = "";
    for (let i = 0; i < length; i++) out += String.fromCodePoint(this.number());
    return out;
  }

  /** Skips a 4-byte header and its 8 bytes of features if they are there; returns the features' low byte. */
  header(name: string): number | null {
    const at = this.offset;
    if (String.fromCharCode(...this.bytes.subarray(at, at + 4)) !== name) return null;
    this.offset = at + 12;
    return this.bytes[at + 11]!;
  }
}

/** A compiled transducer: its initial state, final states and each state's transitions as [pair, target]. */
interface Transducer {
  initial: number;
  finals: Set<number>;
  transitions: Array<Array<[number, number]>>;
}

/** A transducer file's symbol pairs (each side: a code point, a tag as -n, or 0) and its transducers. */
export function readTransducers(
  bytes: Uint8Array,
): { tags: string[]; pairs: Array<[number, number]>; transducers: Map<string, Transducer> } {
  const reader = new Reader(bytes);
  reader.header("LTTB");
  for (let letters = reader.number(); letters > 0; letters--) reader.number();
  const tags: string[] = [];
  for (let count = reader.number(); count > 0; count--) tags.push(reader.string());
  const bias = tags.length;
  const pairs: Array<[number, number]> = [];
  for (let count = reader.number(); count > 0; count--) {
    const first = reader.number() - bias;
    const second = reader.number() - bias;
    pairs.push([first, second]);
  }
  const transducers = new Map<string, Transducer>();
  for (let count = reader.number(); count > 0; count--) {
    const name = reader.string();
    const features = reader.header("LTTD") ?? 0;
    const weights = (features & 1) === 1;
    const initial = reader.number();
    const finals = new Set<number>();
    let base = 0;
    for (let finalCount = reader.number(); finalCount > 0; finalCount--) {
      base += reader.number();
      if (weights) reader.skipWeight();
      finals.add(base);
    }
    const states = reader.number();
    const transitions: Array<Array<[number, number]>> = [];
    for (let state = 0; state < states; state++) {
      const out: Array<[number, number]> = [];
      let tag = 0;
      for (let local = reader.number(); local > 0; local--) {
        tag += reader.number();
        const target = (state + reader.number()) % states;
        if (weights) reader.skipWeight();
        out.push([tag, target]);
      }
      transitions.push(out);
    }
    transducers.set(name, { initial, finals, transitions });
  }
  return { tags, pairs, transducers };
}

/**
 * Every one-word lemma pair of content words in a bilingual transducer file, in the order its paths are
 * found (a left lemma's pairs together, as the file orders them).
 */
export function bilingualPairs(bytes: Uint8Array, { lowercase = false } = {}): LemmaPair[] {
  const { tags, pairs, transducers } = readTransducers(bytes);
  const symbol = (code: number): string =>
    code === 0 ? "" : code < 0 ? `<${tags[-code - 1] ?? ""}>` : String.fromCodePoint(code);
  const out: LemmaPair[] = [];
  for (const transducer of transducers.values()) {
    const onPath = new Set<number>();
    // Each side: the lemma so far, and its first tag once one is read (null until then); a path whose
    // first tag is not a content word's, or whose lemma holds anything but letters, is left at once.
    const walk = (
      state: number,
      left: string,
      leftTag: string | null,
      right: string,
      rightTag: string | null,
      depth: number,
    ): void => {
      if (transducer.finals.has(state) && leftTag && rightTag && leftTag === rightTag) {
        if (LEMMA.test(left) && LEMMA.test(right)) out.push({ left, right, tag: leftTag });
      }
      if (depth >= MAX_DEPTH) return;
      onPath.add(state);
      for (const [pair, target] of transducer.transitions[state] ?? []) {
        if (onPath.has(target)) continue;
        const [a, b] = pairs[pair] ?? [0, 0];
        let nextLeft = left, nextLeftTag = leftTag, nextRight = right, nextRightTag = rightTag;
        if (a < 0) {
          if (nextLeftTag === null) {
            nextLeftTag = tags[-a - 1] ?? "";
            if (!CONTENT.has(nextLeftTag)) continue;
          }
        } else if (a > 0) {
          if (nextLeftTag !== null) continue; // a character after the tags: not a plain lemma
          // Only lemmas starting in lower case, when asked: en-eo.autobil.bin spells acronyms as a pattern
          // of capitals whose paths (12 million, 90 s) would all be walked and dropped.
          if (lowercase && left === "" && symbol(a) !== symbol(a).toLowerCase()) continue;
          nextLeft += symbol(a);
          if (!LETTERS.test(nextLeft)) continue;
        }
        if (b < 0) {
          if (nextRightTag === null) {
            nextRightTag = tags[-b - 1] ?? "";
            if (!CONTENT.has(nextRightTag)) continue;
          }
        } else if (b > 0) {
          if (nextRightTag !== null) continue;
          nextRight += symbol(b);
          if (!LETTERS.test(nextRight)) continue;
        }
        walk(target, nextLeft, nextLeftTag, nextRight, nextRightTag, depth + 1);
      }
      onPath.delete(state);
    };
    walk(transducer.initial, "", null, "", null, 0);
  }
  return out;
}
