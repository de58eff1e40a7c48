import assert from "node:assert/strict";
import { claimableProcessing, copiesReady, getDocument } from "../../projections/catalogue.ts";
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

Deno.test("workers see the next few documents they may take, whatever the backlog", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const upload = (name: string, type: "pptx" | "docx") =>
    recordUpload(t.app, {
      personId: ava.person_id,
      folderId: null,
      name,
      sha256: "0".repeat(64),
      size: 10,
      type,
      preset: "basic",
    }, "t");
  const docs = [];
  for (let i = 0; i < 6; i++) docs.push(await upload(`deck-${i}.pptx`, "pptx"));
  const now = new Date();
  const lease = (doc: { document_id: string }, worker: string, minutes: number) =>
    t.app.append(`document-${doc.document_id}`, [{
      type: "ProcessingStarted",
      data: {
        document_id: doc.document_id,
        preset: "basic",
        worker,
        lease_until: new Date(now.getTime() + minutes * 60_000).toISOString(),
      },
      metadata: t.app.meta("t"),
    }]);
  await lease(docs[0]!, "cli-1", 10); // another process holds it
  await lease(docs[1]!, "cli-2", -1); // its lease ran out
  await lease(docs[2]!, "serve", 10); // serve's own, from before a restart
  const ids = (rows: Array<{ document_id: string }>) => rows.map((row) => row.document_id);
  const all = (reclaimFor: string | null) =>
    ids(claimableProcessing(t.app.db, { now, reclaimFor, limit: 100 }));
  assert.deepEqual(all("serve"), ids(docs.slice(1)));
  assert.deepEqual(all(null), ids([docs[1]!, ...docs.slice(3)]));
  // Oldest first, no more than asked for.
  assert.deepEqual(
    ids(claimableProcessing(t.app.db, { now, reclaimFor: "serve", limit: 2 })),
    ids(docs.slice(1, 3)),
  );

  // Copies wait until their document has been read.
  assert.deepEqual(ids(copiesReady(t.app.db, 100)), []);
  for (const doc of [docs[4]!, docs[5]!]) {
    await t.app.append(`document-${doc.document_id}`, [{
      type: "ProcessingFailed",
      data: { document_id: doc.document_id, preset: "basic", reason: "Test." },
      metadata: t.app.meta("t"),
    }]);
  }
  assert.deepEqual(ids(copiesReady(t.app.db, 100)), ids([docs[4]!, docs[5]!]));
  assert.deepEqual(ids(copiesReady(t.app.db, 1)), ids([docs[4]!]));
});
