/**
 * Loads pdf.js for in-process use (no worker thread): the pdf.js "worker" module runs in
 * the same isolate, registered on `globalThis.pdfjsWorker`.
 *
 * The worker module's source is patched at fixed points before it is loaded:
 * - image XObjects are not decoded when an operator list is built; it gets a
 *   placeholder `paintImageXObject` op with the image's width and height instead
 *   (decoding was about 70% of operator-list time on the corpus, and is what hostile
 *   huge images attack);
 * - the text-content pass hands every content-stream operator, with the graphics
 *   state and resources, to {@linkcode TEXT_OPERATOR_HOOK} when one is set (and then
 *   reads a form without text each time it is drawn, not only the first), so Basic
 *   processing learns what a page draws while it reads the page's text, in one pass
 *   instead of a second one for the operator list (that pass was 40% of extraction);
 * - while a hook is set, fonts are not turned into programs for drawing (see
 *   {@linkcode FONT_PROGRAM_POINTS});
 * - Flate and Brotli streams are decompressed by zlib (see {@linkcode inflate}).
 *
 * Text and marks are the same with and without the patches (a test compares them on
 * the corpus). If a patch point is not found (another pdf.js version) or the source
 * cannot be read, {@linkcode textOperatorsHooked} says so and callers build operator
 * lists instead: slower, same results.
 *
 * @module
 */
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { brotliDecompressSync, inflateSync } from "node:zlib";
import { LoopbackPort } from "../render/pdfjs_port.ts";

export { PDFJS_DATA } from "./_pdfjs_data.ts";

/** The placeholder object id of a picture that was placed but not decoded. */
export const UNREAD_IMAGE_ID = "sergo-unread-image";

/** Where the text pass looks for an operator hook: `(fn, args, state, resources) => void`. */
export const TEXT_OPERATOR_HOOK = "__sergoTextOperator";

/** What the text pass hands the hook with each operator. */
export type TextOperatorHook = (
  fn: number,
  args: unknown[] | null,
  state: { ctm: ArrayLike<number>; [key: string]: unknown },
  resources: { get(key: string): unknown } | null,
) => void;

const WORKER_SPECIFIER = import.meta.resolve("pdfjs-dist/legacy/build/pdf.worker.mjs");
const PATCH_POINT = "if (maxImageSize !== -1 && w * h > maxImageSize) {";
const TEXT_PATCH_POINT = `currentTextState ||= textState.clone();
        const fn = operation.fn;
        args = operation.args;`;
/**
 * Where the text pass adds a glyph's text. A ligature of a right-to-left script
 * (Arabic lam-alef: لا, لأ, لإ, لآ) maps to several characters in reading order,
 * but pdf.js reverses a right-to-left line's characters after joining them,
 * which turns the ligature round (خلال read as خالل, بنغلاديش as بنغالديش: 8% of
 * an Arabic report's words); poppler reads them the same wrong way. The patch
 * turns such a glyph's text round first, so the line's reversal restores it.
 */
const LIGATURE_POINT = "textChunk.str.push(glyphUnicode);";
const LIGATURE_REPLACEMENT =
  "textChunk.str.push(glyphUnicode.length > 1 && /[\\u0590-\\u08ff\\ufb1d-\\ufdff\\ufe70-\\ufefc]/.test(glyphUnicode) " +
  '? [...glyphUnicode].reverse().join("") : glyphUnicode);';
/** Where pdf.js decompresses Flate and Brotli streams through a `DecompressionStream`. */
const INFLATE_POINT =
  "const bytes = this.stream.isAsync ? await this.stream.asyncGetBytes() : this.stream.getBytes();";
/** Where the patched worker looks for a synchronous decompressor (see {@linkcode inflate}). */
const INFLATE_HOOK = "__sergoInflate";
/** The most a single stream may decompress to through zlib; past it pdf.js decodes it itself. */
const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

/**
 * Decompresses a whole Flate ("deflate") or Brotli stream at once with zlib,
 * instead of through a web `DecompressionStream` (its stream machinery was 5% of
 * extraction for content streams of a few kilobytes). `null` when zlib cannot
 * (damaged or truncated data, or too large): pdf.js then decodes the stream with
 * its own tolerant decoder, as it does when a `DecompressionStream` fails.
 */
function inflate(bytes: Uint8Array, format: string): Uint8Array | null | undefined {
  if (format !== "deflate" && format !== "brotli") return undefined;
  try {
    const out = format === "deflate"
      ? inflateSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES })
      : brotliDecompressSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch {
    return null;
  }
}

/**
 * Where pdf.js builds a font program for the browser: a CFF compile and an
 * OpenType file for Type 1 and CFF fonts; for TrueType fonts, checks of their
 * hinting programs and glyph outlines and a rebuilt file. A text pass needs the
 * font's encodings, widths and Unicode maps, all worked out apart from these, not
 * the program itself; with a hook set (only during a text pass for extraction,
 * whose fonts are never drawn) they are skipped: about 12% of extraction.
 */
const FONT_PROGRAM_POINTS: ReadonlyArray<readonly [string, string]> = [
  [
    "      this.data = compiler.compile();",
    `      this.data = globalThis.${TEXT_OPERATOR_HOOK} ? file : compiler.compile();`,
  ],
  [
    '    const builder = new OpenTypeFileBuilder("\\x4F\\x54\\x54\\x4F");',
    `    if (globalThis.${TEXT_OPERATOR_HOOK}) return new Uint8Array(0);\n` +
    '    const builder = new OpenTypeFileBuilder("\\x4F\\x54\\x54\\x4F");',
  ],
  [
    '    const hintsValid = sanitizeTTPrograms(tables.fpgm, tables.prep, tables["cvt "], maxFunctionDefs);',
    `    const hintsValid = !globalThis.${TEXT_OPERATOR_HOOK} && ` +
    'sanitizeTTPrograms(tables.fpgm, tables.prep, tables["cvt "], maxFunctionDefs);',
  ],
  [
    "    if (isTrueType) {\n      const glyphsInfo = sanitizeGlyphLocations(",
    `    if (isTrueType && !globalThis.${TEXT_OPERATOR_HOOK}) {\n      const glyphsInfo = sanitizeGlyphLocations(`,
  ],
  [
    "    const builder = new OpenTypeFileBuilder(header.version);",
    `    if (globalThis.${TEXT_OPERATOR_HOOK}) return new Uint8Array(0);\n` +
    "    const builder = new OpenTypeFileBuilder(header.version);",
  ],
];

/** The text pass skips a form without text the next time it is drawn; with a hook it must not. */
const EMPTY_FORM_POINT = "if (!sinkWrapper.enqueueInvoked) {";

let loading: Promise<typeof pdfjs> | undefined;
let patched = false;
let hooked = false;

/** True when the image-skipping patch is active. */
export function imageDecodingSkipped(): boolean {
  return patched;
}

/** True when the text pass hands its operators to {@linkcode TEXT_OPERATOR_HOOK}. */
export function textOperatorsHooked(): boolean {
  return hooked;
}

async function install(): Promise<typeof pdfjs> {
  const g = globalThis as { pdfjsWorker?: unknown };
  if (g.pdfjsWorker === undefined) {
    try {
      const source = await Deno.readTextFile(new URL(WORKER_SPECIFIER));
      if (source.includes(PATCH_POINT)) {
        let code = source.replace(
          PATCH_POINT,
          `operatorList.addOp(OPS.paintImageXObject, [${JSON.stringify(UNREAD_IMAGE_ID)}, w, h]); return;\n` +
            PATCH_POINT,
        );
        const textHook = code.split(TEXT_PATCH_POINT).length === 2 &&
          code.split(EMPTY_FORM_POINT).length === 2;
        for (const [point, replacement] of FONT_PROGRAM_POINTS) {
          if (textHook && code.split(point).length === 2) code = code.replace(point, () => replacement);
        }
        if (textHook) {
          code = code.replace(
            TEXT_PATCH_POINT,
            `${TEXT_PATCH_POINT}\nglobalThis.${TEXT_OPERATOR_HOOK}?.(fn, args, stateManager.state, resources);`,
          ).replace(
            EMPTY_FORM_POINT,
            `if (!sinkWrapper.enqueueInvoked && !globalThis.${TEXT_OPERATOR_HOOK}) {`,
          );
        }
        if (code.split(LIGATURE_POINT).length === 2) {
          code = code.replace(LIGATURE_POINT, () => LIGATURE_REPLACEMENT);
        }
        if (code.split(INFLATE_POINT).length === 2) {
          (globalThis as Record<string, unknown>)[INFLATE_HOOK] = inflate;
          code = code.replace(
            INFLATE_POINT,
            `${INFLATE_POINT}\nconst inflated = globalThis.${INFLATE_HOOK}?.(bytes, name);\n` +
              "if (inflated !== undefined) return { decompressed: inflated, compressed: bytes };",
          );
        }
        const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
        try {
          g.pdfjsWorker = await import(url);
          patched = true;
          hooked = textHook;
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

/**
 * How messages cross the loopback port between pdf.js's API and its in-process
 * worker: without copying their contents, where pdf.js's own fake worker
 * copies every message with `structuredClone` (7% of extraction, mostly text
 * items the worker never touches again). A message and its stream chunk are
 * copied one level deep (the worker gives a sent text chunk new `items` right
 * after sending it), and operator-list chunks are copied whole (the worker
 * empties those arrays after sending them).
 */
function directCopy(data: unknown): unknown {
  const message = data as { chunk?: { fnArray?: unknown } } | null;
  const chunk = message?.chunk;
  if (chunk?.fnArray !== undefined) return structuredClone(data);
  if (message !== null && typeof message === "object") {
    return { ...message, ...(chunk !== null && typeof chunk === "object" ? { chunk: { ...chunk } } : {}) };
  }
  return data;
}

/**
 * A pdf.js worker for one document, in this isolate, over a loopback port that copies as {@linkcode directCopy} does;
 * pass it to `getDocument({ worker })` and destroy it with the document.
 */
export async function directWorker(): Promise<InstanceType<typeof pdfjs.PDFWorker>> {
  await loadPdfjs();
  const port = new LoopbackPort(directCopy);
  const handler =
    (globalThis as { pdfjsWorker?: { WorkerMessageHandler: { initializeFromPort(port: unknown): void } } })
      .pdfjsWorker!.WorkerMessageHandler;
  handler.initializeFromPort(port);
  // deno-lint-ignore no-explicit-any
  return new pdfjs.PDFWorker({ port: port as any });
}

/** The pdf.js API, with its in-process worker installed. */
export function loadPdfjs(): Promise<typeof pdfjs> {
  loading ??= install();
  return loading;
}
