/**
 * Decodes a PDF's JPEG (DCTDecode) images with the canvas addon's native
 * decoder (libjpeg-turbo in Skia) instead of pdf.js's decoder in JavaScript,
 * which was about a third of a first page view's CPU on the corpus. The
 * pixels are handed back as pdf.js's own decoder gives them (grey or RGB), or
 * as RGBA where pdf.js would have asked for RGB to draw (the canvas's own
 * layout: pdf.js then copies the rows instead of widening every pixel).
 *
 * Only JPEGs both decoders read the same way are decoded here: 8-bit baseline
 * or progressive, one or three components, no Decode array and no
 * ColorTransform in the PDF, the size the PDF gives, and no disagreement on
 * whether three components are YCbCr. Everything else (CMYK, arithmetic
 * coding, a damaged file the native decoder refuses) is left to pdf.js.
 * Exif and ICC segments are blanked first, as pdf.js does before handing a
 * JPEG to a browser's decoder: the PDF, not the JPEG, says how it is turned
 * and coloured.
 *
 * @module
 */
import { createCanvas, Image } from "@napi-rs/canvas";

/** What pdf.js asks of a JPEG it is about to decode. */
export interface JpegRequest {
  /** The width and height pdf.js draws it at (the PDF's /Width and /Height). */
  width: number;
  height: number;
  /** RGBA for every image (else grey or RGB, as the JPEG has it). */
  forceRGBA?: boolean;
  /** From the PDF's /Decode array: set when the samples are remapped. */
  decodeTransform?: unknown;
  /** The filter's /ColorTransform, when the PDF gives one. */
  colorTransform?: number;
}

/** The parts of a JPEG's header that decide whether it is decoded natively. */
interface JpegHeader {
  width: number;
  height: number;
  components: number;
  /** Payloads of APP1 (Exif, XMP) and APP2 (ICC) segments, to blank. */
  blank: [start: number, end: number][];
  /** Whether the three components are YCbCr to pdf.js and to libjpeg. */
  ycc: { pdfjs: boolean; libjpeg: boolean };
}

/**
 * The most pixels one JPEG may have to be decoded here; larger ones (pdf.js
 * allows 64 million) are left to pdf.js. Decoding holds about three copies at
 * four bytes a pixel at once (the decoded image, the canvas it is drawn on,
 * the pixels handed over): 300 MB at this size, about what pdf.js's own
 * decoder and drawing take for it.
 */
const MAX_NATIVE_PIXELS = 25_000_000;

/** Reads a JPEG's segments up to its frame header; null when it is not one this decoder takes. */
export function readJpegHeader(bytes: Uint8Array): JpegHeader | null {
  const length = bytes.length;
  if (length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  const blank: [number, number][] = [];
  let jfif = false;
  let adobeTransform: number | null = null;
  let i = 2;
  while (i + 4 <= length) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    const size = (bytes[i + 2]! << 8) | bytes[i + 3]!;
    if (size < 2 || i + 2 + size > length) return null;
    const start = i + 4;
    const end = i + 2 + size;
    if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      if (size < 8 || bytes[start] !== 8) return null;
      const height = (bytes[start + 1]! << 8) | bytes[start + 2]!;
      const width = (bytes[start + 3]! << 8) | bytes[start + 4]!;
      const components = bytes[start + 5]!;
      if (size < 8 + 3 * components) return null;
      const ids = Array.from({ length: components }, (_, c) => bytes[start + 6 + 3 * c]!);
      const rgbIds = components === 3 && ids[0] === 0x52 && ids[1] === 0x47 && ids[2] === 0x42;
      const pdfjs = adobeTransform !== null ? adobeTransform !== 0 : !rgbIds;
      const libjpeg = jfif || (adobeTransform !== null ? adobeTransform !== 0 : !rgbIds);
      return { width, height, components, blank, ycc: { pdfjs, libjpeg } };
    }
    // Any other frame type (lossless, arithmetic, hierarchical), a scan or the end before a frame.
    if (
      (marker >= 0xc3 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) ||
      marker === 0xda || marker === 0xd9
    ) {
      return null;
    }
    if (marker === 0xe0 && size >= 7 && isTag(bytes, start, "JFIF\0")) jfif = true;
    if (marker === 0xee && size >= 14 && isTag(bytes, start, "Adobe")) adobeTransform = bytes[start + 11]!;
    if (marker === 0xe1 || marker === 0xe2) blank.push([start, end]);
    i = end;
  }
  return null;
}

function isTag(bytes: Uint8Array, at: number, tag: string): boolean {
  for (let k = 0; k < tag.length; k++) if (bytes[at + k] !== tag.charCodeAt(k)) return false;
  return true;
}

/**
 * The JPEG's pixels as pdf.js's decoder would give them for `request`
 * (grey, RGB or RGBA bytes, row by row), or null when it is left to pdf.js.
 */
export async function decodeJpegNatively(
  bytes: Uint8Array,
  request: JpegRequest,
): Promise<Uint8ClampedArray | null> {
  if (request.decodeTransform || request.colorTransform !== undefined) return null;
  const header = readJpegHeader(bytes);
  if (!header || (header.components !== 1 && header.components !== 3)) return null;
  if (header.components === 3 && header.ycc.pdfjs !== header.ycc.libjpeg) return null;
  const { width, height } = header;
  if (width !== request.width || height !== request.height || width * height > MAX_NATIVE_PIXELS) return null;
  if (width < 1 || height < 1) return null;
  let source = bytes;
  if (header.blank.length > 0) {
    source = bytes.slice();
    for (const [start, end] of header.blank) source.fill(0, start, end);
  }
  const image = new Image();
  image.src = source;
  try {
    await image.decode();
  } catch {
    return null;
  }
  if (image.width !== width || image.height !== height) return null;
  const canvas = createCanvas(width, height);
  canvas.getContext("2d").drawImage(image, 0, 0);
  const rgba = canvas.data();
  const count = width * height;
  if (rgba.byteLength !== count * 4) return null;
  const words = rgba.byteOffset % 4 === 0
    ? new Uint32Array(rgba.buffer, rgba.byteOffset, count)
    : new Uint32Array(rgba.slice().buffer, 0, count);
  let out: Uint8ClampedArray;
  if (request.forceRGBA) {
    out = new Uint8ClampedArray(count * 4);
    out.set(rgba);
  } else if (header.components === 1) {
    out = new Uint8ClampedArray(count);
    const bytes = new Uint8Array(out.buffer);
    for (let p = 0; p < count; p++) bytes[p] = words[p]!;
  } else {
    out = new Uint8ClampedArray(count * 3);
    const bytes = new Uint8Array(out.buffer);
    for (let p = 0, o = 0; p < count; p++, o += 3) {
      const w = words[p]!;
      bytes[o] = w;
      bytes[o + 1] = w >>> 8;
      bytes[o + 2] = w >>> 16;
    }
  }
  canvas.width = 0;
  canvas.height = 0;
  return out;
}
