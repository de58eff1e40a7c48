import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { openProjector } from "../../projections/projector.ts";
import {
  getDocument,
  getFolderByPath,
  getPersonByEmail,
  listFolders,
  listPeople,
} from "../../projections/catalogue.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openApp } from "../../src/app.ts";
import {
  createFolder,
  deleteFolder,
  ensureFolderPath,
  moveFolder,
  renameFolder,
} from "../../src/domain/folders.ts";
import { changeAgentKey, createAgentKey, deleteAgentKey, rollAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { deleteDocument, moveDocument, recordUpload, uploadFile } from "../../src/domain/documents.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const SHA = "a".repeat(64);

Deno.test("replay of a mixed workload gives the same digest as the live projections", async () => {
  await using dir = await tempDir();
  const app = await openApp(dir.path);
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(app, { name: "Ben Okafor", email: "ben@example.com" });
  const basic = await ensureFolderPath(
    app,
    { personId: ava.person_id, path: "Energy outlooks/Basic" },
    "test",
  );
  const other = await createFolder(app, { personId: ava.person_id, parentId: null, name: "Other" }, "test");
  await renameFolder(app, { personId: ava.person_id, folderId: other.folder_id, name: "Archive" }, "test");
  await moveFolder(
    app,
    { personId: ava.person_id, folderId: other.folder_id, parentId: basic.parent_id },
    "test",
  );
  await ensureFolderPath(app, { personId: ben.person_id, path: "Contracts" }, "test");
  // A real deck, read by the processing worker (its marked and image-only slides reach every projection).
  const tempPath = await Deno.makeTempFile();
  await Deno.copyFile(`${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`, tempPath);
  const doc = await uploadFile(
    app,
    { personId: ava.person_id, folderId: basic.folder_id, name: "deck.pptx", tempPath },
    "test",
  );
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(app, pool, { workerId: "test", concurrency: 1 });
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
  }
  assert.equal(getDocument(app.db, doc.document_id)?.status, "searchable");
  const doc2 = await recordUpload(app, {
    personId: ava.person_id,
    folderId: null,
    name: "notes.txt",
    sha256: SHA,
    size: 10,
    type: "txt",
    preset: "none",
  }, "test");
  await moveDocument(app, {
    personId: ava.person_id,
    documentId: doc2.document_id,
    folderId: other.folder_id,
  }, "test");
  const { key } = await createAgentKey(app, {
    personId: ava.person_id,
    name: "energy-outlooks",
    description: "Decks",
    canRead: { folders: [basic.folder_id], documents: [] },
  }, "test");
  await rollAgentKey(app, { personId: ava.person_id, keyId: key.key_id, grace: "1h" }, "test");
  await changeAgentKey(app, { personId: ava.person_id, keyId: key.key_id, description: "EIA decks" }, "test");
  const { key: key2 } = await createAgentKey(app, {
    personId: ava.person_id,
    name: "scratch",
    description: "",
    canRead: { folders: [], documents: [doc.document_id] },
  }, "test");
  await deleteAgentKey(app, { personId: ava.person_id, keyId: key2.key_id }, "test");
  await deleteDocument(app, { personId: ava.person_id, documentId: doc2.document_id }, "test");
  await deleteFolder(app, { personId: ava.person_id, folderId: other.folder_id, recursive: true }, "test");
  const live = projectionDigest(app.db, ALL_PROJECTIONS);
  assert.equal(
    listFolders(app.db, ava.person_id).map((f) => f.path).join("|"),
    "Energy outlooks|Energy outlooks/Basic",
  );
  await app.close();

  const replay = await runCli(["replay", "--data", dir.path]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(replay.stdout.trim(), live);
  const digest = await runCli(["projections", "digest", "--data", dir.path]);
  assert.equal(digest.stdout.trim(), live);

  // Projections are disposable: delete them and the next open rebuilds the same read model.
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.remove(join(dir.path, `projections.db${suffix}`)).catch(() => {});
  }
  const rebuilt = await openApp(dir.path);
  assert.equal(projectionDigest(rebuilt.db, ALL_PROJECTIONS), live);
  await rebuilt.close();
});

Deno.test("crash safety: after SIGKILL mid-append the chain verifies and projections hold exactly the committed events", async () => {
  await using dir = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      new URL("../helpers/append_loop.ts", import.meta.url).pathname,
      dir.path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read(); // "ready"
  await new Promise((resolve) => setTimeout(resolve, 700));
  child.kill("SIGKILL");
  await child.status;
  reader.releaseLock();
  await child.stdout.cancel().catch(() => {});
  await child.stderr.cancel().catch(() => {});

  const store = openSqliteStore(join(dir.path, "events.db"));
  const verdict = store.verify();
  assert.ok(verdict.ok, JSON.stringify(verdict));
  const events = store.readFrom(0, 1_000_000);
  await store.close();
  assert.ok(events.length > 10, `the child appended only ${events.length} events`);

  const app = await openApp(dir.path);
  assert.equal(app.projector.position, verdict.head.position);
  const people = events.filter((e) => e.type === "PersonAdded").length;
  const folders = events.filter((e) => e.type === "FolderCreated").length;
  assert.equal(listPeople(app.db).length, people);
  const folderRows = (app.db.prepare("SELECT count(*) AS n FROM cat_folders").get() as { n: number }).n;
  assert.equal(folderRows, folders);
  const live = projectionDigest(app.db, ALL_PROJECTIONS);
  await app.close();
  const replay = await runCli(["replay", "--data", dir.path]);
  assert.equal(replay.stdout.trim(), live);
});

Deno.test("events appended by another process reach a running app within one second", async () => {
  await using dir = await tempDir();
  const app = await openApp(dir.path);
  app.watch(250);
  try {
    const added = await runCli([
      "person",
      "add",
      "--name",
      "Cleo Park",
      "--email",
      "cleo@example.com",
      "--data",
      dir.path,
    ]);
    assert.equal(added.code, 0, added.stderr);
    const folder = await runCli([
      "folder",
      "add",
      "--person",
      "cleo@example.com",
      "Reports/2026",
      "--data",
      dir.path,
    ]);
    assert.equal(folder.code, 0, folder.stderr);
    const start = Date.now();
    while (!getPersonByEmail(app.db, "cleo@example.com") && Date.now() - start < 1000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const person = getPersonByEmail(app.db, "cleo@example.com");
    assert.ok(person, "the running app did not see the person within one second");
    assert.ok(getFolderByPath(app.db, person.person_id, "Reports/2026"));
  } finally {
    await app.close();
  }
});

Deno.test("the projections database's page cache grows with its file, from SQLite's 2 MiB, a fortieth of it", async () => {
  await using dir = await tempDir();
  {
    const path = join(dir.path, "projections.db");
    const small = openProjector(path, []);
    const cacheOf = (db: DatabaseSync) =>
      (db.prepare("PRAGMA cache_size").get() as { cache_size: number }).cache_size;
    assert.equal(cacheOf(small.db), -2048);
    // 200 MB of rows: a fortieth is 5,000 KiB (and the store's own pages a little more).
    small.db.exec(
      `CREATE TABLE filler (b BLOB);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
       INSERT INTO filler SELECT zeroblob(1000000) FROM n`,
    );
    small.close();
    const grown = openProjector(path, []);
    try {
      const kib = -cacheOf(grown.db);
      assert.ok(kib >= 4_880 && kib <= 4_950, `cache ${kib} KiB`);
    } finally {
      grown.close();
    }
  }
});
