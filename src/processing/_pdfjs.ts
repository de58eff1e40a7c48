/**
 * Loads pdf.js for in-process use (no worker thread): the pdf.js "worker" module runs in
 * the same isolate, registered on `globalThis.pdfjsWorker`.
 *
 * The worker module is loaded with one patch: image XObjects are not decoded; the
 * operator list gets a placeholder `paintImageXObject` op with the image's width and
 * height instead. Basic processing only needs where pictures are placed, and decoding
 * was about 70% of operator-list time on the corpus (and is what hostile huge images
 * attack). If the patch point is not found (another pdf.js version) or the source cannot
 * be read, the unpatched worker is used: slower, same results.
 *
 * @module
 */
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";

/** The placeholder object id of a picture that was placed but not decoded. */
export const UNREAD_IMAGE_ID = "sergo-unread-image";

const WORKER_SPECIFIER = import.meta.resolve("pdfjs-dist/legacy/build/pdf.worker.mjs");
const PATCH_POINT = "if (maxImageSize !== -1 && w * h > maxImageSize) {";

/** Where pdf.js finds its CMaps (needed for CJK text) and standard font data, as file paths. */
export const PDFJS_DATA = {
  cMapUrl: new URL("../../cmaps/", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs")).pathname,
  standardFontDataUrl:
    new URL("../../standard_fonts/", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs"))
      .pathname,
  /** The pdf.js package folder, for `--allow-read` of a sandboxed reader. */
  packageDir: new URL("../../", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs")).pathname,
};

let loading: Promise<typeof pdfjs> | undefined;
let patched = false;

/** True when the image-skipping patch is active. */
export function imageDecodingSkipped(): boolean {
  return patched;
}

async function install(): Promise<typeof pdfjs> {
  const g = globalThis as { pdfjsWorker?: unknown };
  if (g.pdfjsWorker === undefined) {
    try {
      const source = await Deno.readTextFile(new URL(WORKER_SPECIFIER));
      if (source.includes(PATCH_POINT)) {
        const code = source.replace(
          PATCH_POINT,
          `operatorList.addOp(OPS.paintImageXObject, [${JSON.stringify(UNREAD_IMAGE_ID)}, w, h]); return;\n` +
            PATCH_POINT,
        );
        const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
        try {
          g.pdfjsWorker = await import(url);
          patched = true;
        } finally {
          URL.revokeObjectURL(url);
        }
      }
    } catch {
      // Fall back to the unpatched worker below.
    }
    if (g.pdfjsWorker === undefined) g.pdfjsWorker = await import("pdfjs-dist/legacy/build/pdf.worker.mjs");
  }
  return pdfjs;
}

/** The pdf.js API, with its in-process worker installed. */
export function loadPdfjs(): Promise<typeof pdfjs> {
  loading ??= install();
  return loading;
}
