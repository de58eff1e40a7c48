/**
 * The PDF copy worker: makes the PDF copies the log asks for (Office files
 * after upload, any non-PDF on request) with LibreOffice, checks them, and
 * records the copy or the failure. A Word or text file that has been read
 * then takes the copy's pages: the copy is read like any PDF, each page's
 * text is the copy's page, under the Word file's headings, and that is
 * recorded with the copy as a new `DocumentProcessed` with real pages.
 *
 * A file that processing refused is never handed to LibreOffice, nor is an
 * Office package whose zip directory is past the processing limits (a zip
 * bomb uploaded without processing). People take turns: the next copy is
 * always of the person whose copy started longest ago, so one person's
 * backlog cannot hold up another's files.
 *
 * A copy that fails is recorded as failed (`PdfCopyFailed`, which the
 * console and the API show) and not made again until asked: LibreOffice's
 * refusal, and text that cannot be placed on the copy's pages, at once. A
 * copy whose outcome cannot be recorded at all is tried again after
 * {@linkcode COPY_RETRY_MS}, then four times as long, and after
 * {@linkcode COPY_TRIES} tries its failure is recorded instead.
 *
 * @module
 */
import type { ProcessedPage, SergoEvent } from "../../events/types.ts";
import {
  copiesReadyPerPerson,
  type DocumentRow,
  getChunks,
  getDocument,
} from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { checkCopy, type ConvertOptions, convertToPdf, PdfCopyError } from "../pdf_copy/libreoffice.ts";
import { placeOnCopyPages } from "../pdf_copy/page_placing.ts";
import { ProcessingError } from "../processing/processing_error.ts";
import { DEFAULT_LEASE_MS, pausedOrFailed, reasonOf, withoutNul } from "./processing_worker.ts";
import { databaseUnreachable } from "../http/unavailable.ts";
import { Lease, type LeaseKind } from "./_lease.ts";

/** Reads a PDF's pages with their text and marks (the extraction pool, or pdf.js in this process). */
export interface CopyReader {
  extract(bytes: Uint8Array, fileName: string): Promise<{ page_count: number; pages: ProcessedPage[] }>;
}

/** Options of the PDF copy worker. */
export interface PdfCopyWorkerOptions {
  /** Copies made at once (default 1: each LibreOffice takes hundreds of MiB). */
  concurrency?: number;
  /** What reads a copy's pages; default pdf.js in this process. */
  reader?: CopyReader;
  /** How LibreOffice runs (its limits, where it is looked for); default {@linkcode convertToPdf}'s. */
  convert?: ConvertOptions;
  /** Who this worker is, in its leases: `serve` (embedded), `serve-<replica>`, or `cli-<pid>`; default `serve`. */
  workerId?: string;
  /** How long a claim on a copy keeps others away (renewed every third of it while LibreOffice works). */
  leaseMs?: number;
  /** The wait before a copy whose outcome could not be recorded is tried again (4 times longer each time). */
  retryMs?: number;
}

/** Tries of a copy whose outcome could not be recorded. */
interface CopyTries {
  tries: number;
  /** `Date.now()` before which the next try does not start. */
  notBefore: number;
  /** The document stream's version at the last failed try: a request past it is a new ask. */
  version: number;
}

/** Tries of a copy whose outcome cannot be recorded, the last of which records its failure instead. */
export const COPY_TRIES = 3;
/** The wait before the second try of such a copy (the third waits four times as long). */
export const COPY_RETRY_MS = 30_000;

/** A PDF copy as a lease: `PdfCopyStarted`, renewed, ended by the copy, its failure, a new request or another claim. */
function copyLease(app: SergoApp): LeaseKind {
  return {
    what: "PDF copy",
    start: (document_id, worker, lease_until) => ({
      type: "PdfCopyStarted",
      data: { document_id, worker, lease_until },
      metadata: app.meta("system"),
    }),
    renew: (document_id, worker, lease_until) => ({
      type: "PdfCopyLeaseRenewed",
      data: { document_id, worker, lease_until },
      metadata: app.meta("system"),
    }),
    ends: new Set(["PdfCopyStarted", "PdfCopyRequested", "PdfCopyMade", "PdfCopyFailed", "DocumentDeleted"]),
  };
}

const IN_PROCESS_READER: CopyReader = {
  // Loaded when first used: a server reads copies in its sandboxed readers, and pdf.js is heavy to load.
  extract: async (bytes) => (await import("../processing/pdf_extract.ts")).extractPdf(bytes),
};

/** Makes pending PDF copies, a few at a time, taking turns between people. */
export class PdfCopyWorker {
  readonly #app: SergoApp;
  readonly #inFlight = new Map<string, { personId: string; job: Promise<void> }>();
  readonly #concurrency: number;
  /** When each person's last copy started (a counter, not a clock). */
  readonly #lastTurn = new Map<string, number>();
  #turns = 0;
  readonly #reader: CopyReader;
  readonly #convert: ConvertOptions;
  readonly #workerId: string;
  readonly #leaseMs: number;
  readonly #retryMs: number;
  /** Copies whose outcome could not be recorded: tries so far, and when the next may start. */
  readonly #tries = new Map<string, CopyTries>();
  #stopped = false;

  /** Creates the worker; call {@linkcode kick} to look for work. */
  constructor(app: SergoApp, options: PdfCopyWorkerOptions = {}) {
    this.#app = app;
    this.#concurrency = options.concurrency ?? 1;
    this.#reader = options.reader ?? IN_PROCESS_READER;
    this.#convert = options.convert ?? {};
    this.#workerId = options.workerId ?? "serve";
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#retryMs = options.retryMs ?? COPY_RETRY_MS;
  }

  /**
   * Whether a copy waits before its next try: its outcome could not be
   * recorded lately, or at all after {@linkcode COPY_TRIES} tries (then until
   * the copy is asked for again).
   */
  #waiting(documentId: string): boolean {
    const tries = this.#tries.get(documentId);
    if (!tries) return false;
    if (tries.tries < COPY_TRIES) return Date.now() < tries.notBefore;
    const asked = this.#app.store.readStream(`document-${documentId}`).slice(tries.version)
      .some((event) => event.type === "PdfCopyRequested");
    if (asked) this.#tries.delete(documentId);
    return !asked;
  }

  /**
   * A try whose outcome could not be recorded (the log refused it, or could
   * not be reached): the next try waits, longer each time, and after the
   * last the failure is recorded, so the copy is not made again until asked.
   */
  async #triedAndFailed(doc: DocumentRow, error: unknown): Promise<void> {
    const tries = (this.#tries.get(doc.document_id)?.tries ?? 0) + 1;
    console.error(
      `PDF copy of ${doc.document_id} failed (try ${tries} of ${COPY_TRIES}): ${reasonOf(error)}`,
    );
    const version = this.#app.store.readStream(`document-${doc.document_id}`).length;
    this.#tries.set(doc.document_id, {
      tries,
      notBefore: Date.now() + this.#retryMs * 4 ** (tries - 1),
      version,
    });
    if (tries < COPY_TRIES) return;
    try {
      const current = getDocument(this.#app.db, doc.document_id);
      if (current?.pdf_copy_status !== "pending") return;
      await this.#app.append(`document-${doc.document_id}`, [{
        type: "PdfCopyFailed",
        data: {
          document_id: doc.document_id,
          reason: `The PDF copy could not be recorded in ${COPY_TRIES} tries: ${reasonOf(error)}`,
        },
        metadata: this.#app.meta("system"),
      }], { expectedVersion: version });
      this.#tries.delete(doc.document_id);
    } catch (again) {
      console.error(`The failure of the PDF copy of ${doc.document_id} could not be recorded either:`, again);
    }
  }

  /** Looks for pending copies whose document has finished processing. */
  kick(): void {
    if (this.#stopped) return;
    while (this.#inFlight.size < this.#concurrency) {
      const doc = this.#next();
      if (!doc) return;
      this.#lastTurn.set(doc.person_id, ++this.#turns);
      let recorded = true;
      const job = this.#copy(doc).then(() => {
        this.#tries.delete(doc.document_id);
      }, async (error) => {
        recorded = false;
        // The database away is not the copy's fault: paused, not counted as a try.
        if (databaseUnreachable(error)) console.error(pausedOrFailed("The PDF copy", doc.document_id, error));
        else await this.#triedAndFailed(doc, error);
      })
        .finally(() => {
          this.#inFlight.delete(doc.document_id);
          // A copy whose outcome could not be recorded waits for the next kick, not a tight loop.
          if (recorded) this.kick();
        })
        .catch((error) => console.error(`The PDF copy of ${doc.document_id} failed: ${reasonOf(error)}`));
      this.#inFlight.set(doc.document_id, { personId: doc.person_id, job });
    }
  }

  /** The next copy to make: of the person with fewest copies in flight, then whose turn came longest ago. */
  #next(): DocumentRow | undefined {
    const busy = new Map<string, number>();
    for (const { personId } of this.#inFlight.values()) busy.set(personId, (busy.get(personId) ?? 0) + 1);
    let best: DocumentRow | undefined;
    let bestKey: [number, number, number] | undefined;
    const leases = {
      now: this.#app.now(),
      reclaimFor: this.#workerId.startsWith("serve") ? this.#workerId : null,
    };
    for (const doc of copiesReadyPerPerson(this.#app.db, this.#inFlight.size + 1, leases)) {
      if (this.#inFlight.has(doc.document_id) || this.#waiting(doc.document_id)) continue;
      const key: [number, number, number] = [
        busy.get(doc.person_id) ?? 0,
        this.#lastTurn.get(doc.person_id) ?? 0,
        doc.uploaded_position,
      ];
      if (
        !bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1]) ||
        (key[0] === bestKey[0] && key[1] === bestKey[1] && key[2] < bestKey[2])
      ) {
        best = doc;
        bestKey = key;
      }
    }
    return best;
  }

  async #copy(doc: DocumentRow): Promise<void> {
    if (doc.type === "pdf") return;
    // Another worker (a replica) claimed it first, or it changed: look again later.
    const lease = await Lease.take(this.#app, copyLease(this.#app), {
      documentId: doc.document_id,
      worker: this.#workerId,
    }, this.#leaseMs);
    if (!lease) return;
    try {
      await this.#copyLeased({ ...doc, type: doc.type }, lease);
    } finally {
      await lease.release();
    }
  }

  async #copyLeased(
    doc: DocumentRow & { type: Exclude<DocumentRow["type"], "pdf"> },
    lease: Lease,
  ): Promise<void> {
    const app = this.#app;
    let made: { sha256: string; pages: number; read: ProcessedPage[] | null } | null = null;
    let reason = "";
    try {
      if (doc.status === "not_indexed" && doc.failure_reason) {
        throw new PdfCopyError(
          `No PDF copy is made of a file that processing refused: ${doc.failure_reason}`,
        );
      }
      const bytes = await app.blobs.read(doc.sha256);
      if (doc.type === "docx" || doc.type === "pptx") {
        const { checkPackage } = await import("../processing/package_check.ts"); // zip reading, loaded on use
        try {
          checkPackage(bytes);
        } catch (error) {
          if (!(error instanceof ProcessingError)) throw error;
          throw new PdfCopyError(`No PDF copy is made of this file: ${error.message}`);
        }
      }
      const pdf = await convertToPdf(bytes, doc.type, this.#convert);
      const pages = await checkCopy(doc.type, doc.type === "pptx" ? doc.page_count : null, pdf);
      const sha256 = await app.blobs.write(pdf);
      // Word and text files take the copy's pages; a deck's slides are its pages already.
      const read = doc.type === "pptx" ? null : (await this.#reader.extract(pdf, "copy.pdf")).pages;
      made = { sha256, pages, read };
    } catch (error) {
      // The database went away (the file could not be read, the copy not stored): the copy is made again later.
      if (databaseUnreachable(error)) throw error;
      reason = reasonOf(error);
    }
    // At the version the lease knows; read again meanwhile (the lease holds): the text is placed as it is now.
    await lease.record(() => {
      const current = getDocument(app.db, doc.document_id);
      if (!current || current.pdf_copy_status !== "pending") return null;
      const failed = (why: string): SergoEvent[] => [{
        type: "PdfCopyFailed",
        data: { document_id: doc.document_id, reason: why },
        metadata: app.meta("system"),
      }];
      if (!made) return failed(reason);
      try {
        return this.#copyEvents(current, made);
      } catch (error) {
        // Placing the text on the copy's pages fails the same way on every try: record it, do not retry.
        return failed(
          `The PDF copy was made, but the text could not be placed on its pages: ${reasonOf(error)}`,
        );
      }
    });
  }

  /**
   * The copy, and for a Word or text file whose text has been read, its text
   * on the copy's pages (a file that is not indexed keeps no text; its page
   * count becomes the copy's).
   */
  #copyEvents(
    current: DocumentRow,
    made: { sha256: string; pages: number; read: ProcessedPage[] | null },
  ): SergoEvent[] {
    const app = this.#app;
    const events: SergoEvent[] = [{
      type: "PdfCopyMade",
      data: { document_id: current.document_id, sha256: made.sha256, page_count: made.pages },
      metadata: app.meta("system"),
    }];
    if (!made.read || current.status !== "searchable") return events;
    const pieces = getChunks(app.db, current.document_id);
    const pages = placeOnCopyPages(pieces, made.read, { withSections: current.type !== "txt" });
    events.push({
      type: "DocumentProcessed",
      data: {
        document_id: current.document_id,
        preset: current.preset,
        page_count: pages.length,
        pages_estimated: false,
        pages: pages.map(withoutNul),
      },
      metadata: app.meta("system"),
    });
    return events;
  }

  /** Waits for the copies being made now. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()].map((f) => f.job));
  }

  /** Stops taking new work and waits for what is in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.drain();
  }
}
