/**
 * What a transcriber is: something that reads a page image and answers with its
 * text and whether a figure, chart or table on it matters. The Standard preset
 * uses one, chosen by `SERGO_TRANSCRIBER` (see `choose.ts`): Tesseract, local, or
 * a vision model over HTTP.
 *
 * @module
 */

/** A page drawn for a transcriber. */
export interface PageImage {
  /** A PNG file (vision models) or a grey PGM file (Tesseract). */
  bytes: Uint8Array;
  format: "png" | "pgm";
  /** The resolution the page was drawn at. */
  dpi: number;
}

/** What a transcriber read on one page. */
export interface Transcription {
  /** The page's text in reading order; tables as text. */
  text: string;
  /**
   * Whether the page's text may miss a figure, chart or table: the vision model's
   * answer, or for Tesseract its layout analysis (picture and line areas).
   */
  figure: boolean;
  /** The languages the page was read with (Tesseract), such as `rus+eng`. */
  languages?: string;
  /** The script detected on the page (Tesseract OSD), such as `Cyrillic`. */
  script?: string;
  /** Degrees the page image was turned to read it upright (Tesseract OSD). */
  rotated?: number;
  /** The engine's version for this page when the engine says it per answer (a vision model's `model`). */
  version?: string;
}

/** A hint from the rest of the document: the script its other pages were read in. */
export interface TranscribeHint {
  /** The script most pages of this document so far were detected in. */
  documentScript?: string;
}

/** A transcribing engine. */
export interface Transcriber {
  /** The engine's name as recorded with each page: `tesseract`, `openai:<model>`, `anthropic:<model>`. */
  readonly engine: string;
  /** The engine's version as recorded with each page. */
  readonly version: string;
  /** How the console names it, such as "Tesseract 5.3.0 (eng, rus, chi_sim)". */
  readonly label: string;
  /** The picture it reads: PNG at the view resolution, or grey at `dpi`. */
  readonly image: { format: "png" | "pgm"; dpi: number };
  /** Pages it reads at once (its concurrency cap). */
  readonly concurrency: number;
  /**
   * Reads one page; rejects with a {@link TranscribeError} saying why. When
   * `signal` aborts, the page's work stops at once (a Tesseract run is killed, a
   * request is cancelled) and the promise rejects with the signal's reason.
   */
  transcribe(image: PageImage, hint: TranscribeHint, signal?: AbortSignal): Promise<Transcription>;
}

/**
 * Why a document's transcription was stopped before its end: it was deleted or
 * asked for again, another worker took it over, or the server is stopping.
 * Nothing is recorded for it.
 */
export class TranscriptionStopped extends Error {
  override name = "TranscriptionStopped";
}

/** The reason an aborted signal carries, as an error. */
export function abortReason(signal: AbortSignal): Error {
  const reason = signal.reason;
  return reason instanceof Error
    ? reason
    : new TranscriptionStopped(String(reason ?? "The work was stopped"));
}

/** A page a transcriber could not read, with a one-sentence reason. */
export class TranscribeError extends Error {
  override name = "TranscribeError";
}

/** Runs `task` for each item with at most `limit` at once, in order of the items. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  });
  await Promise.all(runners);
}

/** At most `limit` tasks at once across every caller; the rest wait in order. */
export class Limiter {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  /** A limiter of `limit` (at least 1) slots. */
  constructor(limit: number) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /**
   * Runs `task` when a slot is free. When `signal` aborts while it waits, it
   * leaves the queue and rejects with the signal's reason.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw abortReason(signal);
    if (this.#running >= this.#limit) {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          const at = this.#waiting.indexOf(turn);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(abortReason(signal!));
        };
        signal?.addEventListener("abort", leave, { once: true });
        this.#waiting.push(turn);
      });
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
