import assert from "node:assert/strict";
import { getDocument } from "../../projections/catalogue.ts";
import { searchPassages } from "../../projections/search_index.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker, withoutNul } from "../../src/workers/processing_worker.ts";
import { tempApp } from "../helpers/temp.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

Deno.test("NUL characters are dropped from page text, so pages read back whole", () => {
  const page = withoutNul({
    page: 1,
    text: "Fiscal\u0000 year 2023",
    notes: "a\u0000b",
    chunks: [{ section: "S\u0000", text: "x\u0000y" }],
    marked: false,
    image_only: false,
  });
  assert.equal(page.text, "Fiscal year 2023");
  assert.equal(page.notes, "ab");
  assert.deepEqual(page.chunks, [{ section: "S", text: "xy" }]);
});

Deno.test("two workers never read the same document twice: the claim is an optimistic append", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const bytes = await Deno.readFile(`${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`);
  const sha256 = await t.app.blobs.write(bytes);
  const doc = await recordUpload(t.app, {
    personId: ava.person_id,
    folderId: null,
    name: "deck.pptx",
    sha256,
    size: bytes.length,
    type: "pptx",
    preset: "basic",
  }, "t");
  const pool = createExtractionPool({ concurrency: 2 });
  try {
    const a = new ProcessingWorker(t.app, pool, { workerId: "cli-1" });
    const b = new ProcessingWorker(t.app, pool, { workerId: "cli-2" });
    a.kick();
    b.kick();
    await Promise.all([a.drain(), b.drain()]);
  } finally {
    await pool.close();
  }
  const events = t.app.store.readStream(`document-${doc.document_id}`).map((e) => e.type);
  assert.deepEqual(events, ["DocumentUploaded", "ProcessingStarted", "DocumentProcessed"]);
  assert.equal(getDocument(t.app.db, doc.document_id)?.status, "searchable");
  const hits = searchPassages(t.app.db, {
    personId: ava.person_id,
    folderIds: [],
    documentIds: [doc.document_id],
    query: "table",
    depth: 10,
  });
  assert.ok(hits.some((h) => h.document_id === doc.document_id));
});
