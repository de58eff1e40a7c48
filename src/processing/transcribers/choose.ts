/**
 * Picks the Standard preset's transcriber from the configuration
 * (`SERGO_TRANSCRIBER`): Tesseract where installed (`auto`, the default), a
 * vision model over HTTP, or none.
 *
 * @module
 */
import type { TranscribeConfig } from "../../config.ts";
import { createTesseract, probeTesseract } from "./tesseract.ts";
import type { Transcriber } from "./transcriber.ts";
import type { StandardBudget } from "../standard.ts";
import { createRenderPool, type RenderPool } from "../../render/render_pool.ts";
import { createVisionTranscriber } from "./vision_http.ts";

/** The transcriber, or null with the reason there is none. */
export type TranscriberChoice = { transcriber: Transcriber; missing: null } | {
  transcriber: null;
  missing: string;
};

/** The transcriber this configuration asks for, if it can run here. */
export async function chooseTranscriber(config: TranscribeConfig): Promise<TranscriberChoice> {
  if (config.engine === "none") return { transcriber: null, missing: "SERGO_TRANSCRIBER is none" };
  if (config.engine === "openai" || config.engine === "anthropic") {
    return {
      transcriber: createVisionTranscriber({
        api: config.engine,
        url: config.visionUrl!,
        model: config.visionModel!,
        apiKey: config.visionApiKey,
        timeoutMs: config.timeoutMs,
        retries: config.retries,
        ...(config.concurrency ? { concurrency: config.concurrency } : {}),
      }),
      missing: null,
    };
  }
  const install = await probeTesseract();
  if (!install) {
    return { transcriber: null, missing: "Tesseract is not installed (apt-get install tesseract-ocr)" };
  }
  try {
    return {
      transcriber: createTesseract(install, {
        languages: config.languages,
        dpi: config.dpi,
        timeoutMs: config.timeoutMs,
        memoryMb: config.memoryMb,
        ...(config.concurrency ? { concurrency: config.concurrency } : {}),
      }),
      missing: null,
    };
  } catch (error) {
    return { transcriber: null, missing: (error as Error).message };
  }
}

let current: string | null | undefined;

/**
 * Records which transcriber this process has (its label, or null for none), so
 * that asking for Standard is refused up front where nothing could read it.
 */
export function registerTranscriber(label: string | null | undefined): void {
  current = label;
}

/** The label of this process's transcriber; undefined when none was registered (Standard is then allowed). */
export function registeredTranscriber(): string | null | undefined {
  return current;
}

/** The Standard preset's reading for a worker, and how to close it. */
export interface OpenStandard {
  reading: { transcriber: Transcriber | null; renderPool: RenderPool; budget: StandardBudget };
  /** Why there is no transcriber, or null. */
  missing: string | null;
  close(): void;
}

/**
 * Chooses the transcriber, registers it for the preset check, and gives it a
 * pool of its own to draw pages in (so that transcription never queues the
 * pictures `view_page` draws). The pool's workers start on first use.
 */
export async function openStandard(config: TranscribeConfig): Promise<OpenStandard> {
  const choice = await chooseTranscriber(config);
  registerTranscriber(choice.transcriber?.label ?? null);
  const renderPool = createRenderPool({
    concurrency: choice.transcriber?.concurrency ?? 1,
    timeoutMs: 60_000,
    maxJobsPerWorker: 200,
  });
  return {
    reading: {
      transcriber: choice.transcriber,
      renderPool,
      budget: { maxPages: config.maxPages, maxMs: config.maxDocumentMs },
    },
    missing: choice.missing,
    close: () => renderPool.close(),
  };
}
