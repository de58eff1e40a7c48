import assert from "node:assert/strict";
import { getDocument, getPages } from "../../projections/catalogue.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempApp } from "../helpers/temp.ts";

// Word files taking their copy's pages are tested in word_copy_pages_test.ts, on every Word file of the corpus.
Deno.test({
  name: "a deck's PDF copy has a page per slide, and the slides keep their own text",
  async fn() {
    await needs("soffice");
    await using t = await tempApp();
    const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
    const path = "pptx/markitdown-test-deck-chart-table.pptx";
    const bytes = await Deno.readFile(`${CORPUS_DIR}/${path}`);
    const deck = await recordUpload(t.app, {
      personId: ava.person_id,
      folderId: null,
      name: path.split("/").pop()!,
      sha256: await t.app.blobs.write(bytes),
      size: bytes.length,
      type: "pptx",
      preset: "basic",
    }, "t");
    const pool = createExtractionPool({ concurrency: 1 });
    const processing = new ProcessingWorker(t.app, pool, { workerId: "test" });
    const copies = new PdfCopyWorker(t.app);
    let slides: string[] = [];
    try {
      processing.kick();
      await processing.drain();
      slides = getPages(t.app.db, deck.document_id, 1, 1000).map((page) => page.text);
      for (
        let i = 0;
        i < 100 && getDocument(t.app.db, deck.document_id)!.pdf_copy_status === "pending";
        i++
      ) {
        copies.kick();
        await copies.drain();
      }
    } finally {
      await copies.stop();
      await pool.close();
    }
    const deckDoc = getDocument(t.app.db, deck.document_id)!;
    assert.equal(deckDoc.pdf_copy_status, "made", deckDoc.pdf_copy_reason ?? "");
    assert.equal(deckDoc.pdf_copy_pages, deckDoc.page_count);
    assert.deepEqual(getPages(t.app.db, deck.document_id, 1, 1000).map((page) => page.text), slides);
    assert.deepEqual(
      t.app.store.readStream(`document-${deck.document_id}`).map((event) => event.type).slice(-1),
      ["PdfCopyMade"],
    );
  },
});
