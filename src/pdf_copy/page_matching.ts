/**
 * Gives a Word file's chunks the real pages of its PDF copy: each chunk, in
 * reading order, takes the page where its text starts in the copy. Matching
 * is by words (case, punctuation, whitespace, hyphenation at line ends and
 * list numbers do not matter), allows a few words to differ or be interleaved
 * (headers, footers, footnote marks), and never goes backwards: page numbers
 * are non-decreasing.
 *
 * @module
 */
import { openPdf } from "../render/pdfjs_loader.ts";

/** How many leading words of a chunk are used to find where it starts. */
const PROBE_WORDS = 12;
/** The share of probe words that must be found, in order, near the start. */
const MIN_SCORE = 0.6;
/** A chunk may start this many pages past the last one without the next chunk confirming it. */
const MAX_UNCONFIRMED_JUMP = 2;
/** Candidate starts examined per chunk before giving up (bounds the cost). */
const MAX_CANDIDATES = 400;

/**
 * Lower-cased words for matching; letters and digits are separate words, and
 * each Han, kana or Thai character is a word, as those scripts have no spaces.
 * Arabic is reduced to what survives PDF text extraction: no tatweel or
 * vowel marks, and no alef or lam (lam-alef ligatures come out reordered).
 */
export function words(text: string): string[] {
  const joined = text.normalize("NFKC").toLowerCase()
    .replace(/(\p{L})[-\u00ad\u2010]\s*\n\s*(\p{L})/gu, "$1$2")
    .replace(/[\u0640\u064b-\u065f\u0670]/g, "");
  const found = joined.match(
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]|\p{L}[\p{L}\p{M}]*|\p{N}+/gu,
  ) ?? [];
  const out: string[] = [];
  for (const word of found) {
    const plain = /\p{Script=Arabic}/u.test(word)
      ? word.replace(/[\u0622\u0623\u0625\u0627\u0644]/g, "")
      : word;
    if (plain) out.push(plain);
  }
  return out;
}

/** The text of each page of a PDF (pdf.js text content, lines joined with newlines). */
export async function pdfPageTexts(pdfBytes: Uint8Array): Promise<string[]> {
  const doc = await openPdf(pdfBytes);
  try {
    const texts: string[] = [];
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
      }
      texts.push(text);
      page.cleanup();
    }
    return texts;
  } finally {
    await doc.destroy();
  }
}

/**
 * The page (from 1) of the PDF copy where each chunk starts, for chunks in
 * reading order. A chunk that cannot be found takes the page of the chunk
 * before it (page 1 for the first).
 */
export function matchChunksToPages(chunks: string[], pdfPageTexts: string[]): number[] {
  const tokens: string[] = [];
  const pageOf: number[] = [];
  pdfPageTexts.forEach((text, index) => {
    for (const word of words(text)) {
      tokens.push(word);
      pageOf.push(index + 1);
    }
  });
  const positions = new Map<string, number[]>();
  tokens.forEach((word, index) => {
    const list = positions.get(word);
    if (list) list.push(index);
    else positions.set(word, [index]);
  });

  const chunkWords = chunks.map(words);
  const pages: number[] = [];
  let cursor = 0;
  let page = 1;
  for (let i = 0; i < chunks.length; i++) {
    const own = chunkWords[i]!;
    const probe = own.slice(0, PROBE_WORDS);
    let start = probe.length > 0 ? findStart(probe, tokens, positions, cursor) : -1;
    // A match more than a couple of pages ahead is kept only if the next chunk follows it.
    if (start >= 0 && (pageOf[start] ?? page) > page + MAX_UNCONFIRMED_JUMP) {
      const next = chunkWords.slice(i + 1).find((list) => list.length > 0);
      const after = next ? findStart(next.slice(0, PROBE_WORDS), tokens, positions, start + 1) : -1;
      if (after < 0 || after - start > own.length * 3 + 100) start = -1;
    }
    if (start >= 0) {
      page = Math.max(page, pageOf[start] ?? page);
      cursor = start + 1;
    }
    pages.push(page);
  }
  return pages;
}

/** The token index where `probe` starts at or after `cursor`, or -1. */
function findStart(
  probe: string[],
  tokens: string[],
  positions: Map<string, number[]>,
  cursor: number,
): number {
  // Anchor on the rarest of the probe's words, then check the words around it.
  let anchor = -1;
  let anchorCount = Infinity;
  for (let i = 0; i < probe.length; i++) {
    const count = positions.get(probe[i]!)?.length ?? 0;
    if (count > 0 && count < anchorCount) {
      anchor = i;
      anchorCount = count;
    }
  }
  if (anchor < 0) return -1;
  const occurrences = positions.get(probe[anchor]!)!;
  const needed = Math.max(1, Math.ceil(probe.length * MIN_SCORE));
  let examined = 0;
  for (let k = lowerBound(occurrences, cursor + anchor); k < occurrences.length; k++) {
    if (++examined > MAX_CANDIDATES) break;
    const at = occurrences[k]!;
    const from = Math.max(cursor, at - anchor * 2 - 2);
    const to = Math.min(tokens.length, at + (probe.length - anchor) * 2 + 2);
    const found = alignedStart(probe, tokens, from, to, needed);
    if (found >= 0) return found;
  }
  return -1;
}

/** Matches `probe` in order inside tokens[from, to); the index of its first matched word if enough match. */
function alignedStart(probe: string[], tokens: string[], from: number, to: number, needed: number): number {
  // Try each position of the first probe words as the start, best (earliest full) first.
  for (let lead = 0; lead <= probe.length - needed; lead++) {
    for (let s = from; s < to; s++) {
      if (tokens[s] !== probe[lead]) continue;
      let matched = 1;
      let j = s + 1;
      for (let i = lead + 1; i < probe.length && j < to; i++) {
        let look = j;
        while (look < to && look < j + 3 && tokens[look] !== probe[i]) look++;
        if (look < to && tokens[look] === probe[i]) {
          matched++;
          j = look + 1;
        }
      }
      if (matched >= needed) return s;
    }
  }
  return -1;
}

function lowerBound(sorted: number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
