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
import { eachLimited, type Transcriber } from "./transcribers/transcriber.ts";

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

/** What the Standard pass needs. */
export interface StandardDeps {
  transcriber: Transcriber;
  /** Draws pages for the transcriber. */
  renderPool: RenderPool;
  /** Time one page's drawing may take (default 60 s). */
  renderTimeoutMs?: number;
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
 * fails alone: its outcome has `text: null` and the reason.
 */
export async function transcribePages(
  pdfBytes: Uint8Array,
  pages: ReadonlyArray<{ page: number; verdict: NonNullable<TextLayerVerdict> }>,
  deps: StandardDeps,
  onPage: (outcome: StandardPage, done: number) => void | Promise<void>,
): Promise<StandardPage[]> {
  const { transcriber } = deps;
  const outcomes: StandardPage[] = [];
  const scripts = new Map<string, number>();
  let done = 0;
  await eachLimited(pages, transcriber.concurrency, async ({ page, verdict }) => {
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
      const documentScript = [...scripts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
      const read = await transcriber.transcribe(
        { bytes, format: transcriber.image.format, dpi: transcriber.image.dpi },
        documentScript ? { documentScript } : {},
      );
      if (read.script) scripts.set(read.script, (scripts.get(read.script) ?? 0) + 1);
      const chars = read.text.replace(/\s+/g, "").length;
      outcome = {
        page,
        verdict,
        text: read.text,
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
    outcomes.push(outcome);
    done++;
    await onPage(outcome, done);
  });
  return outcomes.sort((a, b) => a.page - b.page);
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
