/**
 * A worker whose lease another replica took over while it worked, and whose
 * copy of the log has not seen that yet when its result is refused (its
 * replica follows the log only when it asks): the refusal makes it read the
 * log again, see the other worker's claim, and drop its result, saying so —
 * no error, no retries, one result in the log. And a document changed
 * meanwhile in a way that leaves the lease alone (moved to another folder)
 * still gets the result, at the version after the change.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openPostgresStore } from "../../events/postgres/store.ts";
import { getDocument } from "../../projections/catalogue.ts";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { openProjector } from "../../projections/projector.ts";
import { openApp, SergoApp } from "../../src/app.ts";
import { moveDocument, recordUpload } from "../../src/domain/documents.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { addPerson } from "../../src/domain/people.ts";
import { openPostgresBlobStore } from "../../src/postgres_blob_store.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { type Extractor, ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { tempApp, tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

Deno.test("PostgreSQL leases: a worker refused before it sees the takeover loses its lease and drops its result, without an error", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir("sergo-lease-sync-");
  // Replica B's clock is an hour ahead: A's lease has run out for B.
  const b = await openApp(join(dir.path, "b"), {
    databaseUrl: db.url,
    now: () => new Date(Date.now() + 60 * 60_000),
  });
  // Replica A follows the log only when it syncs (no notices, no polling): it cannot see B's claim by chance.
  const storeA = await openPostgresStore(db.url, { cachePath: join(dir.path, "a-log.db"), follow: false });
  await Deno.mkdir(join(dir.path, "a"), { recursive: true });
  const a = new SergoApp(
    join(dir.path, "a"),
    storeA,
    openProjector(join(dir.path, "a-projections.db"), ALL_PROJECTIONS),
    await openPostgresBlobStore(db.url, join(dir.path, "a-tmp")),
    () => new Date(),
  );
  const pool = createExtractionPool({ concurrency: 1 });
  const errors: string[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => errors.push(args.map(String).join(" "));
  const gate = Promise.withResolvers<void>();
  const started = Promise.withResolvers<void>();
  const stalled: Extractor = {
    async extract(bytes, name) {
      started.resolve();
      await gate.promise;
      return await pool.extract(bytes, name);
    },
  };
  const workerA = new ProcessingWorker(a, stalled, { workerId: "serve-a", leaseMs: 60_000 });
  const workerB = new ProcessingWorker(b, pool, { workerId: "serve-b", leaseMs: 60_000 });
  try {
    const ava = await addPerson(b, { name: "Ava Bennett", email: "ava@example.com" });
    const bytes = await Deno.readFile(`${CORPUS_DIR}/pdf/japanese-tex-notes.pdf`);
    const doc = await recordUpload(b, {
      personId: ava.person_id,
      folderId: null,
      name: "notes.pdf",
      sha256: await b.blobs.write(bytes),
      size: bytes.length,
      type: "pdf",
      preset: "basic",
    }, "t");
    const id = doc.document_id;
    await storeA.sync();
    a.catchUp();
    assert.equal(getDocument(a.db, id)?.status, "processing");
    workerA.kick();
    await within(started.promise, { ms: 30_000, what: "A's reading of the upload" });
    // B sees A's claim, finds it expired by its clock, takes the document over and reads it.
    assert.ok("sync" in b.store, "B is on PostgreSQL");
    await b.store.sync();
    workerB.kick();
    assert.equal(workerB.busy, 1, "B took the document over");
    await within(workerB.drain(), { ms: 60_000, what: "B's reading" });
    // A finishes now: its result is refused, and only then does it learn of B's claim.
    gate.resolve();
    await within(workerA.drain(), { ms: 60_000, what: "A's end" });
    await storeA.sync();
    // B renews its lease while it reads (every 20 s: a slow machine's reading can take that long).
    const types = storeA.readStream(`document-${id}`).map((e) => e.type)
      .filter((type) => type !== "ProcessingLeaseRenewed");
    assert.deepEqual(types, [
      "DocumentUploaded",
      "ProcessingStarted",
      "ProcessingStarted",
      "DocumentProcessed",
    ]);
    assert.ok(
      errors.some((line) => line.includes(`The processing of ${id} by serve-a was taken over`)),
      errors.join("\n"),
    );
    assert.ok(!errors.some((line) => /kept changing/.test(line)), errors.join("\n"));
  } finally {
    gate.resolve();
    await workerA.stop();
    await workerB.stop();
    console.error = consoleError;
    await pool.close();
    await a.close();
    await b.close();
  }
});

Deno.test("leases: a document moved to another folder while it is read still gets its result, once", async () => {
  await using t = await tempApp();
  const app = t.app;
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = await createFolder(app, { personId: ava.person_id, parentId: null, name: "Notes" }, "t");
  const bytes = await Deno.readFile(`${CORPUS_DIR}/pdf/japanese-tex-notes.pdf`);
  const doc = await recordUpload(app, {
    personId: ava.person_id,
    folderId: null,
    name: "notes.pdf",
    sha256: await app.blobs.write(bytes),
    size: bytes.length,
    type: "pdf",
    preset: "basic",
  }, "t");
  const pool = createExtractionPool({ concurrency: 1 });
  const gate = Promise.withResolvers<void>();
  const started = Promise.withResolvers<void>();
  const stalled: Extractor = {
    async extract(data, name) {
      started.resolve();
      await gate.promise;
      return await pool.extract(data, name);
    },
  };
  const worker = new ProcessingWorker(app, stalled, { workerId: "serve", leaseMs: 60_000 });
  try {
    worker.kick();
    await within(started.promise, { ms: 30_000, what: "the reading of the upload" });
    // The person moves it meanwhile: an event the lease does not end with, between its claim and its result.
    await moveDocument(app, {
      personId: ava.person_id,
      documentId: doc.document_id,
      folderId: folder.folder_id,
    }, "t");
    gate.resolve();
    await within(worker.drain(), { ms: 60_000, what: "the reading's end" });
  } finally {
    gate.resolve();
    await worker.stop();
    await pool.close();
  }
  const types = app.store.readStream(`document-${doc.document_id}`).map((e) => e.type)
    .filter((type) => type !== "ProcessingLeaseRenewed");
  assert.deepEqual(types, ["DocumentUploaded", "ProcessingStarted", "DocumentMoved", "DocumentProcessed"]);
  const row = getDocument(app.db, doc.document_id)!;
  assert.deepEqual([row.status, row.folder_id], ["searchable", folder.folder_id]);
});
