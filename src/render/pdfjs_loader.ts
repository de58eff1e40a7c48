/**
 * Loads pdf.js in-process (no eval, no network), with its standard fonts,
 * CMaps, ICC profiles and image decoders read from the installed package, and
 * with `@napi-rs/canvas` as its canvas, so every canvas object pdf.js makes
 * comes from the same native addon that draws the page.
 *
 * @module
 */
import * as canvasAddon from "@napi-rs/canvas";
import { fileURLToPath } from "node:url";

type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");

/** A document opened by pdf.js. */
export type PdfDocument = Awaited<ReturnType<PdfJs["getDocument"]>["promise"]>;

/** A page of a document opened by pdf.js. */
export type PdfPage = Awaited<ReturnType<PdfDocument["getPage"]>>;

/** Images larger than this many pixels are left out instead of decoded (hostile PDFs). */
export const MAX_IMAGE_PIXELS = 64_000_000;

/** The largest intermediate canvas pdf.js may allocate, in bytes. */
export const MAX_CANVAS_BYTES = 64 * 1024 * 1024;

let loaded: Promise<PdfJs> | undefined;

/** Imports pdf.js once, after giving it this canvas addon's DOM classes. */
export function pdfjs(): Promise<PdfJs> {
  loaded ??= (async () => {
    const g = globalThis as Record<string, unknown>;
    g.DOMMatrix ??= canvasAddon.DOMMatrix;
    g.ImageData ??= canvasAddon.ImageData;
    g.Path2D ??= canvasAddon.Path2D;
    return await import("pdfjs-dist/legacy/build/pdf.mjs");
  })();
  return loaded;
}

function packageDir(folder: string): string {
  const url = new URL(`../../${folder}/`, import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs"));
  return fileURLToPath(url);
}

/** Creates canvases with `@napi-rs/canvas` for pdf.js (patterns, masks, groups). */
class AddonCanvasFactory {
  constructor(_options: unknown) {}

  create(width: number, height: number): { canvas: unknown; context: unknown } {
    if (width <= 0 || height <= 0) throw new Error(`Invalid canvas size: ${width} x ${height}`);
    const canvas = canvasAddon.createCanvas(width, height);
    return { canvas, context: canvas.getContext("2d") };
  }

  reset(target: { canvas: canvasAddon.Canvas }, width: number, height: number): void {
    if (width <= 0 || height <= 0) throw new Error(`Invalid canvas size: ${width} x ${height}`);
    target.canvas.width = width;
    target.canvas.height = height;
  }

  destroy(target: { canvas: canvasAddon.Canvas | null; context: unknown }): void {
    if (target.canvas) {
      target.canvas.width = 0;
      target.canvas.height = 0;
    }
    target.canvas = null;
    target.context = null;
  }
}

/**
 * Opens PDF bytes with pdf.js. The bytes are copied first, because pdf.js
 * takes ownership of the buffer it is given.
 */
export async function openPdf(bytes: Uint8Array): Promise<PdfDocument> {
  const lib = await pdfjs();
  const task = lib.getDocument(
    {
      data: bytes.slice(),
      isEvalSupported: false,
      useSystemFonts: false,
      disableFontFace: true,
      standardFontDataUrl: packageDir("standard_fonts"),
      cMapUrl: packageDir("cmaps"),
      cMapPacked: true,
      wasmUrl: packageDir("wasm"),
      iccUrl: packageDir("iccs"),
      maxImageSize: MAX_IMAGE_PIXELS,
      canvasMaxAreaInBytes: MAX_CANVAS_BYTES,
      CanvasFactory: AddonCanvasFactory,
      verbosity: 0,
    } as Parameters<PdfJs["getDocument"]>[0],
  );
  return await task.promise;
}
