/**
 * The processing worker: picks up documents whose processing is pending (as
 * the log says), claims each with an optimistic-concurrency append so two
 * processes never read the same file twice, reads it in the extraction pool
 * and records the result or the failure.
 *
 * When the shared database goes away mid-work (a PostgreSQL restart), the
 * document is not failed for it: the worker waits for the database to
 * record what it read while its lease lasts, and otherwise gives the work up
 * with one line in the log; the lease runs out and this or another worker
 * claims it again (the version check records one result). Nothing it starts
 * in the background can end in an unhandled rejection.
 *
 * @module
 */
import {
  claimableProcessing,
  claimableProcessingPerPerson,
  type DocumentRow,
  getDocument,
} from "../../projections/catalogue.ts";
import { Lease, type LeaseKind } from "./_lease.ts";
import type { SergoApp } from "../app.ts";
import type { ProcessedPage } from "../../events/types.ts";
import type { ExtractResult } from "../processing/extract_result.ts";
import {
  budgetNotice,
  DEFAULT_STANDARD_BUDGET,
  hasNoText,
  mergeTranscriptions,
  NO_TEXT_LAYER_NO_TRANSCRIBER_REASON,
  NO_TEXT_LAYER_REASON,
  pagesToTranscribe,
  type StandardBudget,
  type StandardPage,
  transcribePages,
} from "../processing/standard.ts";
import { type Transcriber, TranscriptionStopped } from "../processing/transcribers/transcriber.ts";
import type { RenderPool } from "../render/render_pool.ts";
import { checkCopy, convertToPdf } from "../pdf_copy/libreoffice.ts";
import { placeOnCopyPages } from "../pdf_copy/page_placing.ts";
import { databaseUnreachable } from "../http/unavailable.ts";

/** What the worker needs from an extraction pool. */
export interface Extractor {
  extract(bytes: Uint8Array, fileName: string): Promise<
    {
      page_count: number;
      pages_estimated: boolean;
      pages: ProcessedPage[];
      layouts?: ExtractResult["layouts"];
    }
  >;
}

/** What the Standard preset reads with: a transcriber (null when none is installed) and a pool to draw pages. */
export interface StandardReading {
  transcriber: Transcriber | null;
  renderPool: RenderPool;
  /** How much of one document is transcribed (default: `DEFAULT_STANDARD_BUDGET`). */
  budget?: StandardBudget;
}

/** Options of the processing worker. */
export interface ProcessingWorkerOptions {
  /** Who this worker is: `serve` (embedded), `serve-<replica>` (on PostgreSQL), or `cli-<pid>`. */
  workerId: string;
  /** How long a claim keeps others away (renewed every third of it while the work goes on). */
  leaseMs?: number;
  /** At most this many documents at once (the pool limits CPU use too). */
  concurrency?: number;
  /** Only these documents (a CLI upload waits for its own). */
  only?: ReadonlySet<string>;
  /** How the Standard preset reads; without it Standard documents fail with a reason. */
  standard?: StandardReading;
}

type Reading = Awaited<ReturnType<Extractor["extract"]>> & {
  not_indexed_reason?: string;
  incomplete_reason?: string;
};

/** Why a transcription stops when the server stops (the lease is given back, nothing is recorded). */
const STOPPING = "The server is stopping";

/** A default lease (`SERGO_WORK_LEASE_S`): renewed every 20 s, so a worker that died is replaced within a minute. */
export const DEFAULT_LEASE_MS = 60_000;

/** What takes a processing lease away: another claim, a new request, a result, the document's deletion. */
const PROCESSING_ENDS: LeaseKind["ends"] = new Set([
  "ProcessingStarted",
  "ProcessingRequested",
  "DocumentProcessed",
  "ProcessingFailed",
  "DocumentDeleted",
]);

/**
 * Reads pending documents and records what came of each.
 *
 * Fairness: documents are taken in turns by owner (each person's oldest
 * first, then everyone's second, …), and besides the `concurrency` slots one
 * more is kept for a person who has nothing being read, so one person's
 * queue never holds every slot while another person waits.
 *
 * Stopping: a document deleted, asked for again or taken over by another
 * worker stops its transcription at once (the running Tesseract is killed);
 * {@linkcode stop} stops every transcription and gives its lease back, so the
 * next run reads it again; nothing is recorded for a stopped one.
 */
export class ProcessingWorker {
  readonly #app: SergoApp;
  readonly #extractor: Extractor;
  readonly #options: ProcessingWorkerOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  /** The owner of each document in flight. */
  readonly #owners = new Map<string, string>();
  /** What stops each document's reading. */
  readonly #stops = new Map<string, AbortController>();
  readonly #unwatch: () => void;
  #stopped = false;

  /** Creates the worker; call {@linkcode kick} to look for work. */
  constructor(app: SergoApp, extractor: Extractor, options: ProcessingWorkerOptions) {
    this.#app = app;
    this.#extractor = extractor;
    this.#options = options;
    this.#unwatch = app.onApplied((events) => {
      for (const event of events) {
        if (this.#stops.size === 0) return;
        let why: string | null = null;
        if (event.type === "DocumentDeleted") why = "The document was deleted";
        else if (event.type === "ProcessingRequested") why = "The document was asked to be processed again";
        else if (event.type === "ProcessingStarted" && event.data.worker !== options.workerId) {
          why = `Another worker (${event.data.worker ?? "unknown"}) took the document over`;
        }
        if (why && "document_id" in event.data) {
          this.#stops.get(event.data.document_id)?.abort(new TranscriptionStopped(why));
        }
      }
    });
  }

  /** How many documents are being read now. */
  get busy(): number {
    return this.#inFlight.size;
  }

  /** Looks for pending documents and starts reading as many as the limit allows. */
  kick(): void {
    if (this.#stopped) return;
    const limit = this.#options.concurrency ?? navigator.hardwareConcurrency;
    // One slot past the limit is kept for a person with nothing being read.
    if (this.#inFlight.size >= limit + 1) return;
    const now = this.#app.now();
    // A `serve` worker takes over its own leases after a restart (a replica's id is kept in its data directory).
    const reclaimFor = this.#options.workerId.startsWith("serve") ? this.#options.workerId : null;
    // Everyone's next documents in turns (a person has at most `limit` in flight, so each has one more to
    // take); a CLI upload's worker looks only for its own.
    const candidates = this.#options.only
      ? claimableProcessing(this.#app.db, { now, reclaimFor, limit: this.#inFlight.size + limit + 1_000_000 })
      : claimableProcessingPerPerson(this.#app.db, { now, reclaimFor, perPerson: limit + 1 });
    for (const doc of candidates) {
      if (this.#inFlight.size >= limit + 1) return;
      if (this.#inFlight.has(doc.document_id)) continue;
      if (this.#options.only && !this.#options.only.has(doc.document_id)) continue;
      const owned = [...this.#owners.values()].filter((owner) => owner === doc.person_id).length;
      if (this.#inFlight.size >= limit && owned > 0) continue;
      const job = this.#process(doc).then(() => true, (error) => {
        console.error(pausedOrFailed("Processing", doc.document_id, error));
        return false;
      }).then((done) => {
        this.#inFlight.delete(doc.document_id);
        this.#owners.delete(doc.document_id);
        // Work given up waits for the next look (an event, or the lease check), not a tight loop.
        if (done) this.kick();
      });
      this.#inFlight.set(doc.document_id, job);
      this.#owners.set(doc.document_id, doc.person_id);
    }
  }

  /** How this worker claims a document's processing: `ProcessingStarted` with the document's preset. */
  #leaseKind(doc: DocumentRow): LeaseKind {
    const app = this.#app;
    return {
      what: "processing",
      ends: PROCESSING_ENDS,
      start: (document_id, worker, lease_until) => ({
        type: "ProcessingStarted",
        data: { document_id, preset: doc.preset, worker, lease_until },
        metadata: app.meta("system"),
      }),
      renew: (document_id, worker, lease_until) => ({
        type: "ProcessingLeaseRenewed",
        data: { document_id, worker, lease_until },
        metadata: app.meta("system"),
      }),
    };
  }

  async #process(doc: DocumentRow): Promise<void> {
    const app = this.#app;
    // Someone else claimed it, or it changed: look again later.
    const lease = await Lease.take(app, this.#leaseKind(doc), {
      documentId: doc.document_id,
      worker: this.#options.workerId,
    }, this.#options.leaseMs ?? DEFAULT_LEASE_MS);
    if (!lease) return;
    const stop = new AbortController();
    this.#stops.set(doc.document_id, stop);
    if (this.#stopped) stop.abort(new TranscriptionStopped(STOPPING));
    try {
      await this.#work(doc, lease, stop);
    } catch (error) {
      if (!(error instanceof TranscriptionStopped)) throw error;
      // Stopped: nothing is recorded. A stopping server gives the lease back for the next run.
      if (error.message === STOPPING) await lease.handBack();
    } finally {
      this.#stops.delete(doc.document_id);
      await lease.release();
    }
  }

  async #work(doc: DocumentRow, lease: Lease, stop: AbortController): Promise<void> {
    const app = this.#app;
    let outcome:
      | { ok: true; result: Reading }
      | { ok: false; reason: string };
    try {
      const bytes = await app.blobs.read(doc.sha256);
      let result: Reading = await this.#extractor.extract(bytes, doc.name);
      if (doc.preset === "standard") result = await this.#standard(doc, bytes, result, lease, stop);
      else if (result.pages.length > 0 && result.pages.every((p) => p.image_only)) {
        result = {
          ...result,
          not_indexed_reason: this.#options.standard?.transcriber
            ? NO_TEXT_LAYER_REASON
            : NO_TEXT_LAYER_NO_TRANSCRIBER_REASON,
        };
      }
      outcome = { ok: true, result };
    } catch (error) {
      // The database went away (the file could not be read from it, a copy not stored): not the file's fault.
      if (databaseUnreachable(error)) throw error;
      if (error instanceof TranscriptionStopped) throw error;
      outcome = { ok: false, reason: reasonOf(error) };
    }
    // The result goes at the version the lease knows: a document deleted, re-requested or taken over by
    // another worker meanwhile (its lease ran out) gets no stale or second result.
    await lease.record(() => {
      const meta = app.meta("system");
      if (outcome.ok) {
        return [{
          type: "DocumentProcessed",
          data: {
            document_id: doc.document_id,
            preset: doc.preset,
            page_count: outcome.result.page_count,
            pages_estimated: outcome.result.pages_estimated,
            pages: outcome.result.pages.map(withoutNul),
            ...(outcome.result.not_indexed_reason
              ? { not_indexed_reason: outcome.result.not_indexed_reason }
              : {}),
            ...(outcome.result.incomplete_reason
              ? { incomplete_reason: outcome.result.incomplete_reason }
              : {}),
          },
          metadata: meta,
        }];
      }
      return [{
        type: "ProcessingFailed",
        data: { document_id: doc.document_id, preset: doc.preset, reason: outcome.reason },
        metadata: meta,
      }];
    });
  }

  /**
   * The Standard pass over a Basic reading: the PDF (the document, or an Office
   * file's PDF copy, made now if there is none yet) is judged page by page, and
   * pages with a missing, tiny or garbage text layer are transcribed.
   */
  async #standard(
    doc: DocumentRow,
    bytes: Uint8Array,
    basic: Reading,
    lease: Lease,
    stop: AbortController,
  ): Promise<Reading> {
    const app = this.#app;
    const transcriber = this.#options.standard?.transcriber;
    if (!transcriber || !this.#options.standard) {
      throw new Error(
        "The Standard preset needs a transcriber, and none is installed here: install tesseract-ocr or set SERGO_TRANSCRIBER",
      );
    }
    const budget = this.#options.standard.budget;
    const deps = {
      transcriber,
      renderPool: this.#options.standard.renderPool,
      signal: stop.signal,
      ...(budget ? { budget } : {}),
    };
    let pdf = bytes;
    let reading: Reading = basic;
    if (doc.type === "pptx" || doc.type === "docx") {
      pdf = await this.#pdfCopy(doc, bytes, basic, lease);
      reading = await this.#extractor.extract(pdf, "copy.pdf");
    } else if (doc.type !== "pdf") {
      return basic; // Text and Markdown have no page images.
    }
    // A slide's text is what Basic read from its shapes (the copy adds the layout's and master's text), with
    // the pictures its copy's page draws; a Word file's pages are its copy's own.
    const judged = doc.type === "pptx" && reading.pages.length === basic.pages.length
      ? { ...reading, pages: basic.pages }
      : reading;
    const wanted = pagesToTranscribe(judged as ExtractResult);
    const total = Math.min(wanted.length, budget?.maxPages ?? wanted.length);
    let lastReport = 0;
    const read = await transcribePages(pdf, wanted, deps, async (_page, done) => {
      if (lease.lost) {
        stop.abort(new TranscriptionStopped(`Another worker took this document over (${lease.lost})`));
        return;
      }
      // Progress for the console and the CLI, at most every second (and at the end).
      if (done < total && Date.now() - lastReport < 1000) return;
      lastReport = Date.now();
      await lease.append(() => [{
        type: "TranscriptionProgressed",
        data: { document_id: doc.document_id, pages_done: done, pages_total: Math.max(1, total) },
        metadata: app.meta("system"),
      }]).catch((error) => {
        // Progress is for show: an outage skips it, and the result waits for the database (see record()).
        if (!databaseUnreachable(error)) throw error;
      });
    });
    if (lease.lost) throw new TranscriptionStopped(`Another worker took this document over (${lease.lost})`);
    const outcomes = read.outcomes;
    const incomplete = read.stopped
      ? { incomplete_reason: budgetNotice(read.stopped, budget ?? DEFAULT_STANDARD_BUDGET, read.skipped) }
      : {};
    const failed = outcomes.filter((o) => o.text === null);
    let pages: ProcessedPage[];
    let pageCount = basic.page_count;
    let estimated = basic.pages_estimated;
    if (doc.type === "docx") {
      pages = docxPages(basic, reading, outcomes);
      pageCount = reading.page_count;
      estimated = false;
    } else {
      pages = mergeTranscriptions(basic.pages, outcomes);
    }
    if (hasNoText({ pages })) {
      if (read.stopped) {
        // The budget ran out before any page gave text: not indexed, saying why (nothing failed).
        const reason = budgetNotice(read.stopped, budget ?? DEFAULT_STANDARD_BUDGET, read.skipped, false);
        return { ...basic, pages, not_indexed_reason: reason };
      }
      if (failed.length > 0) throw new Error(`The scan could not be read: ${failed[0]!.transcription.error}`);
      return { ...basic, pages, not_indexed_reason: `No text: ${transcriber.engine} found none on any page` };
    }
    return { page_count: pageCount, pages_estimated: estimated, pages, ...incomplete };
  }

  /** An Office file's PDF copy: the one made already, or one made now and recorded. */
  async #pdfCopy(doc: DocumentRow, bytes: Uint8Array, basic: Reading, lease: Lease): Promise<Uint8Array> {
    const current = getDocument(this.#app.db, doc.document_id);
    if (current?.pdf_copy_status === "made" && current.pdf_copy_sha256) {
      return await this.#app.blobs.read(current.pdf_copy_sha256);
    }
    const type = doc.type as "pptx" | "docx";
    const pdf = await convertToPdf(bytes, type);
    const pages = await checkCopy(type, type === "pptx" ? basic.page_count : null, pdf);
    const sha256 = await this.#app.blobs.write(pdf);
    await lease.append(() => [{
      type: "PdfCopyMade",
      data: { document_id: doc.document_id, sha256, page_count: pages },
      metadata: this.#app.meta("system"),
    }]);
    if (lease.lost) throw new Error(`Another worker took this document over (${lease.lost})`);
    return pdf;
  }

  /** Waits for the documents being read now. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  /**
   * Stops taking new work, stops the transcriptions running (their leases
   * given back, nothing recorded) and waits for what is in flight.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const stop of this.#stops.values()) stop.abort(new TranscriptionStopped(STOPPING));
    await this.drain();
    this.#unwatch();
  }
}

/**
 * A Word file's pages under Standard: the PDF copy's pages, their text under
 * the Word headings (as a Basic copy places them, `src/pdf_copy/page_placing.ts`)
 * and, where the copy's page was transcribed, the transcription as one more
 * chunk under the heading in force at the end of that page.
 */
function docxPages(basic: Reading, copy: Reading, outcomes: readonly StandardPage[]): ProcessedPage[] {
  const pieces = basic.pages.flatMap((p) => p.chunks ?? [{ section: null, text: p.text }]);
  const placed = placeOnCopyPages(pieces, copy.pages, { withSections: true });
  const byPage = new Map(outcomes.map((o) => [o.page, o]));
  let section: string | null = null;
  return placed.map((page) => {
    const own = [...(page.chunks ?? [])];
    section = own.at(-1)?.section ?? section;
    const outcome = byPage.get(page.page);
    if (!outcome) return page;
    let text = page.text;
    let marked = page.marked;
    if (outcome.text) {
      own.push({ section, text: outcome.text });
      text = text.trim() === "" ? outcome.text : `${text}\n\n${outcome.text}`;
      marked = outcome.marked;
    }
    return {
      ...page,
      text,
      chunks: own,
      marked,
      image_only: marked && text.trim() === "",
      transcription: outcome.transcription,
    };
  });
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

/**
 * The log's line for background work that ended without its outcome recorded:
 * paused when the database was unreachable (the work is claimed again once
 * its lease runs out), failed otherwise; one line, never a stack.
 */
export function pausedOrFailed(what: string, documentId: string, error: unknown): string {
  return databaseUnreachable(error)
    ? `${what} of ${documentId} paused: ${reasonOf(error)}; it is taken up again when the database is back`
    : `${what} of ${documentId} failed: ${reasonOf(error)}`;
}

/** One sentence for a failure, never a stack. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n")[0]!.trim() || "Reading this file failed";
  return line.length > 500 ? `${line.slice(0, 497)}…` : line;
}
