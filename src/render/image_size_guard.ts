/**
 * A cheap guard against PDFs that declare images too large to decode safely
 * (such as a 2 × 2 picture with a 34,862 × 4,332 soft mask, which pdf.js
 * decodes at full size). Image streams cannot sit inside object streams, so
 * their dictionaries are always readable in the raw bytes.
 *
 * @module
 */

/** The most pixels one image in a PDF may declare for its pages to be drawn. */
export const MAX_DECLARED_IMAGE_PIXELS = 64_000_000;

/** An image declared in a PDF, by its size in pixels. */
export interface DeclaredImage {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

/** The largest image (by pixel count) the PDF's image streams declare, or null when none does. */
export function largestDeclaredImage(pdfBytes: Uint8Array): DeclaredImage | null {
  const text = new TextDecoder("latin1").decode(pdfBytes);
  const subtype = /\/Subtype\s*\/Image\b/g;
  let largest: DeclaredImage | null = null;
  for (let match = subtype.exec(text); match; match = subtype.exec(text)) {
    const start = Math.max(text.lastIndexOf("obj", match.index), match.index - 4096, 0);
    let end = text.indexOf("stream", match.index);
    if (end < 0 || end - match.index > 4096) end = Math.min(text.length, match.index + 4096);
    const dict = text.slice(start, end);
    const width = directNumber(dict, "Width");
    const height = directNumber(dict, "Height");
    if (width === null || height === null) continue;
    if (!largest || width * height > largest.width * largest.height) largest = { width, height };
  }
  return largest;
}

function directNumber(dict: string, key: string): number | null {
  const found = new RegExp(`/${key}\\s+(\\d+)(?!\\s+\\d+\\s+R)`).exec(dict);
  return found ? Number(found[1]) : null;
}
