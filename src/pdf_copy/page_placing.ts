/**
 * Gives a Word (or text) file the pages of its PDF copy. Page N's text is the
 * copy's own text layer on page N, as the PDF reader reads it, so it is
 * exactly what `view_page` shows; its marks are the copy page's marks (a
 * picture, chart or ruled table drawn there). What the copy does not carry is
 * the Word file's headings: each page's text is cut where a heading starts and
 * every piece takes the heading standing above it as its `section`.
 *
 * Where the headings fall is found by aligning the Word file's words with the
 * copy's words: words that occur as often in both, and rarely (inside the
 * stretch being aligned), anchor the alignment, the longest run of anchors in
 * the same order is kept, and the stretches between anchors are aligned the same way,
 * down to small gaps that are aligned word by word. Repeated paragraphs,
 * numbered lists, running headers and footers, footnotes laid out at the foot
 * of a page and table cells read in another order then cost a few unmatched
 * words, never a page.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";

/** One piece of the Word file's text under its heading, in reading order. */
export interface SectionedText {
  section: string | null;
  text: string;
}

/** A word of a text, lower-cased for matching, with where it stands. */
export interface WordSpan {
  word: string;
  /** Offset of its first character in the text. */
  start: number;
}

/** Gaps up to this many cells (words × words) are aligned word by word. */
const WORD_BY_WORD_CELLS = 250_000;
/** A word anchors the alignment when it occurs as often on both sides, at most this many times. */
const MAX_ANCHOR_REPEATS = 4;
/** Alignment recursion stops this deep (each level halves nothing in the worst case). */
const MAX_DEPTH = 48;

const WORD =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]|\p{L}[\p{L}\p{M}]*|\p{N}+/gu;
const LINE_END_HYPHEN = /^[-\u00ad\u2010][ \t]*\n\s*$/;

/**
 * Lower-cased words with their offsets; letters and digits are separate words,
 * each Han, kana or Thai character is a word (those scripts have no spaces),
 * and a word hyphenated at a line end is one word. Arabic is reduced to what
 * survives PDF text extraction: no tatweel or vowel marks, and no alef or lam
 * (lam-alef ligatures come out reordered).
 */
export function wordSpans(text: string): WordSpan[] {
  const out: WordSpan[] = [];
  let lastEnd = -1;
  for (const match of text.matchAll(WORD)) {
    const word = normalize(match[0]);
    if (!word) continue;
    const previous = out.at(-1);
    if (
      previous && /\p{L}$/u.test(previous.word) && /^\p{L}/u.test(word) &&
      LINE_END_HYPHEN.test(text.slice(lastEnd, match.index))
    ) {
      previous.word += word;
      lastEnd = match.index + match[0].length;
      continue;
    }
    out.push({ word, start: match.index });
    lastEnd = match.index + match[0].length;
  }
  return out;
}

/** The words of a text for matching (see {@linkcode wordSpans}). */
export function words(text: string): string[] {
  return wordSpans(text).map((span) => span.word);
}

function normalize(raw: string): string {
  const word = raw.normalize("NFKC").toLowerCase().replace(/[\u0640\u064b-\u065f\u0670]/g, "");
  return /\p{Script=Arabic}/u.test(word) ? word.replace(/[\u0622\u0623\u0625\u0627\u0644]/g, "") : word;
}

/**
 * Pairs of positions (index in `a`, index in `b`) of equal words, both
 * increasing: a monotone alignment of two word sequences, found through rare
 * words occurring as often on both sides, recursively, and word by word in
 * small gaps.
 */
export function alignWords(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  alignRange(a, b, 0, a.length, 0, b.length, pairs, 0);
  return pairs;
}

function alignRange(
  a: readonly string[],
  b: readonly string[],
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  out: Array<[number, number]>,
  depth: number,
): void {
  // Equal words at both ends match directly.
  while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) out.push([aLo++, bLo++]);
  const tail: Array<[number, number]> = [];
  while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) tail.push([--aHi, --bHi]);
  if (aLo < aHi && bLo < bHi) {
    const anchors = depth < MAX_DEPTH ? uniqueAnchors(a, b, aLo, aHi, bLo, bHi) : [];
    if (anchors.length === 0) {
      if ((aHi - aLo) * (bHi - bLo) <= WORD_BY_WORD_CELLS) wordByWord(a, b, aLo, aHi, bLo, bHi, out);
    } else {
      let i = aLo;
      let j = bLo;
      for (const [ai, bj] of anchors) {
        alignRange(a, b, i, ai, j, bj, out, depth + 1);
        out.push([ai, bj]);
        i = ai + 1;
        j = bj + 1;
      }
      alignRange(a, b, i, aHi, j, bHi, out, depth + 1);
    }
  }
  for (let k = tail.length - 1; k >= 0; k--) out.push(tail[k]!);
}

/**
 * Anchor pairs for a range: words occurring as often in both ranges, at most
 * {@linkcode MAX_ANCHOR_REPEATS} times, their k-th occurrences paired (a
 * document that repeats itself still anchors), reduced to the longest run in
 * the same order.
 */
function uniqueAnchors(
  a: readonly string[],
  b: readonly string[],
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): Array<[number, number]> {
  const inA = new Map<string, number[]>();
  for (let i = aLo; i < aHi; i++) {
    const list = inA.get(a[i]!);
    if (!list) inA.set(a[i]!, [i]);
    else if (list.length <= MAX_ANCHOR_REPEATS) list.push(i);
  }
  const inB = new Map<string, number[]>();
  for (let j = bLo; j < bHi; j++) {
    const word = b[j]!;
    const inAList = inA.get(word);
    if (!inAList || inAList.length > MAX_ANCHOR_REPEATS) continue;
    const list = inB.get(word);
    if (!list) inB.set(word, [j]);
    else if (list.length <= MAX_ANCHOR_REPEATS) list.push(j);
  }
  const candidates: Array<[number, number]> = [];
  for (const [word, js] of inB) {
    const is = inA.get(word)!;
    if (is.length !== js.length) continue;
    for (let k = 0; k < is.length; k++) candidates.push([is[k]!, js[k]!]);
  }
  candidates.sort((x, y) => x[0] - y[0]);
  return longestIncreasing(candidates);
}

/** The longest subsequence of pairs (sorted by their first) whose seconds increase (patience sorting). */
function longestIncreasing(pairs: Array<[number, number]>): Array<[number, number]> {
  const tails: number[] = [];
  const before = new Int32Array(pairs.length);
  for (let k = 0; k < pairs.length; k++) {
    const value = pairs[k]![1];
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (pairs[tails[mid]!]![1] < value) low = mid + 1;
      else high = mid;
    }
    before[k] = low > 0 ? tails[low - 1]! : -1;
    tails[low] = k;
  }
  const out: Array<[number, number]> = [];
  for (let k = tails.length > 0 ? tails[tails.length - 1]! : -1; k >= 0; k = before[k]!) out.push(pairs[k]!);
  return out.reverse();
}

/** The longest common subsequence of two small ranges, as pairs. */
function wordByWord(
  a: readonly string[],
  b: readonly string[],
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  out: Array<[number, number]>,
): void {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const table = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * (m + 1) + j] = a[aLo + i] === b[bLo + j]
        ? table[(i + 1) * (m + 1) + j + 1]! + 1
        : Math.max(table[(i + 1) * (m + 1) + j]!, table[i * (m + 1) + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[aLo + i] === b[bLo + j]) {
      out.push([aLo + i, bLo + j]);
      i++;
      j++;
    } else if (table[(i + 1) * (m + 1) + j]! >= table[i * (m + 1) + j + 1]!) i++;
    else j++;
  }
}

/**
 * The pages of a document read from its PDF copy: `copyPages` are the copy's
 * pages as the PDF reader gave them (text and marks), `pieces` the Word file's
 * text under its headings in reading order. Each page keeps the copy's text
 * and marks; with `withSections` it is cut into chunks where a heading starts,
 * each chunk under the heading above it (the last one of an earlier page for
 * the text a page starts with).
 */
export function placeOnCopyPages(
  pieces: readonly SectionedText[],
  copyPages: readonly ProcessedPage[],
  options: { withSections: boolean },
): ProcessedPage[] {
  const pageSpans = copyPages.map((page) => wordSpans(page.text));
  const copyWords: string[] = [];
  for (const spans of pageSpans) for (const span of spans) copyWords.push(span.word);
  const boundaries = options.withSections ? sectionStarts(pieces, copyWords) : [];

  const out: ProcessedPage[] = [];
  let next = 0; // the next boundary to place
  let section: string | null = null;
  let offset = 0; // index in copyWords of the page's first word
  copyPages.forEach((page, index) => {
    const spans = pageSpans[index]!;
    const placed: ProcessedPage = {
      page: index + 1,
      text: page.text,
      marked: page.marked,
      image_only: page.image_only,
    };
    if (options.withSections) {
      const chunks: SectionedText[] = [];
      let cut = 0;
      const end = offset + spans.length;
      while (next < boundaries.length && boundaries[next]!.at < end) {
        const boundary = boundaries[next++]!;
        const at = spans[Math.max(0, boundary.at - offset)]!.start;
        const text = page.text.slice(cut, at).trim();
        if (text) chunks.push({ section, text });
        section = boundary.section;
        cut = Math.max(cut, at);
      }
      const rest = page.text.slice(cut).trim();
      if (rest) chunks.push({ section, text: rest });
      placed.chunks = chunks;
    }
    out.push(placed);
    offset += spans.length;
  });
  return out;
}

/** Where (index in the copy's words) each change of section starts, in order. */
function sectionStarts(
  pieces: readonly SectionedText[],
  copyWords: readonly string[],
): Array<{ at: number; section: string | null }> {
  const wordWords: string[] = [];
  const starts: Array<{ word: number; section: string | null }> = [];
  let current: string | null = null;
  for (const piece of pieces) {
    if (piece.section !== current) {
      starts.push({ word: wordWords.length, section: piece.section });
      current = piece.section;
    }
    for (const word of words(piece.text)) wordWords.push(word);
  }
  if (starts.length === 0 || copyWords.length === 0) return [];
  const pairs = alignWords(wordWords, copyWords);
  const out: Array<{ at: number; section: string | null }> = [];
  let floor = 0;
  let k = 0;
  for (const start of starts) {
    let at: number;
    if (pairs.length === 0) {
      // Nothing in common: place headings in proportion.
      at = Math.floor(start.word / Math.max(1, wordWords.length) * copyWords.length);
    } else {
      while (k < pairs.length && pairs[k]![0] < start.word) k++;
      const pair = pairs[k];
      if (!pair) at = copyWords.length;
      else {
        // The heading's first words may be unmatched: step back as many words, not past the last match.
        const previous = k > 0 ? pairs[k - 1]![1] + 1 : 0;
        at = Math.max(previous, pair[1] - (pair[0] - start.word));
      }
    }
    at = Math.max(floor, Math.min(at, copyWords.length));
    floor = at;
    out.push({ at, section: start.section });
  }
  return out.filter((boundary) => boundary.at < copyWords.length);
}
