/**
 * The PDF copy worker: makes the PDF copies the log asks for (Office files
 * after upload, any non-PDF on request) with LibreOffice, checks them, and
 * records the copy — with each Word chunk's real page — or the failure.
 *
 * @module
 */
import { copiesReady, type DocumentRow, getChunks, getDocument } from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { checkCopy, convertToPdf } from "../pdf_copy/libreoffice.ts";
import { matchChunksToPages, pdfPageTexts } from "../pdf_copy/page_matching.ts";
import { reasonOf } from "./processing_worker.ts";

/** Makes pending PDF copies, a few at a time. */
export class PdfCopyWorker {
  readonly #app: SergoApp;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #concurrency: number;
  #stopped = false;

  /** Creates the worker; call {@linkcode kick} to look for work. */
  constructor(app: SergoApp, options: { concurrency?: number } = {}) {
    this.#app = app;
    this.#concurrency = options.concurrency ?? 1;
  }

  /** Looks for pending copies whose document has finished processing. */
  kick(): void {
    if (this.#stopped || this.#inFlight.size >= this.#concurrency) return;
    for (const doc of copiesReady(this.#app.db, this.#inFlight.size + this.#concurrency)) {
      if (this.#inFlight.size >= this.#concurrency) return;
      if (this.#inFlight.has(doc.document_id)) continue;
      const job = this.#copy(doc).catch((error) =>
        console.error(`PDF copy of ${doc.document_id} failed:`, error)
      )
        .finally(() => {
          this.#inFlight.delete(doc.document_id);
          this.kick();
        });
      this.#inFlight.set(doc.document_id, job);
    }
  }

  async #copy(doc: DocumentRow): Promise<void> {
    const app = this.#app;
    const stream = `document-${doc.document_id}`;
    if (doc.type === "pdf") return;
    let made: { sha256: string; pages: number; chunkPages?: number[] } | null = null;
    let reason = "";
    try {
      const bytes = await app.blobs.read(doc.sha256);
      const pdf = await convertToPdf(bytes, doc.type);
      const pages = await checkCopy(doc.type, doc.type === "pptx" ? doc.page_count : null, pdf);
      const sha256 = await app.blobs.write(pdf);
      let chunkPages: number[] | undefined;
      const chunks = getChunks(app.db, doc.document_id);
      if (chunks.length > 0 && (doc.type === "docx" || doc.type === "txt" || doc.type === "md")) {
        chunkPages = matchChunksToPages(chunks.map((c) => c.text), await pdfPageTexts(pdf));
      }
      made = { sha256, pages, chunkPages };
    } catch (error) {
      reason = reasonOf(error);
    }
    const current = getDocument(app.db, doc.document_id);
    if (!current || current.pdf_copy_status !== "pending") return;
    if (made) {
      await app.append(stream, [{
        type: "PdfCopyMade",
        data: {
          document_id: doc.document_id,
          sha256: made.sha256,
          page_count: made.pages,
          ...(made.chunkPages ? { chunk_pages: made.chunkPages } : {}),
        },
        metadata: app.meta("system"),
      }]);
    } else {
      await app.append(stream, [{
        type: "PdfCopyFailed",
        data: { document_id: doc.document_id, reason },
        metadata: app.meta("system"),
      }]);
    }
  }

  /** Waits for the copies being made now. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** Stops taking new work and waits for what is in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.drain();
  }
}
