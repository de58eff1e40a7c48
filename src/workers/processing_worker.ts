/**
 * The processing worker: picks up documents whose processing is pending (as
 * the log says), claims each with an optimistic-concurrency append so two
 * processes never read the same file twice, reads it in the extraction pool
 * and records the result or the failure.
 *
 * @module
 */
import { ConcurrencyError } from "../../events/store.ts";
import { claimableProcessing, type DocumentRow, getDocument } from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import type { ProcessedPage } from "../../events/types.ts";

/** What the worker needs from an extraction pool. */
export interface Extractor {
  extract(bytes: Uint8Array, fileName: string): Promise<
    { page_count: number; pages_estimated: boolean; pages: ProcessedPage[] }
  >;
}

/** Options of the processing worker. */
export interface ProcessingWorkerOptions {
  /** Who this worker is: `serve`, or `cli-<pid>`. */
  workerId: string;
  /** How long a claim keeps others away. */
  leaseMs?: number;
  /** At most this many documents at once (the pool limits CPU use too). */
  concurrency?: number;
  /** Only these documents (a CLI upload waits for its own). */
  only?: ReadonlySet<string>;
}

/** A default lease: longer than the extraction time limit. */
export const DEFAULT_LEASE_MS = 10 * 60_000;

/** Reads pending documents and records what came of each. */
export class ProcessingWorker {
  readonly #app: SergoApp;
  readonly #extractor: Extractor;
  readonly #options: ProcessingWorkerOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  #stopped = false;

  /** Creates the worker; call {@linkcode kick} to look for work. */
  constructor(app: SergoApp, extractor: Extractor, options: ProcessingWorkerOptions) {
    this.#app = app;
    this.#extractor = extractor;
    this.#options = options;
  }

  /** How many documents are being read now. */
  get busy(): number {
    return this.#inFlight.size;
  }

  /** Looks for pending documents and starts reading as many as the limit allows. */
  kick(): void {
    if (this.#stopped) return;
    const limit = this.#options.concurrency ?? navigator.hardwareConcurrency;
    if (this.#inFlight.size >= limit) return;
    const candidates = claimableProcessing(this.#app.db, {
      now: this.#app.now(),
      // A `serve` worker takes over its own leases after a restart.
      reclaimFor: this.#options.workerId === "serve" ? "serve" : null,
      // Enough to fill the free slots past what is in flight (and what `only` leaves out).
      limit: this.#inFlight.size + limit + (this.#options.only ? 1_000_000 : 0),
    });
    for (const doc of candidates) {
      if (this.#inFlight.size >= limit) return;
      if (this.#inFlight.has(doc.document_id)) continue;
      if (this.#options.only && !this.#options.only.has(doc.document_id)) continue;
      const job = this.#process(doc).finally(() => {
        this.#inFlight.delete(doc.document_id);
        this.kick();
      });
      this.#inFlight.set(doc.document_id, job);
    }
  }

  async #process(doc: DocumentRow): Promise<void> {
    const app = this.#app;
    const stream = `document-${doc.document_id}`;
    const version = app.store.readStream(stream).length;
    const leaseUntil = new Date(app.now().getTime() + (this.#options.leaseMs ?? DEFAULT_LEASE_MS))
      .toISOString();
    try {
      await app.append(stream, [{
        type: "ProcessingStarted",
        data: {
          document_id: doc.document_id,
          preset: doc.preset,
          worker: this.#options.workerId,
          lease_until: leaseUntil,
        },
        metadata: app.meta("system"),
      }], { expectedVersion: version });
    } catch (error) {
      if (error instanceof ConcurrencyError) return; // Someone else claimed it, or it changed: look again later.
      throw error;
    }
    let outcome:
      | { ok: true; result: Awaited<ReturnType<Extractor["extract"]>> }
      | { ok: false; reason: string };
    try {
      const bytes = await app.blobs.read(doc.sha256);
      outcome = { ok: true, result: await this.#extractor.extract(bytes, doc.name) };
    } catch (error) {
      outcome = { ok: false, reason: reasonOf(error) };
    }
    // A document deleted or re-requested meanwhile gets no stale result.
    const current = getDocument(app.db, doc.document_id);
    if (!current || current.processing_worker !== this.#options.workerId || current.status !== "processing") {
      return;
    }
    const meta = app.meta("system");
    if (outcome.ok) {
      await app.append(stream, [{
        type: "DocumentProcessed",
        data: {
          document_id: doc.document_id,
          preset: doc.preset,
          page_count: outcome.result.page_count,
          pages_estimated: outcome.result.pages_estimated,
          pages: outcome.result.pages.map(withoutNul),
        },
        metadata: meta,
      }]);
    } else {
      await app.append(stream, [{
        type: "ProcessingFailed",
        data: { document_id: doc.document_id, preset: doc.preset, reason: outcome.reason },
        metadata: meta,
      }]);
    }
  }

  /** Waits for the documents being read now. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** Stops taking new work and waits for what is in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.drain();
  }
}

/**
 * A page without NUL characters: some PDFs carry U+0000 in their text, and
 * SQLite's text functions stop at it, so a page would read back cut short.
 */
export function withoutNul(page: ProcessedPage): ProcessedPage {
  const clean = (text: string) => text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
  return {
    ...page,
    text: clean(page.text),
    ...(page.notes !== undefined ? { notes: clean(page.notes) } : {}),
    ...(page.chunks
      ? {
        chunks: page.chunks.map((c) => ({
          section: c.section === null ? null : clean(c.section),
          text: clean(c.text),
        })),
      }
      : {}),
  };
}

/** One sentence for a failure, never a stack. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n")[0]!.trim() || "Reading this file failed";
  return line.length > 500 ? `${line.slice(0, 497)}…` : line;
}
