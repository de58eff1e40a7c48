/**
 * Work leases across two replicas' apps on one PostgreSQL (each with its own
 * data directory, so its own copy of the log and its own projections): two
 * workers claiming one document at once get it once; a long job's lease is
 * renewed, so the other replica keeps away; and a worker whose lease was
 * taken over (its clock says it still holds it, the other's says it ran out)
 * records nothing when it finally finishes: one result in the log.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { getDocument } from "../../projections/catalogue.ts";
import { openApp, type SergoApp } from "../../src/app.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { type Extractor, ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

const PDF = `${CORPUS_DIR}/pdf/japanese-tex-notes.pdf`;

async function twoReplicas(offsetB: { ms: number }) {
  const db = await testDatabase();
  const dir = await tempDir();
  const a = await openApp(join(dir.path, "a"), { databaseUrl: db.url });
  const b = await openApp(join(dir.path, "b"), {
    databaseUrl: db.url,
    now: () => new Date(Date.now() + offsetB.ms),
  });
  return {
    a,
    b,
    async [Symbol.asyncDispose]() {
      await a.close();
      await b.close();
      await dir[Symbol.asyncDispose]();
      await db[Symbol.asyncDispose]();
    },
  };
}

async function uploadPdf(app: SergoApp): Promise<string> {
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const bytes = await Deno.readFile(PDF);
  const doc = await recordUpload(app, {
    personId: ava.person_id,
    folderId: null,
    name: "notes.pdf",
    sha256: await app.blobs.write(bytes),
    size: bytes.length,
    type: "pdf",
    preset: "basic",
  }, "t");
  return doc.document_id;
}

/** Brings a replica's copy of the log up to the database's head. */
async function sync(app: SergoApp): Promise<void> {
  assert.ok("sync" in app.store, "the app is on PostgreSQL");
  await app.store.sync();
}

/** Waits until `check` holds (the other replica's copy follows by NOTIFY). */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

Deno.test("PostgreSQL leases: two replicas claiming one document at once: one claim wins, it is read once", async () => {
  await using r = await twoReplicas({ ms: 0 });
  const id = await uploadPdf(r.a);
  await until(() => getDocument(r.b.db, id)?.status === "processing", "replica B sees the upload");
  const pool = createExtractionPool({ concurrency: 2 });
  try {
    const a = new ProcessingWorker(r.a, pool, { workerId: "serve-a" });
    const b = new ProcessingWorker(r.b, pool, { workerId: "serve-b" });
    // Both see the same pending document at the same version and claim it in the same turn.
    a.kick();
    b.kick();
    await Promise.all([a.drain(), b.drain()]);
  } finally {
    await pool.close();
  }
  await sync(r.b);
  const types = r.b.store.readStream(`document-${id}`).map((e) => e.type);
  assert.deepEqual(types, ["DocumentUploaded", "ProcessingStarted", "DocumentProcessed"]);
  assert.equal(getDocument(r.b.db, id)?.status, "searchable");
});

Deno.test("PostgreSQL leases: a long job's lease is renewed; once taken over, the first worker's result is dropped", async () => {
  const offsetB = { ms: 0 };
  await using r = await twoReplicas(offsetB);
  const id = await uploadPdf(r.a);
  const stream = `document-${id}`;
  const pool = createExtractionPool({ concurrency: 2 });
  const gate = Promise.withResolvers<void>();
  const started = Promise.withResolvers<void>();
  // Replica A's reading stalls (a long scan, a paused process) until the test lets it go on.
  const stalled: Extractor = {
    async extract(bytes, name) {
      started.resolve();
      await gate.promise;
      return await pool.extract(bytes, name);
    },
  };
  const errors: string[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => errors.push(args.map(String).join(" "));
  const a = new ProcessingWorker(r.a, stalled, { workerId: "serve-a", leaseMs: 3000 });
  const b = new ProcessingWorker(r.b, pool, { workerId: "serve-b", leaseMs: 3000 });
  try {
    a.kick();
    await within(started.promise, { ms: 30_000, what: "replica A's reading of the upload" });
    // Past the first lease's end, B keeps finding nothing to take: A renews every second.
    const deadline = Date.now() + 4500;
    while (Date.now() < deadline) {
      b.kick();
      assert.equal(b.busy, 0, "B took a document whose lease A renews");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await sync(r.b);
    const renewals = r.b.store.readStream(stream).filter((e) => e.type === "ProcessingLeaseRenewed");
    assert.ok(renewals.length >= 3, `${renewals.length} renewals in 4.5 s`);

    // B's clock jumps past A's lease (as if A had stopped renewing): B claims it and reads it.
    offsetB.ms = 60 * 60_000;
    b.kick();
    assert.equal(b.busy, 1);
    await b.drain();
    // A finishes afterwards: its renewal or its result fails the version check, and nothing of it lands.
    gate.resolve();
    await a.drain();
  } finally {
    // A failed check above must fail the test, not leave A's reading stalled (and the replicas' close
    // waiting on it): let A finish before the pool closes.
    gate.resolve();
    await a.drain();
    await b.drain();
    console.error = consoleError;
    await pool.close();
  }
  await sync(r.a);
  const events = r.a.store.readStream(stream);
  const types = events.map((e) => e.type).filter((type) => type !== "ProcessingLeaseRenewed");
  assert.deepEqual(types, [
    "DocumentUploaded",
    "ProcessingStarted",
    "ProcessingStarted",
    "DocumentProcessed",
  ]);
  const claims = events.filter((e) => e.type === "ProcessingStarted");
  assert.deepEqual(claims.map((e) => e.type === "ProcessingStarted" && e.data.worker), [
    "serve-a",
    "serve-b",
  ]);
  // A renewed only before B's claim: once taken over, it appends nothing more.
  const bClaim = claims[1]!.position;
  const byA = events.filter((e) => e.type === "ProcessingLeaseRenewed" && e.data.worker === "serve-a");
  assert.ok(byA.length >= 3 && byA.every((e) => e.position < bClaim));
  assert.ok(
    errors.some((line) => line.includes(`The processing of ${id} by serve-a was taken over`)),
    errors.join("\n"),
  );
  assert.equal(getDocument(r.a.db, id)?.status, "searchable");
});
