/**
 * PDF text by page (pdf.js), with lines rebuilt from item positions and Basic marks
 * computed from what each page draws: seen during the text pass itself (see
 * `_pdfjs.ts`), or from the page's operator list where pdf.js could not be patched.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";
import {
  MAX_OPS_PER_PAGE,
  MAX_PDF_PAGES,
  PDF_BACKGROUND_PICTURE_FRACTION,
  PDF_LARGE_PICTURE_FRACTION,
  PDF_LITTLE_TEXT_CHARS,
  PDF_MANY_PATHS,
  PDF_TINY_PATH_FRACTION,
} from "./basic_rules.ts";
import type { ExtractResult } from "./extract_result.ts";
import {
  directWorker,
  loadPdfjs,
  PDFJS_DATA,
  TEXT_OPERATOR_HOOK,
  type TextOperatorHook,
  textOperatorsHooked,
} from "./_pdfjs.ts";
import { ProcessingError, toProcessingError } from "./processing_error.ts";

/** A positioned run of text as pdf.js reports it. */
export interface TextRun {
  str: string;
  /** [a, b, c, d, e, f] text matrix: e, f are the origin; hypot(c, d) is the font size. */
  transform: number[];
  width: number;
  hasEOL: boolean;
}

/** What the operator list says a page draws. */
export interface PageDrawing {
  /** The largest fraction of the page one picture covers (0–1). */
  largestPicture: number;
  /** The largest fraction covered by a picture smaller than a page background. */
  largestFigure: number;
  /** Text-showing operations drawn visibly and invisibly (render mode 3, as OCR layers are). */
  visibleTextOps: number;
  invisibleTextOps: number;
  /** Number of pictures placed. */
  pictures: number;
  /** Painted vector paths larger than a speck. */
  paths: number;
  /** The operator list was too long to analyse. */
  tooManyOps: boolean;
}

/** Rebuilds lines from pdf.js text runs: same baseline joins, a new baseline or `hasEOL` breaks. */
export function buildLines(runs: TextRun[]): string {
  const lines: string[] = [];
  let line = "";
  let lastY: number | undefined;
  let lastStartX = 0;
  let lastEndX = 0;
  let lastSize = 0;
  let breakNext = false;
  for (const raw of runs) {
    const run = withoutControls(raw);
    const [a = 1, b = 0, c = 0, d = 1, x = 0, y = 0] = run.transform;
    const size = Math.hypot(c, d) || Math.hypot(a, b) || 1;
    if (run.str.length === 0) {
      if (run.hasEOL) breakNext = true;
      continue;
    }
    const tolerance = Math.max(1, Math.min(size, lastSize || size) * 0.5);
    const newLine = lastY === undefined || breakNext || Math.abs(y - lastY) > tolerance;
    if (newLine) {
      if (lastY !== undefined) lines.push(line.trimEnd());
      line = run.str;
    } else {
      // Right-to-left runs follow each other leftwards: the gap is on whichever side the run lies.
      const gap = Math.max(x - lastEndX, lastStartX - (x + run.width));
      if (gap > size * 0.15 && !line.endsWith(" ") && !run.str.startsWith(" ")) line += " ";
      line += run.str;
    }
    lastY = y;
    lastSize = size;
    lastStartX = x;
    lastEndX = x + run.width;
    breakNext = run.hasEOL;
  }
  if (lastY !== undefined) lines.push(line.trimEnd());
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

/**
 * Control characters in a run are glyphs with no text: LibreOffice writes the
 * kashidas that justify Arabic lines as U+0001 glyphs, inside words (وق␁␁␁د).
 * They are dropped, so the letters around them stay one word; a tab is a space.
 */
function withoutControls(run: TextRun): TextRun {
  // deno-lint-ignore no-control-regex
  if (!/[\u0000-\u001f\u007f]/.test(run.str)) return run;
  // deno-lint-ignore no-control-regex
  return { ...run, str: run.str.replaceAll("\t", " ").replace(/[\u0000-\u001f\u007f]/g, "") };
}

type Matrix = [number, number, number, number, number, number];

function multiply(m: Matrix, n: number[]): Matrix {
  const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = n;
  return [
    a * m[0] + b * m[2],
    a * m[1] + b * m[3],
    c * m[0] + d * m[2],
    c * m[1] + d * m[3],
    e * m[0] + f * m[2] + m[4],
    e * m[1] + f * m[3] + m[5],
  ];
}

function emptyDrawing(): PageDrawing {
  return {
    largestPicture: 0,
    largestFigure: 0,
    visibleTextOps: 0,
    invisibleTextOps: 0,
    pictures: 0,
    paths: 0,
    tooManyOps: false,
  };
}

/**
 * Counts a picture placed with matrix `m` (its unit square mapped onto the page):
 * its area times `scale` is the fraction of the page it covers.
 */
function addPicture(drawing: PageDrawing, m: ArrayLike<number>, scale: number): void {
  const fraction = Math.min(1, Math.abs(m[0]! * m[3]! - m[1]! * m[2]!) * scale);
  drawing.pictures++;
  drawing.largestPicture = Math.max(drawing.largestPicture, fraction);
  if (fraction < PDF_BACKGROUND_PICTURE_FRACTION) {
    drawing.largestFigure = Math.max(drawing.largestFigure, fraction);
  }
}

/** Analyses an operator list: picture coverage and painted path count. */
export function analyseOperators(
  fnArray: number[],
  argsArray: unknown[],
  OPS: Record<string, number>,
  page: { width: number; height: number },
): PageDrawing {
  const drawing = emptyDrawing();
  if (fnArray.length > MAX_OPS_PER_PAGE) {
    drawing.tooManyOps = true;
    return drawing;
  }
  const pageArea = Math.max(1, page.width * page.height);
  const speck = Math.min(page.width, page.height) * PDF_TINY_PATH_FRACTION;
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  let mode = 0;
  const stack: [Matrix, number][] = [];
  const picture = (m: Matrix, w = 1, h = 1): void => addPicture(drawing, m, w * h / pageArea);
  for (let i = 0; i < fnArray.length; i++) {
    const fn = fnArray[i];
    const args = argsArray[i] as unknown[] | null;
    switch (fn) {
      case OPS.save:
        if (stack.length < 10_000) stack.push([ctm, mode]);
        break;
      case OPS.restore:
        [ctm, mode] = stack.pop() ?? [ctm, mode];
        break;
      case OPS.setTextRenderingMode:
        mode = Number(args?.[0]) || 0;
        break;
      case OPS.showText:
      case OPS.showSpacedText:
      case OPS.nextLineShowText:
      case OPS.nextLineSetSpacingShowText:
        if (mode === 3 || mode === 7) drawing.invisibleTextOps++;
        else drawing.visibleTextOps++;
        break;
      case OPS.transform:
        if (args) ctm = multiply(ctm, args as number[]);
        break;
      case OPS.paintFormXObjectBegin:
        if (stack.length < 10_000) stack.push([ctm, mode]);
        if (args && Array.isArray(args[0])) ctm = multiply(ctm, args[0] as number[]);
        break;
      case OPS.paintFormXObjectEnd:
        [ctm, mode] = stack.pop() ?? [ctm, mode];
        break;
      case OPS.paintImageXObject:
      case OPS.paintInlineImageXObject:
      case OPS.paintImageMaskXObject:
        picture(ctm);
        break;
      case OPS.paintImageXObjectRepeat:
      case OPS.paintImageMaskXObjectRepeat: {
        // args: [objId, scaleX, scaleY, positions] (mask: [img, scaleX, skewX, skewY, scaleY, positions]).
        const a = args ?? [];
        const positions = a[a.length - 1] as ArrayLike<number> | undefined;
        const count = positions ? Math.max(1, Math.floor(positions.length / 2)) : 1;
        const sx = Number(a[1]) || 1;
        const sy = Number(a[a.length - 2]) || 1;
        for (let k = 0; k < Math.min(count, 1000); k++) picture(ctm, sx, sy);
        break;
      }
      case OPS.constructPath: {
        const op = args?.[0];
        if (op === OPS.endPath) break; // a clipping path, not painted
        const minMax = args?.[2] as ArrayLike<number> | null | undefined;
        if (minMax && minMax.length >= 4) {
          const w = Math.abs(((minMax[2] ?? 0) - (minMax[0] ?? 0)) * Math.hypot(ctm[0], ctm[1]));
          const h = Math.abs(((minMax[3] ?? 0) - (minMax[1] ?? 0)) * Math.hypot(ctm[2], ctm[3]));
          if (w < speck && h < speck) break;
        }
        drawing.paths++;
        break;
      }
    }
  }
  return drawing;
}

/**
 * Follows a page's content-stream operators as the text pass reads them (the
 * graphics state, with its CTM, comes from pdf.js) and adds up what the page
 * draws, as {@linkcode analyseOperators} does from an operator list: pictures
 * placed (XObject images and inline images) and how much of the page each
 * covers, painted paths larger than a speck, text shown visibly or invisibly.
 */
export class DrawingTracker {
  readonly drawing: PageDrawing = emptyDrawing();
  readonly #ops: Record<string, number>;
  readonly #pageArea: number;
  readonly #speck: number;
  #count = 0;
  /** The bounding box of the path being built, in user space: [minX, minY, maxX, maxY]. */
  #box: number[] | null = null;
  /** The current point. */
  #x = 0;
  #y = 0;

  constructor(ops: Record<string, number>, page: { width: number; height: number }) {
    this.#ops = ops;
    this.#pageArea = Math.max(1, page.width * page.height);
    this.#speck = Math.min(page.width, page.height) * PDF_TINY_PATH_FRACTION;
  }

  /** The hook the text pass calls with each operator. */
  readonly onOperator: TextOperatorHook = (fn, args, state, resources) => {
    if (this.drawing.tooManyOps) return;
    if (++this.#count > MAX_OPS_PER_PAGE) {
      this.drawing.tooManyOps = true;
      return;
    }
    const OPS = this.#ops;
    const a = args ?? [];
    switch (fn) {
      case OPS.moveTo:
      case OPS.lineTo:
        this.#point(Number(a[0]), Number(a[1]));
        break;
      case OPS.curveTo: // x1 y1 x2 y2 x3 y3
        this.#curve(Number(a[0]), Number(a[1]), Number(a[2]), Number(a[3]), Number(a[4]), Number(a[5]));
        break;
      case OPS.curveTo2: // v: the first control point is the current point
        this.#curve(this.#x, this.#y, Number(a[0]), Number(a[1]), Number(a[2]), Number(a[3]));
        break;
      case OPS.curveTo3: // y: the second control point is the end point
        this.#curve(Number(a[0]), Number(a[1]), Number(a[2]), Number(a[3]), Number(a[2]), Number(a[3]));
        break;
      case OPS.rectangle: {
        const [x = 0, y = 0, w = 0, h = 0] = (a as number[]).map(Number);
        this.#point(x, y);
        this.#point(x + w, y + h);
        this.#x = x;
        this.#y = y;
        break;
      }
      case OPS.endPath: // a clipping path, not painted
        this.#box = null;
        break;
      case OPS.stroke:
      case OPS.closeStroke:
      case OPS.fill:
      case OPS.eoFill:
      case OPS.fillStroke:
      case OPS.eoFillStroke:
      case OPS.closeFillStroke:
      case OPS.closeEOFillStroke:
        this.#paint(state.ctm);
        break;
      case OPS.setTextRenderingMode:
        // Kept on pdf.js's state object: its save/restore and form clones carry it.
        state.sergoTextMode = Number(a[0]) || 0;
        break;
      case OPS.showText:
      case OPS.showSpacedText:
      case OPS.nextLineShowText:
      case OPS.nextLineSetSpacingShowText: {
        const mode = state.sergoTextMode;
        if (mode === 3 || mode === 7) this.drawing.invisibleTextOps++;
        else this.drawing.visibleTextOps++;
        break;
      }
      case OPS.endInlineImage:
        this.#picture(state.ctm);
        break;
      case OPS.paintXObject:
        if (isImage(resources, a[0])) this.#picture(state.ctm);
        break;
    }
  };

  /** Adds a point to the path's box; it becomes the current point. */
  #point(x: number, y: number): void {
    if (!Number.isFinite(x) || !Number.isFinite(y)) return;
    this.#grow(x, y);
    this.#x = x;
    this.#y = y;
  }

  #grow(x: number, y: number): void {
    const box = this.#box ??= [x, y, x, y];
    if (x < box[0]!) box[0] = x;
    if (y < box[1]!) box[1] = y;
    if (x > box[2]!) box[2] = x;
    if (y > box[3]!) box[3] = y;
  }

  /** Adds a cubic Bézier from the current point: its end and its extremes (as pdf.js bounds curves). */
  #curve(x1: number, y1: number, x2: number, y2: number, x3: number, y3: number): void {
    const x0 = this.#x;
    const y0 = this.#y;
    if (![x0, y0, x1, y1, x2, y2, x3, y3].every(Number.isFinite)) return;
    for (const t of [...bezierExtremes(x0, x1, x2, x3), ...bezierExtremes(y0, y1, y2, y3)]) {
      const u = 1 - t;
      this.#grow(
        u * u * u * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x3,
        u * u * u * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y3,
      );
    }
    this.#point(x3, y3);
  }

  #paint(ctm: ArrayLike<number>): void {
    const box = this.#box;
    this.#box = null;
    if (box) {
      const w = Math.abs((box[2]! - box[0]!) * Math.hypot(ctm[0] ?? 1, ctm[1] ?? 0));
      const h = Math.abs((box[3]! - box[1]!) * Math.hypot(ctm[2] ?? 0, ctm[3] ?? 1));
      if (w < this.#speck && h < this.#speck) return;
    }
    this.drawing.paths++;
  }

  #picture(ctm: ArrayLike<number>): void {
    addPicture(this.drawing, [ctm[0] ?? 1, ctm[1] ?? 0, ctm[2] ?? 0, ctm[3] ?? 1], 1 / this.#pageArea);
  }
}

/** The parameters in (0, 1) where one coordinate of a cubic Bézier has a turning point. */
function bezierExtremes(p0: number, p1: number, p2: number, p3: number): number[] {
  // The derivative's roots: a t² + b t + c = 0.
  const a = -p0 + 3 * p1 - 3 * p2 + p3;
  const b = 2 * (p0 - 2 * p1 + p2);
  const c = p1 - p0;
  const roots: number[] = [];
  if (Math.abs(a) < 1e-12) {
    if (Math.abs(b) > 1e-12) roots.push(-c / b);
  } else {
    const d = b * b - 4 * a * c;
    if (d >= 0) {
      const r = Math.sqrt(d);
      roots.push((-b + r) / (2 * a), (-b - r) / (2 * a));
    }
  }
  return roots.filter((t) => t > 0 && t < 1);
}

/** Whether the XObject a `Do` names is an image (forms are read by the text pass itself). */
function isImage(resources: { get(key: string): unknown } | null, name: unknown): boolean {
  try {
    const objectName = (name as { name?: unknown } | null)?.name;
    if (typeof objectName !== "string") return false;
    const xobjects = resources?.get("XObject") as { get(key: string): unknown } | undefined;
    const xobject = xobjects?.get?.(objectName) as { dict?: { get(key: string): unknown } } | undefined;
    const subtype = xobject?.dict?.get("Subtype") as { name?: unknown } | undefined;
    return subtype?.name === "Image";
  } catch {
    return false; // a broken resource dictionary: pdf.js reports it while reading the text
  }
}

/** Runs one page's text pass at a time with the tracker as the operator hook. */
let hookQueue: Promise<unknown> = Promise.resolve();

function withOperatorHook<T>(hook: TextOperatorHook, run: () => Promise<T>): Promise<T> {
  const result = hookQueue.then(async () => {
    const g = globalThis as Record<string, unknown>;
    g[TEXT_OPERATOR_HOOK] = hook;
    try {
      return await run();
    } finally {
      delete g[TEXT_OPERATOR_HOOK];
    }
  });
  hookQueue = result.catch(() => {});
  return result;
}

/** Decides a page's mark from its text and drawing by the Basic rules. */
export function markPage(text: string, drawing: PageDrawing): { marked: boolean; reason: string | null } {
  const chars = text.replace(/\s+/g, "").length;
  const drawsAnything = drawing.pictures > 0 || drawing.paths > 0 || drawing.tooManyOps;
  if (drawing.tooManyOps) return { marked: true, reason: "dense drawing" };
  if (chars < PDF_LITTLE_TEXT_CHARS && drawsAnything) return { marked: true, reason: "little text" };
  const pageSizedPicture = drawing.largestPicture >= PDF_BACKGROUND_PICTURE_FRACTION;
  if (pageSizedPicture && drawing.invisibleTextOps > drawing.visibleTextOps) {
    return { marked: true, reason: "scanned page with an OCR layer" };
  }
  if (drawing.largestFigure >= PDF_LARGE_PICTURE_FRACTION) return { marked: true, reason: "large picture" };
  if (drawing.paths >= PDF_MANY_PATHS) return { marked: true, reason: "many drawn lines" };
  return { marked: false, reason: null };
}

function pdfFailure(error: unknown): ProcessingError {
  const name = (error as { name?: string } | null)?.name;
  if (name === "PasswordException") return new ProcessingError("This PDF needs a password to open.");
  if (name === "InvalidPDFException") {
    return new ProcessingError("This file is not a readable PDF: its structure is damaged beyond repair.");
  }
  return toProcessingError(error, "This PDF cannot be read");
}

/**
 * Asks pdf.js for each page's text in one chunk instead of chunks of 100 items,
 * after each of which its worker pauses the content-stream loop until the chunk is
 * read (3% of extraction). Done through the document's message handler (pdf.js 5's
 * `_transport.messageHandler`); where it is not there, pages come in chunks as before.
 */
function textInOneChunk(doc: unknown): void {
  type Strategy = { highWaterMark?: number; size?: (chunk: unknown) => number };
  const handler = (doc as {
    _transport?: { messageHandler?: { sendWithStream?: (a: string, d: unknown, s?: Strategy) => unknown } };
  })._transport?.messageHandler;
  const send = handler?.sendWithStream;
  if (!handler || typeof send !== "function") return;
  handler.sendWithStream = (action, data, strategy) =>
    send.call(
      handler,
      action,
      data,
      action === "GetTextContent" ? { ...strategy, highWaterMark: Number.MAX_SAFE_INTEGER } : strategy,
    );
}

/** Options of {@linkcode extractPdf}. */
export interface PdfExtractOptions {
  /**
   * Where what a page draws comes from: the text pass itself (default, when
   * pdf.js could be patched) or each page's operator list (a second pass).
   */
  drawings?: "text-pass" | "operator-list";
}

/** Extracts a PDF's text page by page with Basic marks. */
export async function extractPdf(bytes: Uint8Array, options: PdfExtractOptions = {}): Promise<ExtractResult> {
  const pdfjs = await loadPdfjs();
  const worker = await directWorker();
  let doc;
  try {
    doc = await pdfjs.getDocument({
      worker,
      data: bytes.slice(),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      useWasm: false,
      enableXfa: false,
      verbosity: 0,
      cMapUrl: PDFJS_DATA.cMapUrl,
      cMapPacked: true,
      standardFontDataUrl: PDFJS_DATA.standardFontDataUrl,
    }).promise;
  } catch (error) {
    worker.destroy();
    throw pdfFailure(error);
  }
  try {
    const count = doc.numPages;
    if (!Number.isFinite(count) || count < 1) throw new ProcessingError("This PDF has no pages.");
    if (count > MAX_PDF_PAGES) {
      throw new ProcessingError(
        `This PDF claims ${count} pages, more than the ${MAX_PDF_PAGES} pages Sergo reads.`,
      );
    }
    textInOneChunk(doc);
    const ops = pdfjs.OPS as unknown as Record<string, number>;
    const hooked = options.drawings !== "operator-list" && textOperatorsHooked();
    const pages: ProcessedPage[] = [];
    const layouts: NonNullable<ExtractResult["layouts"]> = [];
    let readable = 0;
    let firstError: unknown;
    for (let n = 1; n <= count; n++) {
      try {
        const page = await doc.getPage(n);
        const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
        const size = { width: Math.abs(x1 - x0), height: Math.abs(y1 - y0) };
        let drawing: PageDrawing;
        let content;
        if (hooked) {
          const tracker = new DrawingTracker(ops, size);
          content = await withOperatorHook(tracker.onOperator, () => page.getTextContent());
          drawing = tracker.drawing;
        } else {
          content = await page.getTextContent();
          const list = await page.getOperatorList();
          drawing = analyseOperators(list.fnArray, list.argsArray, ops, size);
        }
        const text = buildLines(content.items.filter((i): i is TextRun & typeof i => "str" in i));
        const { marked } = markPage(text, drawing);
        pages.push({ page: n, text, marked, image_only: marked && text.trim() === "" });
        layouts.push({
          largestPicture: drawing.largestPicture,
          pictures: drawing.pictures,
          paths: drawing.paths,
        });
        page.cleanup();
        readable++;
      } catch (error) {
        firstError ??= error;
        pages.push({ page: n, text: "", marked: true, image_only: true });
        layouts.push({ largestPicture: 0, pictures: 0, paths: 0 });
      }
    }
    if (readable === 0) throw pdfFailure(firstError);
    return { type: "pdf", page_count: count, pages_estimated: false, pages, layouts };
  } catch (error) {
    throw pdfFailure(error);
  } finally {
    await doc.destroy().catch(() => {});
    worker.destroy(); // given to getDocument, so not destroyed with the document
  }
}
