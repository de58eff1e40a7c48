/**
 * A guard against PDFs that declare images too large to decode safely (such
 * as a 2 × 2 picture with a 34,862 × 4,332 soft mask, which pdf.js decodes at
 * full size). The sizes are read as a PDF reader reads them: pdf-lib parses
 * every object (those in object streams too), names with `#xx` escapes are
 * decoded (`/W#69dth` is `/Width`) and indirect values are resolved
 * (`/Width 5 0 R`). Every stream whose dictionary has a numeric width and
 * height counts, with or without `/Subtype /Image` (pdf.js draws a soft mask
 * without it). Where pdf-lib cannot parse the file, the raw bytes are scanned
 * for direct values instead. Parsing a long PDF takes a while (about a second
 * for a 400-page manual on a busy machine), so the answer is kept per file
 * (by its sha256) for the next pages drawn from it.
 *
 * @module
 */
import { PDFDict, PDFName, PDFNumber, PDFParser, PDFRawStream } from "pdf-lib";

/** The most pixels one image in a PDF may declare for its pages to be drawn. */
export const MAX_DECLARED_IMAGE_PIXELS = 64_000_000;

/** An image declared in a PDF, by its size in pixels. */
export interface DeclaredImage {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

/** Answers for the files seen last, by sha256 (each an object of two numbers). */
const seen = new Map<string, DeclaredImage | null>();
const SEEN_FILES = 64;

/** The largest image (by pixel count) the PDF's streams declare, or null when none does. */
export async function largestDeclaredImage(pdfBytes: Uint8Array): Promise<DeclaredImage | null> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", pdfBytes as Uint8Array<ArrayBuffer>));
  const key = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (seen.has(key)) {
    const answer = seen.get(key)!;
    seen.delete(key);
    seen.set(key, answer);
    return answer;
  }
  const answer = await measure(pdfBytes);
  seen.set(key, answer);
  if (seen.size > SEEN_FILES) seen.delete(seen.keys().next().value!);
  return answer;
}

async function measure(pdfBytes: Uint8Array): Promise<DeclaredImage | null> {
  const raw = largestInRawBytes(pdfBytes);
  let parsed: DeclaredImage | null = null;
  try {
    parsed = await largestParsed(pdfBytes);
  } catch {
    // pdf-lib cannot read this file (pdf.js may still repair it): the raw scan stands alone.
  }
  return larger(raw, parsed);
}

function larger(a: DeclaredImage | null, b: DeclaredImage | null): DeclaredImage | null {
  if (!a) return b;
  if (!b) return a;
  return b.width * b.height > a.width * a.height ? b : a;
}

const WIDTH = PDFName.of("Width");
const HEIGHT = PDFName.of("Height");

/** The sizes every stream's dictionary declares, its values resolved as pdf-lib reads them. */
async function largestParsed(pdfBytes: Uint8Array): Promise<DeclaredImage | null> {
  const context = await PDFParser.forBytesWithOptions(pdfBytes, Infinity, false).parseDocument();
  let largest: DeclaredImage | null = null;
  for (const [, object] of context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    const width = numberIn(object.dict, WIDTH);
    const height = numberIn(object.dict, HEIGHT);
    if (width === null || height === null) continue;
    largest = larger(largest, { width, height });
  }
  return largest;
}

function numberIn(dict: PDFDict, key: PDFName): number | null {
  let value;
  try {
    value = dict.lookup(key);
  } catch {
    return null;
  }
  if (!(value instanceof PDFNumber)) return null;
  const n = value.asNumber();
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** The raw-bytes scan: image dictionaries with direct sizes (image streams never sit in object streams). */
function largestInRawBytes(pdfBytes: Uint8Array): DeclaredImage | null {
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
    largest = larger(largest, { width, height });
  }
  return largest;
}

function directNumber(dict: string, key: string): number | null {
  const found = new RegExp(`/${key}\\s+(\\d+)(?!\\s+\\d+\\s+R)`).exec(dict);
  return found ? Number(found[1]) : null;
}
