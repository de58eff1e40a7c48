import assert from "node:assert/strict";
import { claimableProcessing, copiesReady, getDocument } from "../../projections/catalogue.ts";
import { searchPassages } from "../../src/search/lexical.ts";
import { recordUpload, uploadFile } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker, withoutNul } from "../../src/workers/processing_worker.ts";
import type { SergoApp } from "../../src/app.ts";
import { TASK_PERMISSIONS, tempApp } from "../helpers/temp.ts";
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

/**
 * Runs `main.ts` with `args` on the data directory of `app` and kills it
 * (SIGKILL: no chance to clean up) as soon as the log shows it claimed a
 * document; returns that claim.
 */
async function killedMidJob(
  app: SergoApp,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ documentId: string; worker: string; leaseUntil: string }> {
  const from = app.store.head().position;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, new URL("../../main.ts", import.meta.url).pathname, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      app.catchUp();
      const claim = app.store.readFrom(from, 1000).find((e) => e.type === "ProcessingStarted");
      if (claim?.type === "ProcessingStarted") {
        return {
          documentId: claim.data.document_id,
          worker: claim.data.worker ?? "",
          leaseUntil: claim.data.lease_until ?? "",
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`main.ts ${args[0]} claimed nothing in 120 s`);
  } finally {
    child.kill("SIGKILL");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL", `main.ts ${args[0]} ended by itself: ${await stderr}`);
    app.catchUp();
  }
}

Deno.test("claims of crashed workers: a killed CLI's keeps every worker away until its lease runs out, a killed serve's is serve's to take again at once; oldest first, no more than asked", async () => {
  await using t = await tempApp();
  const email = "ava@example.com";
  const ava = await addPerson(t.app, { name: "Ava Bennett", email });
  // A 400-page PDF: reading it takes seconds, so each process dies in the middle of it.
  const big = `${CORPUS_DIR}/pdf/irs-internal-revenue-manual-2-3-59-400p.pdf`;
  const upload = async (path: string, name = path.split("/").pop()!) => {
    const tempPath = await Deno.makeTempFile();
    await Deno.copyFile(path, tempPath);
    return (await uploadFile(t.app, { personId: ava.person_id, folderId: null, name, tempPath }, "t"))
      .document_id;
  };

  // A 10-minute lease (SERGO_WORK_LEASE_S), so it still runs however long the steps below take on a busy machine.
  const cli = await killedMidJob(t.app, ["upload", "--person", email, "--data", t.dir, big], {
    SERGO_WORK_LEASE_S: "600",
  });
  assert.match(cli.worker, /^cli-\d+$/);
  const fromServe = await upload(big, "read-by-serve.pdf");
  const serve = await killedMidJob(t.app, ["serve"], {
    SERGO_DATA: t.dir,
    SERGO_HOST: "127.0.0.1",
    SERGO_PORT: "0",
  });
  assert.deepEqual([serve.documentId, serve.worker], [fromServe, "serve"]);
  const deck = await upload(`${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`);
  const broken = [
    await upload(`${CORPUS_DIR}/hostile/xxe-external-entity-in-body.docx`),
    await upload(`${CORPUS_DIR}/hostile/xxe-external-entity-in-body.docx`, "again.docx"),
  ];

  const now = new Date();
  const leasesOver = new Date(Math.max(Date.parse(cli.leaseUntil), Date.parse(serve.leaseUntil)) + 1);
  assert.ok(Date.parse(cli.leaseUntil) - now.getTime() > 600_000 / 2, "the CLI's lease still runs");
  const ids = (rows: Array<{ document_id: string }>) => rows.map((row) => row.document_id);
  const claimable = (at: Date, reclaimFor: string | null, limit = 100) =>
    ids(claimableProcessing(t.app.db, { now: at, reclaimFor, limit }));
  assert.deepEqual(claimable(now, null), [deck, ...broken]);
  assert.deepEqual(claimable(now, "serve"), [fromServe, deck, ...broken]);
  assert.deepEqual(claimable(leasesOver, null), [cli.documentId, fromServe, deck, ...broken]);
  // Oldest first, no more than asked for.
  assert.deepEqual(claimable(leasesOver, "serve", 2), [cli.documentId, fromServe]);
  assert.deepEqual(claimable(now, "serve", 1), [fromServe]);

  // Copies wait until their document has been read: two broken Word files, refused by a real worker.
  assert.deepEqual(ids(copiesReady(t.app.db, 100)), []);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(t.app, pool, { workerId: "cli-test", only: new Set(broken) });
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
  }
  for (const id of broken) assert.equal(getDocument(t.app.db, id)?.status, "not_indexed");
  assert.deepEqual(ids(copiesReady(t.app.db, 100)), broken);
  assert.deepEqual(ids(copiesReady(t.app.db, 1)), broken.slice(0, 1));
});
