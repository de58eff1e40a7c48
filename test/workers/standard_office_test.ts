/**
 * Standard on Office files, through their PDF copies (LibreOffice) and the real
 * Tesseract: a slide that is a scanned page, and a Word page that is a pasted
 * screenshot of a paper, become text; pages with their own text keep it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { getDocument, getPages } from "../../projections/catalogue.ts";
import { openApp } from "../../src/app.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { openStandard } from "../../src/processing/transcribers/choose.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { loadConfig } from "../../src/config.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * A deck of one slide holding page 2 of the corpus's `scanned-text-page-image-only.pdf` as a picture
 * (`soffice --infilter=impress_pdf_import --convert-to pptx` of that page alone).
 */
const DECK = new URL("../fixtures/scanned-page-slide.pptx", import.meta.url).pathname;

Deno.test("Standard reads a PowerPoint and a Word file through their PDF copies", async () => {
  await needs("soffice");
  await needs("tesseract");
  await using dir = await tempDir();
  const app = await openApp(dir.path);
  const standard = await openStandard(loadConfig([]).transcribe);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    assert.ok(standard.reading.transcriber, standard.missing ?? "");
    const person = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const ids: string[] = [];
    for (const file of [DECK, join(CORPUS_DIR, "docx/markitdown-test-doc.docx")]) {
      const temp = await app.blobs.tempPath();
      await Deno.copyFile(file, temp);
      const doc = await uploadFile(app, {
        personId: person.person_id,
        folderId: null,
        name: file.split("/").pop()!,
        tempPath: temp,
        preset: "standard",
      }, "t");
      ids.push(doc.document_id);
    }
    const worker = new ProcessingWorker(app, pool, { workerId: "t", standard: standard.reading });
    worker.kick();
    await worker.drain();
    const [deck, word] = ids.map((id) => getDocument(app.db, id)!);
    for (const doc of [deck!, word!]) {
      assert.equal(doc.status, "searchable", `${doc.name}: ${doc.failure_reason}`);
      assert.equal(doc.pdf_copy_status, "made", `${doc.name}: the copy Standard read is kept`);
    }
    const pagesOf = (id: string) => {
      const processed = app.store.readStream(`document-${id}`).findLast((e) =>
        e.type === "DocumentProcessed"
      );
      assert.ok(processed?.type === "DocumentProcessed");
      return processed.data.pages;
    };
    // The deck: one slide that is a scanned page (upside down), with no text of its own.
    const slides = pagesOf(deck!.document_id);
    assert.equal(slides.length, 1);
    assert.equal(slides[0]!.transcription?.because, "missing");
    assert.equal(slides[0]!.transcription?.rotated, 180);
    assert.match(slides[0]!.text, /Docling bundles PDF document conversion/);
    assert.deepEqual(deck!.image_only_pages, []);
    // The Word file: its copy's page 3 is a pasted screenshot of the AutoGen paper's first page.
    assert.equal(word!.pages_estimated, false, "pages are the copy's");
    const page3 = getPages(app.db, word!.document_id, 3, 3)[0]!;
    assert.match(page3.text, /AutoGen/);
    assert.match(page3.text, /Multi-Agent Conversation/);
    assert.equal(pagesOf(word!.document_id)[2]!.transcription?.because, "missing");
    assert.equal(pagesOf(word!.document_id)[0]!.transcription, undefined);
  } finally {
    await pool.close();
    standard.close();
    await app.close();
  }
});
