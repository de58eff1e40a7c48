/**
 * Test helper: how well a page's text agrees with what poppler's `pdftotext`
 * reads from the same page of a PDF, a reader independent of Sergo's pdf.js.
 *
 * Words are compared in order (a longest common subsequence), lower-cased,
 * with hyphenation at line ends undone; punctuation, whitespace and list
 * markers do not count. Poppler gives two orders: the content order
 * (`-raw`) and its reading order, in which it also cuts the page into blocks
 * (paragraphs, text boxes, table cells); a block's words must be in order,
 * blocks may come in either order. Right-to-left pages are compared letter by
 * letter without vowel marks: poppler cuts Arabic words apart at vowel-mark
 * glyphs where pdf.js does not, and the letters are what both share.
 *
 * @module
 */

/** Agreement of one page: matched units, both ways. */
export interface PageAgreement {
  /** Words (letters on right-to-left pages) of poppler's page text. */
  copyUnits: number;
  /** Words (or letters) of the page text compared. */
  pageUnits: number;
  /** Share of poppler's units found in order in the page text. */
  copyInPage: number;
  /** Share of the page text's units found in order in poppler's. */
  pageInCopy: number;
}

/** Whether at least `share` of a text's letters are in a right-to-left script. */
export function rightToLeft(text: string, share = 0.5): boolean {
  const rtl = text.match(/[\p{Script=Arabic}\p{Script=Hebrew}]/gu)?.length ?? 0;
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  return letters > 0 && rtl >= letters * share;
}

/** The units compared: words, or letters on right-to-left pages. */
export function units(text: string, rtl: boolean): string[] {
  const folded = text.normalize("NFKC").toLowerCase().replace(
    /(\p{L})[-\u00ad\u2010]\s*\n\s*(\p{L})/gu,
    "$1$2",
  );
  if (rtl) return folded.replace(/[\u0640\u064b-\u065f\u0670\p{M}]/gu, "").match(/\p{L}/gu) ?? [];
  return folded.match(/\p{L}[\p{L}\p{M}]*|\p{N}+/gu) ?? [];
}

/** The length of the longest common subsequence. */
export function commonInOrder(a: readonly string[], b: readonly string[]): number {
  // Equal heads and tails match directly (most pages agree almost word for word).
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) tail++;
  if (head + tail > 0) {
    return head + tail + commonInOrder(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  }
  if (a.length === 0 || b.length === 0) return 0;
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const word = a[i - 1];
    for (let j = 1; j <= b.length; j++) {
      current[j] = word === b[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/** `pdftotext` (at `command`) of every page of a PDF, in content order (`raw`) or reading order. */
export async function popplerPages(command: string, pdfPath: string, raw: boolean): Promise<string[]> {
  const args = ["-q", "-enc", "UTF-8", ...(raw ? ["-raw"] : []), pdfPath, "-"];
  const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) throw new Error(`pdftotext failed: ${new TextDecoder().decode(output.stderr)}`);
  const pages = new TextDecoder().decode(output.stdout).split("\f");
  if (pages.at(-1)?.trim() === "") pages.pop();
  return pages;
}

/** How a page's text agrees with poppler's reading of the same page (both orders of it). */
export function pageAgreement(raw: string, reading: string, text: string): PageAgreement {
  const rtl = rightToLeft(raw + text);
  const mine = units(text, rtl);
  const contentOrder = units(raw, rtl);
  const readingOrder = units(reading, rtl);
  const blocks = reading.split(/\n[ \t]*\n/).map((block) => units(block, rtl)).filter((b) => b.length > 0);
  const matched = Math.max(
    commonInOrder(contentOrder, mine),
    commonInOrder(readingOrder, mine),
    // Each block in order, blocks in any order (capped: a word can match once only). Not for
    // letters, which would match by chance across a page.
    rtl ? 0 : Math.min(mine.length, blocks.reduce((sum, block) => sum + commonInOrder(block, mine), 0)),
  );
  const copyUnits = contentOrder.length;
  return {
    copyUnits,
    pageUnits: mine.length,
    copyInPage: copyUnits === 0 ? (mine.length === 0 ? 1 : 0) : Math.min(1, matched / copyUnits),
    pageInCopy: mine.length === 0 ? (copyUnits === 0 ? 1 : 0) : Math.min(1, matched / mine.length),
  };
}
