/**
 * A PDF copy that fails the same way every time is not made again and again:
 * a Word file LibreOffice cannot convert is converted once however often the
 * worker looks; a copy whose text cannot be placed on its pages is recorded
 * as failed after one conversion; and a copy whose outcome the log refuses is
 * tried three times, waiting longer each time, then recorded as failed, and
 * made again only when asked.
 * Each failure is a `PdfCopyFailed` event, and the API's document shows it.
 * LibreOffice is the real one, run through a `soffice` on the converter's
 * search path that counts its runs.
 */
import assert from "node:assert/strict";
import { getDocument } from "../../projections/catalogue.ts";
import type { SergoApp } from "../../src/app.ts";
import { recordUpload, requestPdfCopy } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { documentJson } from "../../src/api/documents.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { type CopyReader, PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { testServer } from "../http/_server.ts";
import { within } from "../helpers/wait.ts";

/** Tries of a copy whose outcome cannot be recorded, as documented (not the code's constant: a test of it). */
const COPY_TRIES = 3;

/** A search path whose `soffice` counts its runs, then runs the real LibreOffice. */
async function countingLibreOffice(): Promise<{ bin: string; runs(): Promise<number> } & AsyncDisposable> {
  const soffice = await needs("soffice");
  const prlimit = await needs("prlimit");
  const bin = await Deno.makeTempDir({ prefix: "sergo-counting-soffice-" });
  const count = `${bin}/runs`;
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  await Deno.writeTextFile(
    `${bin}/soffice`,
    `#!/bin/sh\necho run >> '${count}'\nPATH='${path}' exec '${soffice}' "$@"\n`,
  );
  await Deno.chmod(`${bin}/soffice`, 0o755);
  await Deno.symlink(prlimit, `${bin}/prlimit`);
  return {
    bin,
    runs: async () => (await Deno.readTextFile(count).catch(() => "")).split("\n").filter(Boolean).length,
    async [Symbol.asyncDispose]() {
      await Deno.remove(bin, { recursive: true });
    },
  };
}

/** Uploads a corpus Word file and reads it with Basic. */
async function uploadRead(app: SergoApp, path: string): Promise<{ personId: string; documentId: string }> {
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const bytes = await Deno.readFile(`${CORPUS_DIR}/${path}`);
  const doc = await recordUpload(app, {
    personId: ava.person_id,
    folderId: null,
    name: path.split("/").pop()!,
    sha256: await app.blobs.write(bytes),
    size: bytes.length,
    type: "docx",
    preset: "basic",
  }, "t");
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const processing = new ProcessingWorker(app, pool, { workerId: "test" });
    processing.kick();
    await within(processing.drain(), { ms: 60_000, what: `the reading of ${path}` });
  } finally {
    await pool.close();
  }
  return { personId: ava.person_id, documentId: doc.document_id };
}

/** Looks for work `times` times, as serve does at every event and every few seconds. */
async function kicks(worker: PdfCopyWorker, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    worker.kick();
    await within(worker.drain(), { ms: 120_000, what: "the copies started by one kick" });
  }
}

/** The document's copy events after its upload's reading. */
function copyEvents(app: SergoApp, documentId: string): string[] {
  return app.store.readStream(`document-${documentId}`).map((e) => e.type)
    .filter((type) => type.startsWith("PdfCopy") && type !== "PdfCopyLeaseRenewed");
}

/** Quiets the worker's console lines for a failed try (they are expected here), keeping them. */
function quiet(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  return { lines, restore: () => (console.error = original) };
}

Deno.test("a Word file LibreOffice cannot convert is converted once, however often the worker looks; the API says why", async () => {
  await using soffice = await countingLibreOffice();
  await using server = await testServer();
  const app = server.app;
  // Its [Content_Types].xml has a DOCTYPE: Sergo reads its text, LibreOffice loads nothing.
  const { documentId } = await uploadRead(app, "hostile/xxe-dtd-in-content-types.docx");
  assert.equal(getDocument(app.db, documentId)!.status, "searchable");
  const worker = new PdfCopyWorker(app, { convert: { searchPath: soffice.bin } });
  try {
    await kicks(worker, 4);
  } finally {
    await worker.stop();
  }
  assert.equal(await soffice.runs(), 1, "one conversion");
  assert.deepEqual(copyEvents(app, documentId), ["PdfCopyStarted", "PdfCopyFailed"]);
  const shown = documentJson(server.services, getDocument(app.db, documentId)!).pdf_copy as {
    status: string;
    reason?: string;
  };
  assert.equal(shown.status, "failed");
  assert.match(shown.reason ?? "", /^LibreOffice could not copy the docx file to PDF: /);
});

Deno.test("a copy whose text cannot be placed on its pages is recorded as failed after one conversion", async () => {
  await using soffice = await countingLibreOffice();
  await using server = await testServer();
  const app = server.app;
  const { documentId } = await uploadRead(app, "docx/docling-nested-lists.docx");
  // The copy is read, but its pages come back without text (as a bug in reading or placing would leave them).
  const broken: CopyReader = {
    async extract(bytes) {
      const read = await (await import("../../src/processing/pdf_extract.ts")).extractPdf(bytes);
      return {
        ...read,
        pages: read.pages.map((page) => ({ ...page, text: undefined as unknown as string })),
      };
    },
  };
  const worker = new PdfCopyWorker(app, { convert: { searchPath: soffice.bin }, reader: broken });
  const console = quiet();
  try {
    await kicks(worker, 4);
  } finally {
    console.restore();
    await worker.stop();
  }
  assert.equal(await soffice.runs(), 1, `one conversion; the worker said: ${console.lines.join("\n")}`);
  assert.deepEqual(copyEvents(app, documentId), ["PdfCopyStarted", "PdfCopyFailed"]);
  const shown = documentJson(server.services, getDocument(app.db, documentId)!).pdf_copy as {
    status: string;
    reason?: string;
  };
  assert.equal(shown.status, "failed");
  assert.match(shown.reason ?? "", /^The PDF copy was made, but the text could not be placed on its pages: /);
});

Deno.test("a copy whose outcome the log refuses is tried three times, waiting longer each time, then recorded as failed, and made again only when asked", async () => {
  await using soffice = await countingLibreOffice();
  await using server = await testServer();
  const app = server.app;
  const { personId, documentId } = await uploadRead(app, "docx/docling-nested-lists.docx");
  // Pages whose marks are words, not yes or no: the log refuses the copy's reading every time it is offered.
  let refused = true;
  const badMarks: CopyReader = {
    async extract(bytes) {
      const read = await (await import("../../src/processing/pdf_extract.ts")).extractPdf(bytes);
      if (!refused) return read;
      return { ...read, pages: read.pages.map((page) => ({ ...page, marked: "yes" as unknown as boolean })) };
    },
  };
  const retryMs = 1000;
  const worker = new PdfCopyWorker(app, { convert: { searchPath: soffice.bin }, reader: badMarks, retryMs });
  const console = quiet();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    // Each try waits longer than the last: a kick before the wait is over starts nothing.
    for (let tried = 1; tried <= COPY_TRIES; tried++) {
      await kicks(worker, 1);
      assert.equal(await soffice.runs(), tried, `try ${tried}; ${console.lines.join("\n")}`);
      if (tried === COPY_TRIES) break;
      await kicks(worker, 1);
      assert.equal(await soffice.runs(), tried, `a kick before the wait after try ${tried} is over`);
      await sleep(retryMs * 4 ** (tried - 1) + 100);
    }
    await kicks(worker, 3);
    assert.equal(await soffice.runs(), COPY_TRIES, "no try after the last");
    assert.deepEqual(copyEvents(app, documentId), [
      ...Array(COPY_TRIES).fill("PdfCopyStarted"),
      "PdfCopyFailed",
    ]);
    const doc = getDocument(app.db, documentId)!;
    assert.equal(doc.pdf_copy_status, "failed");
    assert.match(
      doc.pdf_copy_reason ?? "",
      new RegExp(`^The PDF copy could not be recorded in ${COPY_TRIES} tries: `),
    );
    assert.ok(
      console.lines.some((line) => line.includes(`failed (try ${COPY_TRIES} of ${COPY_TRIES})`)),
      console.lines.join("\n"),
    );
    // Asked again (the console's or the API's "Make a PDF copy"), it is made.
    refused = false;
    await requestPdfCopy(app, { personId, documentId }, "t");
    await kicks(worker, 2);
  } finally {
    console.restore();
    await worker.stop();
  }
  assert.equal(await soffice.runs(), COPY_TRIES + 1);
  assert.equal(getDocument(app.db, documentId)!.pdf_copy_status, "made");
});
