/**
 * The Standard preset: Basic's reading, then every page whose text layer is
 * missing, tiny or garbage (`text_quality.ts`) is drawn and read by the
 * transcriber; good text layers are kept, a model does not improve on
 * born-digital text. PDFs are drawn from themselves, Office files from their PDF
 * copy.
 *
 * Marks under Standard: a transcribed page is marked when the transcriber says a
 * figure, chart or table matters (the vision model's answer; Tesseract's picture
 * and line areas), or by Basic's little-text rule; a kept page keeps Basic's mark.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";
import type { RenderPool } from "../render/render_pool.ts";
import { PDF_LITTLE_TEXT_CHARS } from "./basic_rules.ts";
import type { ExtractResult } from "./extract_result.ts";
import { judgeTextLayer, type TextLayerVerdict } from "./text_quality.ts";
import { abortReason, eachLimited, type Transcriber } from "./transcribers/transcriber.ts";

/** The reason a document with no text after Basic is not_indexed, when a transcriber is installed. */
export const NO_TEXT_LAYER_REASON = "No text layer — process it with Standard to read the scan";

/** The same when no transcriber is installed here. */
export const NO_TEXT_LAYER_NO_TRANSCRIBER_REASON =
  "No text layer — Standard would read the scan, but no transcriber is installed here (install tesseract-ocr, or set SERGO_TRANSCRIBER)";

/** Whether a Basic result has no text to search at all. */
export function hasNoText(result: Pick<ExtractResult, "pages">): boolean {
  return result.pages.length > 0 &&
    result.pages.every((p) =>
      p.text.trim() === "" && (p.notes ?? "").trim() === "" && !p.chunks?.some((c) => c.text.trim())
    );
}

/** One page's outcome under Standard. */
export interface StandardPage {
  page: number;
  verdict: NonNullable<TextLayerVerdict>;
  /** The transcribed text, or null when the transcriber failed on the page. */
  text: string | null;
  marked: boolean;
  transcription: NonNullable<ProcessedPage["transcription"]>;
}

/**
 * How much of one document Standard transcribes: at most `maxPages` pages and
 * `maxMs` in all (settings `SERGO_STANDARD_MAX_PAGES`, `SERGO_STANDARD_MAX_SECONDS`).
 * The pages past it keep what Basic read, each with the reason it was not
 * transcribed, so one long scan cannot hold the transcriber for hours.
 */
export interface StandardBudget {
  maxPages: number;
  maxMs: number;
}

/** The budget when none is set: 500 pages, 30 minutes. */
export const DEFAULT_STANDARD_BUDGET: StandardBudget = { maxPages: 500, maxMs: 30 * 60_000 };

/**
 * The most characters of one page's transcription that are recorded: a dense
 * page of small print is about 10,000. A longer answer (a model that runs on)
 * is cut there, with {@link cutMarker} at the end, so a page's event stays small.
 */
export const MAX_PAGE_TEXT_CHARS = 32_768;

/** The line that ends a transcription cut at {@link MAX_PAGE_TEXT_CHARS}. */
export function cutMarker(length: number): string {
  return `[Sergo: this page's transcription was cut at ${MAX_PAGE_TEXT_CHARS.toLocaleString("en-US")} of ${
    length.toLocaleString("en-US")
  } characters]`;
}

/** A page's transcribed text within {@link MAX_PAGE_TEXT_CHARS}, cut with the marker past it. */
export function boundedPageText(text: string): string {
  if (text.length <= MAX_PAGE_TEXT_CHARS) return text;
  const marker = `\n${cutMarker(text.length)}`;
  return text.slice(0, MAX_PAGE_TEXT_CHARS - marker.length) + marker;
}

/** What the Standard pass needs. */
export interface StandardDeps {
  transcriber: Transcriber;
  /** Draws pages for the transcriber. */
  renderPool: RenderPool;
  /** Time one page's drawing may take (default 60 s). */
  renderTimeoutMs?: number;
  /** The document's budget (default {@link DEFAULT_STANDARD_BUDGET}). */
  budget?: StandardBudget;
  /**
   * Stops the whole pass (the document was deleted, or the server is
   * stopping): the running page is killed and the pass rejects with the
   * signal's reason.
   */
  signal?: AbortSignal;
}

/** Why the budget ended a pass early: its page count or its time. */
export type BudgetStop = "pages" | "time";

/** The reason recorded on each page the budget left untranscribed. */
export function budgetReason(stop: BudgetStop, budget: StandardBudget): string {
  return stop === "pages"
    ? `Not transcribed: Standard reads at most ${budget.maxPages} pages of a document (SERGO_STANDARD_MAX_PAGES)`
    : `Not transcribed: Standard spends at most ${
      Math.round(budget.maxMs / 1000)
    } s on a document (SERGO_STANDARD_MAX_SECONDS)`;
}

/**
 * The sentence a person sees on a document whose transcription the budget cut
 * short; `readSome` says whether other pages were read (and are searchable).
 */
export function budgetNotice(
  stop: BudgetStop,
  budget: StandardBudget,
  skipped: readonly number[],
  readSome = true,
): string {
  const list = pageList(skipped);
  const why = stop === "pages"
    ? `Standard reads at most ${budget.maxPages} pages of a document (SERGO_STANDARD_MAX_PAGES)`
    : `Standard spends at most ${
      Math.round(budget.maxMs / 1000)
    } s on a document (SERGO_STANDARD_MAX_SECONDS)`;
  return `${skipped.length === 1 ? "Page" : "Pages"} ${list} of the scan ${
    skipped.length === 1 ? "was" : "were"
  } not transcribed: ${why}${readSome ? "; what was read is searchable" : ""}`;
}

/** Page numbers as short ranges: `4-9, 12`, at most a few ranges then `…`. */
function pageList(pages: readonly number[]): string {
  const sorted = [...pages].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return ranges.length > 6 ? `${ranges.slice(0, 6).join(", ")}, …` : ranges.join(", ");
}

/** What a Standard pass came to: each page's outcome, and whether the budget ended it early. */
export interface TranscribedPages {
  /** Every page asked for, in page order; those the budget left out have `text: null` and its reason. */
  outcomes: StandardPage[];
  /** Null when every page was tried. */
  stopped: BudgetStop | null;
  /** The pages the budget left untranscribed. */
  skipped: number[];
}

/**
 * The pages of a PDF (the document or its copy) whose text layer must be
 * replaced, and why, judged from that PDF's Basic reading.
 */
export function pagesToTranscribe(
  pdfReading: ExtractResult,
): Array<{ page: number; verdict: NonNullable<TextLayerVerdict> }> {
  const out: Array<{ page: number; verdict: NonNullable<TextLayerVerdict> }> = [];
  for (const [i, page] of pdfReading.pages.entries()) {
    const verdict = judgeTextLayer(page.text, pdfReading.layouts?.[i] ?? null);
    if (verdict) out.push({ page: page.page, verdict });
  }
  return out;
}

/**
 * Transcribes the given pages of a PDF, a few at a time (the transcriber's
 * concurrency), reporting each finished page. A page that cannot be drawn or read
 * fails alone: its outcome has `text: null` and the reason. The budget's first
 * `maxPages` pages are read, until its time runs out (the page running then is
 * stopped); the rest are outcomes with the budget's reason.
 */
export async function transcribePages(
  pdfBytes: Uint8Array,
  pages: ReadonlyArray<{ page: number; verdict: NonNullable<TextLayerVerdict> }>,
  deps: StandardDeps,
  onPage: (outcome: StandardPage, done: number) => void | Promise<void>,
): Promise<TranscribedPages> {
  const { transcriber } = deps;
  const budget = deps.budget ?? DEFAULT_STANDARD_BUDGET;
  const outcomes: StandardPage[] = [];
  const skipped: number[] = [];
  const scripts = new Map<string, number>();
  let timeRanOut = false;
  const skip = (page: number, verdict: NonNullable<TextLayerVerdict>, stop: BudgetStop) => {
    skipped.push(page);
    outcomes.push({
      page,
      verdict,
      text: null,
      marked: true,
      transcription: {
        engine: transcriber.engine,
        version: transcriber.version,
        because: verdict,
        error: budgetReason(stop, budget),
      },
    });
  };
  for (const { page, verdict } of pages.slice(budget.maxPages)) skip(page, verdict, "pages");
  const timeUp = new AbortController();
  const timer = setTimeout(() => timeUp.abort(), budget.maxMs);
  const signal = deps.signal ? AbortSignal.any([deps.signal, timeUp.signal]) : timeUp.signal;
  let done = 0;
  try {
    await eachLimited(pages.slice(0, budget.maxPages), transcriber.concurrency, async ({ page, verdict }) => {
      if (deps.signal?.aborted) throw abortReason(deps.signal);
      if (timeUp.signal.aborted) {
        timeRanOut = true;
        skip(page, verdict, "time");
        return;
      }
      const outcome = await transcribeOne(pdfBytes, { page, verdict }, deps, scripts, signal);
      if (deps.signal?.aborted) throw abortReason(deps.signal);
      if (timeUp.signal.aborted && outcome.text === null) {
        // The page running when the time ran out was stopped, not failed.
        timeRanOut = true;
        skip(page, verdict, "time");
        return;
      }
      outcomes.push(outcome);
      done++;
      await onPage(outcome, done);
    });
  } finally {
    clearTimeout(timer);
  }
  return {
    outcomes: outcomes.sort((a, b) => a.page - b.page),
    // The time, when it ran out, stopped the reading first; pages past the page limit were never started.
    stopped: timeRanOut ? "time" : pages.length > budget.maxPages ? "pages" : null,
    skipped: skipped.sort((a, b) => a - b),
  };
}

/** One page drawn and read; a failure is the page's outcome with its reason. */
async function transcribeOne(
  pdfBytes: Uint8Array,
  { page, verdict }: { page: number; verdict: NonNullable<TextLayerVerdict> },
  deps: StandardDeps,
  scripts: Map<string, number>,
  signal: AbortSignal,
): Promise<StandardPage> {
  const { transcriber } = deps;
  const base = { engine: transcriber.engine, version: transcriber.version, because: verdict };
  let outcome: StandardPage;
  try {
    const bytes = await deps.renderPool.render({
      pdfBytes,
      page,
      format: transcriber.image.format === "pgm" ? "gray" : "image",
      dpi: transcriber.image.dpi,
      timeoutMs: deps.renderTimeoutMs ?? 60_000,
    });
    if (signal.aborted) throw abortReason(signal);
    const documentScript = [...scripts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    const read = await transcriber.transcribe(
      { bytes, format: transcriber.image.format, dpi: transcriber.image.dpi },
      documentScript ? { documentScript } : {},
      signal,
    );
    if (read.script) scripts.set(read.script, (scripts.get(read.script) ?? 0) + 1);
    const text = boundedPageText(read.text);
    const chars = text.replace(/\s+/g, "").length;
    outcome = {
      page,
      verdict,
      text,
      marked: read.figure || chars < PDF_LITTLE_TEXT_CHARS,
      transcription: {
        ...base,
        version: read.version ?? base.version,
        ...(read.languages ? { languages: read.languages } : {}),
        ...(read.script ? { script: read.script } : {}),
        ...(read.rotated ? { rotated: read.rotated } : {}),
      },
    };
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 900);
    outcome = { page, verdict, text: null, marked: true, transcription: { ...base, error: message } };
  }
  return outcome;
}

/** A PDF's Basic pages with the transcribed ones replaced. */
export function mergeTranscriptions(
  basic: readonly ProcessedPage[],
  outcomes: readonly StandardPage[],
): ProcessedPage[] {
  const byPage = new Map(outcomes.map((o) => [o.page, o]));
  return basic.map((page) => {
    const outcome = byPage.get(page.page);
    if (!outcome) return page;
    if (outcome.text === null) return { ...page, transcription: outcome.transcription };
    const text = outcome.text;
    return {
      ...page,
      text,
      marked: outcome.marked,
      image_only: outcome.marked && text.trim() === "",
      transcription: outcome.transcription,
    };
  });
}
