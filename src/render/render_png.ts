/**
 * Draws one page of a PDF as a PNG with pdf.js on `@napi-rs/canvas`: 110 dpi,
 * the longer side at most 1,568 pixels, on white.
 *
 * The document drawn last stays open for the next page drawn from the same
 * file (known by its sha256): its cross-reference table is read and its fonts
 * are translated once, which makes a later page of the same document about a
 * quarter cheaper to draw. A page that fails closes it.
 *
 * @module
 */
import { type Canvas, createCanvas } from "@napi-rs/canvas";
import { openPdf, type PdfDocument } from "./pdfjs_loader.ts";
import { encodePng } from "./png_encoder.ts";
import { largestDeclaredImage, MAX_DECLARED_IMAGE_PIXELS, pdfKey } from "./image_size_guard.ts";

import { PAGE_DPI, PageRenderError } from "./page_drawing.ts";

export { PAGE_DPI, PageRenderError };

/** The longest side a drawn page may have, in pixels. */
export const MAX_PAGE_SIDE_PX = 1568;

/** A drawn page. */
export interface RenderedPng {
  /** The PNG file's bytes. */
  png: Uint8Array;
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

/**
 * The pixel size a page of `widthPt` × `heightPt` points is drawn at, and the
 * scale from points to pixels: 110 dpi, scaled down so the longer side fits.
 */
export function pageSizePx(
  widthPt: number,
  heightPt: number,
): { width: number; height: number; scale: number } {
  const longest = Math.max(widthPt, heightPt);
  if (!(widthPt > 0 && heightPt > 0) || !Number.isFinite(longest)) {
    throw new PageRenderError(`Cannot draw a page of ${widthPt} x ${heightPt} points: it has no area`);
  }
  let scale = PAGE_DPI / 72;
  if (longest * scale > MAX_PAGE_SIDE_PX) scale = MAX_PAGE_SIDE_PX / longest;
  const width = Math.min(MAX_PAGE_SIDE_PX, Math.max(1, Math.round(widthPt * scale)));
  const height = Math.min(MAX_PAGE_SIDE_PX, Math.max(1, Math.round(heightPt * scale)));
  return { width, height, scale };
}

/** Opens a PDF for drawing, turning pdf.js's failures into one-sentence errors. */
export async function openForPage(pdfBytes: Uint8Array, page: number): Promise<PdfDocument> {
  if (!Number.isInteger(page) || page < 1) {
    throw new PageRenderError(`Page "${page}" does not exist: pages are numbered from 1`);
  }
  let doc: PdfDocument;
  try {
    doc = await openPdf(pdfBytes);
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === "PasswordException") {
      throw new PageRenderError("Cannot open the PDF: it needs a password");
    }
    throw new PageRenderError(`Cannot open the PDF: ${describe(error)}`);
  }
  if (page > doc.numPages) {
    await doc.destroy();
    throw pastTheEnd(page, doc.numPages);
  }
  return doc;
}

function pastTheEnd(page: number, pages: number): PageRenderError {
  return new PageRenderError(`Page ${page} is past the end: the PDF has ${pages} pages`);
}

/** The document drawn last and its file's sha256. */
let kept: { key: string; doc: PdfDocument } | null = null;

/** The open document for `key`'s file: the one drawn last if it is the same file, else opened anew. */
async function documentFor(pdfBytes: Uint8Array, page: number, key: string): Promise<PdfDocument> {
  if (kept?.key === key) {
    if (!Number.isInteger(page) || page < 1) {
      throw new PageRenderError(`Page "${page}" does not exist: pages are numbered from 1`);
    }
    if (page > kept.doc.numPages) throw pastTheEnd(page, kept.doc.numPages);
    return kept.doc;
  }
  await closeKept();
  const doc = await openForPage(pdfBytes, page);
  kept = { key, doc };
  return doc;
}

/** Closes the document kept open for the next page, if any. */
export async function closeKept(): Promise<void> {
  const doc = kept?.doc;
  kept = null;
  await doc?.destroy();
}

/**
 * The most pixels a page drawn for a transcriber may have: an A4 page at 300 dpi
 * is 8.7 million; a poster-sized page is drawn at a lower resolution instead.
 */
export const MAX_TRANSCRIBE_PIXELS = 24_000_000;

/** The longest side a page drawn for a transcriber may have (Tesseract reads up to 32,767). */
export const MAX_TRANSCRIBE_SIDE_PX = 12_000;

/** A page drawn in grey for a transcriber: a binary PGM (P5) file, which Tesseract reads from stdin. */
export interface RenderedGray {
  /** The PGM file's bytes. */
  pgm: Uint8Array;
  width: number;
  height: number;
  /** The resolution it was drawn at (lower than asked for on a very large page). */
  dpi: number;
}

/**
 * Draws page `page` of a PDF in 8-bit grey at `dpi` (at most
 * {@link MAX_TRANSCRIBE_PIXELS} pixels), for Tesseract. Grey, not PNG: no
 * compression to pay for, and Tesseract binarizes grey itself.
 */
export async function renderPageGray(pdfBytes: Uint8Array, page: number, dpi: number): Promise<RenderedGray> {
  const key = await pdfKey(pdfBytes);
  await refuseHugeImages(pdfBytes, page, key);
  const doc = await documentFor(pdfBytes, page, key);
  try {
    const pdfPage = await doc.getPage(page);
    const base = pdfPage.getViewport({ scale: 1 });
    if (!(base.width > 0 && base.height > 0)) {
      throw new PageRenderError(`Cannot draw page ${page}: it has no area`);
    }
    let scale = dpi / 72;
    const fit = Math.min(
      Math.sqrt(MAX_TRANSCRIBE_PIXELS / (base.width * base.height * scale * scale)),
      MAX_TRANSCRIBE_SIDE_PX / (Math.max(base.width, base.height) * scale),
      1,
    );
    scale *= fit;
    const width = Math.max(1, Math.round(base.width * scale));
    const height = Math.max(1, Math.round(base.height * scale));
    const viewport = pdfPage.getViewport({ scale });
    const canvas = createCanvas(width, height);
    const context = canvas.getContext("2d");
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, width, height);
    await pdfPage.render({
      canvas: canvas as unknown as HTMLCanvasElement,
      canvasContext: context as unknown as CanvasRenderingContext2D,
      viewport,
      background: "#ffffff",
    }).promise;
    const rgba = pixels(canvas, width, height);
    const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
    const pgm = new Uint8Array(header.length + width * height);
    pgm.set(header);
    for (let i = 0, o = header.length; i < rgba.length; i += 4, o++) {
      // ITU-R BT.601 luma in integers.
      pgm[o] = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
    }
    pdfPage.cleanup();
    return { pgm, width, height, dpi: Math.round(dpi * fit) };
  } catch (error) {
    await closeKept();
    if (error instanceof PageRenderError) throw error;
    throw new PageRenderError(`Cannot draw page ${page}: ${describe(error)}`);
  }
}

async function refuseHugeImages(pdfBytes: Uint8Array, page: number, key: string): Promise<void> {
  const image = await largestDeclaredImage(pdfBytes, key);
  if (image && image.width * image.height > MAX_DECLARED_IMAGE_PIXELS) {
    throw new PageRenderError(
      `Cannot draw page ${page}: the PDF declares an image of ${image.width} x ${image.height} pixels, ` +
        `more than the ${MAX_DECLARED_IMAGE_PIXELS} pixels allowed`,
    );
  }
}

/** Draws page `page` (from 1) of a PDF as a PNG. */
export async function renderPagePng(pdfBytes: Uint8Array, page: number): Promise<RenderedPng> {
  const key = await pdfKey(pdfBytes);
  await refuseHugeImages(pdfBytes, page, key);
  const doc = await documentFor(pdfBytes, page, key);
  try {
    const pdfPage = await doc.getPage(page);
    const base = pdfPage.getViewport({ scale: 1 });
    const size = pageSizePx(base.width, base.height);
    const viewport = pdfPage.getViewport({ scale: size.scale });
    const canvas = createCanvas(size.width, size.height);
    const context = canvas.getContext("2d");
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, size.width, size.height);
    await pdfPage.render({
      canvas: canvas as unknown as HTMLCanvasElement,
      canvasContext: context as unknown as CanvasRenderingContext2D,
      viewport,
      background: "#ffffff",
    }).promise;
    const png = encodePng(pixels(canvas, size.width, size.height), size.width, size.height);
    pdfPage.cleanup();
    return { png, width: size.width, height: size.height };
  } catch (error) {
    await closeKept();
    if (error instanceof PageRenderError) throw error;
    throw new PageRenderError(`Cannot draw page ${page}: ${describe(error)}`);
  }
}

/**
 * The drawn page's RGBA pixels. A page drawn on white is opaque, and then the
 * canvas's own pixels are the bytes `getImageData` would give, without its
 * conversion (half its cost); a page with any pixel not opaque (premultiplied
 * in the canvas), or pixels not laid out as expected, is read through
 * `getImageData`, as before. (Alpha is each word's high byte: little-endian,
 * as the PNG encoder's grey test assumes too.)
 */
function pixels(canvas: Canvas, width: number, height: number): Uint8Array | Uint8ClampedArray {
  const raw = canvas.data();
  const readRgba = () => canvas.getContext("2d").getImageData(0, 0, width, height).data;
  if (raw.byteOffset % 4 !== 0 || raw.byteLength !== width * height * 4) return readRgba();
  const words = new Uint32Array(raw.buffer, raw.byteOffset, raw.byteLength >>> 2);
  for (let i = 0; i < words.length; i++) {
    if (words[i]! < 0xff000000) return readRgba();
  }
  return raw;
}

/** A short description of a thrown value, without a trailing period. */
export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, " ").trim().replace(/\.$/, "") || "unknown error";
}
