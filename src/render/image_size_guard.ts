/**
 * A guard against PDFs that declare images too large to decode safely (such
 * as a 2 × 2 picture with a 34,862 × 4,332 soft mask, which pdf.js decodes at
 * full size). The sizes are read as a PDF reader reads them: names with `#xx`
 * escapes are decoded (`/W#69dth` is `/Width`), indirect values are resolved
 * (`/Width 5 0 R`), those in object streams too, and every stream whose
 * dictionary has a numeric width and height counts, with or without
 * `/Subtype /Image` (pdf.js draws a soft mask without it), `/W` and `/H` as
 * pdf.js reads them too. A fast scan of the file's objects (`_pdf_object_scan.ts`,
 * milliseconds) reads them; where it is unsure of a part, pdf-lib parses every
 * object as well (about a second for a 400-page manual on a busy machine), and
 * where pdf-lib cannot parse the file, the raw bytes are scanned for direct
 * values beside. The answer is kept per file (by its sha256) for the next
 * pages drawn from it.
 *
 * @module
 */
import { PDFDict, PDFName, PDFNumber, PDFParser, PDFRawStream } from "pdf-lib";
import { resolvedSize, scanDeclaredSizes } from "./_pdf_object_scan.ts";

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

/** The file's sha256 in hex, by which its answer is kept. */
export async function pdfKey(pdfBytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", pdfBytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The largest image (by pixel count) the PDF's streams declare, or null when
 * none does; `key` is the file's {@linkcode pdfKey} when the caller has it.
 */
export async function largestDeclaredImage(
  pdfBytes: Uint8Array,
  key?: string,
): Promise<DeclaredImage | null> {
  key ??= await pdfKey(pdfBytes);
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
  const scan = scanDeclaredSizes(pdfBytes);
  let scanned: DeclaredImage | null = null;
  for (const [widthValue, heightValue] of scan.sizes) {
    const width = resolvedSize(widthValue, scan.numbers);
    const height = resolvedSize(heightValue, scan.numbers);
    if (width !== null && height !== null) scanned = larger(scanned, { width, height });
  }
  let parsed: DeclaredImage | null = null;
  if (scan.unsure) {
    try {
      parsed = await largestParsed(pdfBytes);
    } catch {
      // pdf-lib cannot read this file (pdf.js may still repair it): the scans stand alone.
    }
  }
  return larger(raw, larger(scanned, parsed));
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
  const latin1 = new TextDecoder("latin1");
  let largest: DeclaredImage | null = null;
  for (let at = indexOfSubtype(pdfBytes, 0); at >= 0; at = indexOfSubtype(pdfBytes, at + 1)) {
    // The dictionary around it: from its "obj" (at most 4 KB back) to its "stream" (at most 4 KB on).
    const start = Math.max(lastIndexOfBytes(pdfBytes, OBJ, at, Math.max(at - 4096, 0)), at - 4096, 0);
    let end = indexOfBytes(pdfBytes, STREAM, at, at + 4096 + STREAM.length);
    if (end < 0) end = Math.min(pdfBytes.length, at + 4096);
    const dict = latin1.decode(pdfBytes.subarray(start, end));
    const width = directNumber(dict, "Width");
    const height = directNumber(dict, "Height");
    if (width === null || height === null) continue;
    largest = larger(largest, { width, height });
  }
  return largest;
}

const OBJ = Array.from("obj", (c) => c.charCodeAt(0));
const STREAM = Array.from("stream", (c) => c.charCodeAt(0));

/** Where `word` starts at or after `from` and ends by `limit`, or -1. */
function indexOfBytes(bytes: Uint8Array, word: number[], from: number, limit: number): number {
  const last = Math.min(limit, bytes.length) - word.length;
  for (let at = bytes.indexOf(word[0]!, from); at >= 0 && at <= last; at = bytes.indexOf(word[0]!, at + 1)) {
    let i = 1;
    while (i < word.length && bytes[at + i] === word[i]) i++;
    if (i === word.length) return at;
  }
  return -1;
}

/** Where `word` last starts at or before `from` and at or after `floor`, or -1. */
function lastIndexOfBytes(bytes: Uint8Array, word: number[], from: number, floor: number): number {
  for (let at = bytes.lastIndexOf(word[0]!, from); at >= floor; at = bytes.lastIndexOf(word[0]!, at - 1)) {
    let i = 1;
    while (i < word.length && bytes[at + i] === word[i]) i++;
    if (i === word.length) return at;
    if (at === 0) break;
  }
  return -1;
}

const SUBTYPE = Array.from("/Subtype", (c) => c.charCodeAt(0));
const IMAGE = Array.from("/Image", (c) => c.charCodeAt(0));
/** The bytes that `\s` matches in latin1 text. */
const SPACE = new Set([9, 10, 11, 12, 13, 32, 0xa0]);

/** The next "/Subtype" followed by "/Image" (as `/\/Subtype\s*\/Image\b/` reads latin1 text), or -1. */
function indexOfSubtype(bytes: Uint8Array, from: number): number {
  for (let at = bytes.indexOf(0x2f, from); at >= 0; at = bytes.indexOf(0x2f, at + 1)) {
    let i = 1;
    while (i < SUBTYPE.length && bytes[at + i] === SUBTYPE[i]) i++;
    if (i < SUBTYPE.length) continue;
    let p = at + i;
    while (SPACE.has(bytes[p]!)) p++;
    let j = 0;
    while (j < IMAGE.length && bytes[p + j] === IMAGE[j]) j++;
    if (j === IMAGE.length && !/\w/.test(String.fromCharCode(bytes[p + j] ?? 0x20))) return at;
  }
  return -1;
}

function directNumber(dict: string, key: string): number | null {
  const found = new RegExp(`/${key}\\s+(\\d+)(?!\\s+\\d+\\s+R)`).exec(dict);
  return found ? Number(found[1]) : null;
}
