import assert from "node:assert/strict";
import { getChunks, getDocument, getPages } from "../../projections/catalogue.ts";
import { searchPassages } from "../../projections/search_index.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempApp } from "../helpers/temp.ts";

Deno.test({
  name:
    "a Word file's chunks move from estimated to the PDF copy's real pages; a deck's copy has a page per slide",
  async fn() {
    await needs("soffice");
    await using t = await tempApp();
    const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
    const upload = async (path: string, type: "docx" | "pptx") => {
      const bytes = await Deno.readFile(`${CORPUS_DIR}/${path}`);
      return await recordUpload(t.app, {
        personId: ava.person_id,
        folderId: null,
        name: path.split("/").pop()!,
        sha256: await t.app.blobs.write(bytes),
        size: bytes.length,
        type,
        preset: "basic",
      }, "t");
    };
    const word = await upload("docx/chile-urban-land-policy-es.docx", "docx");
    const deck = await upload("pptx/markitdown-test-deck-chart-table.pptx", "pptx");
    const pool = createExtractionPool({ concurrency: 1 });
    const processing = new ProcessingWorker(t.app, pool, { workerId: "test" });
    const copies = new PdfCopyWorker(t.app);
    let estimated: number[] = [];
    try {
      processing.kick();
      await processing.drain();
      const before = getDocument(t.app.db, word.document_id)!;
      estimated = getChunks(t.app.db, word.document_id).map((c) => c.page);
      assert.equal(before.status, "searchable");
      assert.equal(before.pages_estimated, true);
      assert.equal(before.pdf_copy_status, "pending");
      for (
        let i = 0;
        i < 100 &&
        (getDocument(t.app.db, word.document_id)!.pdf_copy_status === "pending" ||
          getDocument(t.app.db, deck.document_id)!.pdf_copy_status === "pending");
        i++
      ) {
        copies.kick();
        await copies.drain();
      }
    } finally {
      await copies.stop();
      await pool.close();
    }
    const after = getDocument(t.app.db, word.document_id)!;
    assert.equal(after.pdf_copy_status, "made", after.pdf_copy_reason ?? "");
    assert.equal(after.pages_estimated, false);
    assert.equal(after.page_count, after.pdf_copy_pages);
    const real = getChunks(t.app.db, word.document_id).map((c) => c.page);
    assert.equal(real.length, estimated.length);
    assert.notDeepEqual(real, estimated, "the copy's pages differ from the estimates");
    assert.ok(real.every((page, i) => i === 0 || page >= real[i - 1]!), "pages never go backwards");
    assert.equal(real[0], 1);
    const pages = getPages(t.app.db, word.document_id, 1, after.page_count!);
    assert.equal(pages.length, after.page_count);
    assert.ok(pages[0]!.text.length > 0, "page 1 of the copy holds the first chunks");
    // Search shows the real pages, within the copy's page count.
    const hits = searchPassages(t.app.db, {
      personId: ava.person_id,
      folderIds: [],
      documentIds: [word.document_id],
      query: "política de suelo urbano",
      depth: 20,
    });
    assert.ok(hits.length > 0);
    for (const hit of hits) assert.ok(hit.page !== null && hit.page >= 1 && hit.page <= after.page_count!);
    const deckDoc = getDocument(t.app.db, deck.document_id)!;
    assert.equal(deckDoc.pdf_copy_status, "made", deckDoc.pdf_copy_reason ?? "");
    assert.equal(deckDoc.pdf_copy_pages, deckDoc.page_count);
  },
});
