/**
 * Loads pdf.js in-process (no eval, no network), with its standard fonts,
 * CMaps, ICC profiles and image decoders read from the installed package, and
 * with `@napi-rs/canvas` as its canvas, so every canvas object pdf.js makes
 * comes from the same native addon that draws the page.
 *
 * pdf.js's worker module (run in this isolate, as pdf.js does where there are
 * no browser workers) is loaded with one patch: a JPEG image is decoded by the
 * canvas addon's native decoder where that reads it as pdf.js would
 * (`_native_jpeg.ts`), and by pdf.js otherwise. If the patch point is not
 * found (another pdf.js version) or the patched module cannot be loaded,
 * pdf.js's own worker runs unpatched: slower, the same pictures.
 *
 * @module
 */
import * as canvasAddon from "@napi-rs/canvas";
import { fileURLToPath } from "node:url";
import { decodeJpegNatively } from "./_native_jpeg.ts";
import { LoopbackPort } from "./pdfjs_port.ts";

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

/** Where the patched worker looks for the native JPEG decoder. */
const JPEG_HOOK = "__sergoRenderJpeg";

/**
 * Where the patch goes: in pdf.js's `JpegStream`, before the method that hands
 * a JPEG to a browser's decoder. The patch gives the class its own
 * `getImageData` (the call every image's pixels are read through), which asks
 * the native decoder first and else goes on as before.
 */
const JPEG_PATCH_POINT = `  get canAsyncDecodeImageFromBuffer() {
    return this.stream.isAsync;
  }
  async getTransferableImage() {`;
const JPEG_PATCH = `  async getImageData(length, decoderOptions) {
    const native = globalThis.${JPEG_HOOK};
    if (native && !this.eof) {
      const raw = this.canAsyncDecodeImageFromBuffer && (await this.stream.asyncGetBytes()) || this.bytes;
      const data = raw && await native(this.#skipUselessBytes(raw), {
        width: this.drawWidth,
        height: this.drawHeight,
        forceRGBA: this.forceRGBA || this.forceRGB,
        decodeTransform: this.jpegOptions.decodeTransform,
        colorTransform: this.jpegOptions.colorTransform,
      });
      if (data) {
        this.buffer = data;
        this.bufferLength = data.length;
        this.eof = true;
        return this.canAsyncDecodeImageFromBuffer || data.length > length ? data : this.getBytes(length, decoderOptions);
      }
    }
    return super.getImageData(length, decoderOptions);
  }
`;

/**
 * Where pdf.js asks a JPEG for RGB to draw: the native decoder answers RGBA,
 * and the patch tells the image so (four bytes a pixel: it cannot be RGB).
 */
const RGB_POINT = `              imgData.kind = ImageKind.RGB_24BPP;
              imgData.data = await this.getImageBytes(imageLength, {
                drawWidth,
                drawHeight,
                forceRGB: true,
                internal: mustBeResized
              });`;
const RGB_PATCH = `
              if (imgData.data.length === drawWidth * drawHeight * 4) imgData.kind = ImageKind.RGBA_32BPP;`;

type WorkerHandler = { WorkerMessageHandler: { initializeFromPort(port: unknown): void } };

let patchedWorker: Promise<InstanceType<PdfJs["PDFWorker"]> | null> | undefined;

/** The pdf.js worker with native JPEG decoding, one for the isolate; null when it cannot be patched. */
function renderWorker(): Promise<InstanceType<PdfJs["PDFWorker"]> | null> {
  patchedWorker ??= (async () => {
    const lib = await pdfjs();
    try {
      const source = await Deno.readTextFile(
        new URL(import.meta.resolve("pdfjs-dist/legacy/build/pdf.worker.mjs")),
      );
      if (source.split(JPEG_PATCH_POINT).length !== 2 || source.split(RGB_POINT).length !== 2) return null;
      const code = source.replace(JPEG_PATCH_POINT, () => JPEG_PATCH + JPEG_PATCH_POINT)
        .replace(RGB_POINT, () => RGB_POINT + RGB_PATCH);
      const g = globalThis as Record<string, unknown>;
      // The worker module registers itself on globalThis.pdfjsWorker; it is kept private here.
      const registered = Object.getOwnPropertyDescriptor(g, "pdfjsWorker");
      const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
      let module: WorkerHandler;
      try {
        module = await import(url);
      } finally {
        URL.revokeObjectURL(url);
        if (registered) Object.defineProperty(g, "pdfjsWorker", registered);
        else delete g.pdfjsWorker;
      }
      g[JPEG_HOOK] = decodeJpegNatively;
      const port = new LoopbackPort();
      module.WorkerMessageHandler.initializeFromPort(port);
      // deno-lint-ignore no-explicit-any
      return new lib.PDFWorker({ port: port as any, verbosity: 0 });
    } catch {
      return null;
    }
  })();
  return patchedWorker;
}

/** True when JPEG images are decoded natively (the worker module could be patched). */
export async function nativeJpegDecoding(): Promise<boolean> {
  return (await renderWorker()) !== null;
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
  const worker = await renderWorker();
  const task = lib.getDocument(
    {
      ...(worker ? { worker } : {}),
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
