/**
 * A folder's name is unique among its siblings, also when two creations,
 * renames or moves to one name happen at the same moment. In one process
 * (two requests) they take turns, so the later one is refused before anything
 * is appended. Across processes (the CLI beside `serve`, two replicas: see
 * test/e2e/postgres_names_test.ts; here, apps opened beside each other on one
 * data directory) both pass the check: the first in log order keeps the name
 * and the later ones are taken back. Two moves at once that would put two
 * folders inside each other keep the first and take back the second (applying
 * the pair stopped the projections for good before: "Maximum call stack size
 * exceeded").
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { createFolder, ensureFolderPath, moveFolder, renameFolder } from "../../src/domain/folders.ts";
import { addPerson } from "../../src/domain/people.ts";
import { type Folder, listFolders } from "../../projections/catalogue.ts";
import type { SergoApp } from "../../src/app.ts";
import { testServer } from "../http/_server.ts";
import { appsBeside } from "../helpers/apps_beside.ts";
import { runCli, tempApp } from "../helpers/temp.ts";

const TAKEN = (name: string) => `A folder named "${name}" already exists there`;

function refusals(results: PromiseSettledResult<unknown>[]): string[] {
  return results.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []);
}

/**
 * Holds `app`'s appends until `first` has settled, so that its command checks
 * at the same moment as `first`'s but is the later one in the log (the slower
 * of two processes).
 */
function writesAfter(app: SergoApp, first: Promise<unknown>): void {
  const append = app.append.bind(app);
  app.append = async (...args) => {
    await first.catch(() => {});
    return await append(...args);
  };
}

function paths(folders: Folder[]): string[] {
  return folders.map((folder) => folder.path).sort();
}

Deno.test("five creations of one folder name in one place at the same moment, in five processes, leave one folder; the other four are refused", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 4);
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const parent = await createFolder(
    server.app,
    { personId: ava.person_id, parentId: null, name: "Отчёты" },
    "t",
  );
  const create = (personId: string, parentId: string | null, app: SergoApp = server.app) =>
    createFolder(app, { personId, parentId, name: "2026 年度" }, "test");
  for (const app of beside.apps) app.catchUp();
  const results = await Promise.allSettled(
    [server.app, ...beside.apps].map((app) => create(ava.person_id, parent.folder_id, app)),
  );
  server.app.catchUp();
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(refusals(results), Array(4).fill(TAKEN("2026 年度")));
  const created = server.app.store.readFrom(0, 1000).filter((e) => e.type === "FolderCreated").length;
  assert.equal(created, 6, "all five passed the check before any was appended: the race happened");
  const kept = listFolders(server.app.db, ava.person_id);
  assert.deepEqual(paths(kept), ["Отчёты", "Отчёты/2026 年度"]);
  const won = results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<Folder>;
  assert.equal(kept.find((f) => f.name === "2026 年度")!.folder_id, won.value.folder_id);
  // The same name elsewhere, or another person's, is its own.
  await create(ava.person_id, null);
  await create(ben.person_id, null);
  assert.deepEqual(paths(listFolders(server.app.db, ben.person_id)), ["2026 年度"]);
  await assert.rejects(create(ava.person_id, parent.folder_id), { message: TAKEN("2026 年度") });
});

Deno.test("five creations of one folder name at the same moment in one process: one is made, four are refused before anything is appended", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const results = await Promise.allSettled(
    [1, 2, 3, 4, 5].map(() =>
      createFolder(t.app, { personId: ava.person_id, parentId: null, name: "Reports" }, "test")
    ),
  );
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(refusals(results), Array(4).fill(TAKEN("Reports")));
  const types = t.app.store.readFrom(0, 1000).map((e) => e.type);
  assert.deepEqual(
    types,
    ["PersonAdded", "FolderCreated"],
    "no refused creation is recorded, nor taken back",
  );
  // Renames and moves of one person's folders take turns too.
  const a = await createFolder(t.app, { personId: ava.person_id, parentId: null, name: "A" }, "t");
  const b = await createFolder(t.app, { personId: ava.person_id, parentId: null, name: "B" }, "t");
  const renames = await Promise.allSettled(
    [a, b].map((f) =>
      renameFolder(t.app, { personId: ava.person_id, folderId: f.folder_id, name: "shared" }, "t")
    ),
  );
  assert.deepEqual(refusals(renames), [TAKEN("shared")]);
  const moves = await Promise.allSettled([
    moveFolder(t.app, { personId: ava.person_id, folderId: a.folder_id, parentId: b.folder_id }, "t"),
    moveFolder(t.app, { personId: ava.person_id, folderId: b.folder_id, parentId: a.folder_id }, "t"),
  ]);
  assert.equal(refusals(moves).length, 1);
  const after = t.app.store.readFrom(0, 1000).map((e) => e.type).slice(types.length);
  assert.deepEqual(after, ["FolderCreated", "FolderCreated", "FolderRenamed", "FolderMoved"]);
});

Deno.test("three makings of one folder path at the same moment end in the same folders", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const made = await Promise.all(
    [1, 2, 3].map(() =>
      ensureFolderPath(server.app, { personId: ava.person_id, path: "Energy/Basic/2026" }, "t")
    ),
  );
  assert.equal(new Set(made.map((folder) => folder.folder_id)).size, 1);
  assert.deepEqual(paths(listFolders(server.app.db, ava.person_id)), [
    "Energy",
    "Energy/Basic",
    "Energy/Basic/2026",
  ]);
  assert.equal(made[0]!.path, "Energy/Basic/2026");
});

Deno.test("two renames to one name at the same moment in two processes: one folder gets it, the other keeps its name and is refused", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 1);
  const other = beside.apps[0]!;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = (name: string) =>
    createFolder(server.app, { personId: ava.person_id, parentId: null, name }, "t");
  const first = await folder("first");
  const second = await folder("second");
  other.catchUp();
  const results = await Promise.allSettled(
    [[first, server.app], [second, other]].map(([f, app]) =>
      renameFolder(
        app as SergoApp,
        { personId: ava.person_id, folderId: (f as Folder).folder_id, name: "shared" },
        "t",
      )
    ),
  );
  server.app.catchUp();
  assert.deepEqual(refusals(results), [TAKEN("shared")]);
  assert.deepEqual(
    paths(listFolders(server.app.db, ava.person_id)),
    results[0]!.status === "fulfilled" ? ["second", "shared"] : ["first", "shared"],
  );

  // A creation and a rename to one name at the same moment.
  const third = await folder("third");
  other.catchUp();
  const race = await Promise.allSettled([
    renameFolder(server.app, { personId: ava.person_id, folderId: third.folder_id, name: "fresh" }, "t"),
    createFolder(other, { personId: ava.person_id, parentId: null, name: "fresh" }, "t"),
  ]);
  server.app.catchUp();
  assert.deepEqual(refusals(race), [TAKEN("fresh")]);
  assert.equal(listFolders(server.app.db, ava.person_id).filter((f) => f.name === "fresh").length, 1);
});

Deno.test("two folders of one name moved into one folder at the same moment in two processes: one moves, the other stays and is refused", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 1);
  const other = beside.apps[0]!;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = (name: string, parentId: string | null = null) =>
    createFolder(server.app, { personId: ava.person_id, parentId, name }, "t");
  const target = await folder("Archive");
  const a = await folder("Reports", (await folder("A")).folder_id);
  const b = await folder("Reports", (await folder("B")).folder_id);
  other.catchUp();
  const results = await Promise.allSettled(
    [[a, server.app], [b, other]].map(([f, app]) =>
      moveFolder(
        app as SergoApp,
        { personId: ava.person_id, folderId: (f as Folder).folder_id, parentId: target.folder_id },
        "t",
      )
    ),
  );
  server.app.catchUp();
  assert.deepEqual(refusals(results), [TAKEN("Reports")]);
  assert.deepEqual(
    paths(listFolders(server.app.db, ava.person_id)),
    results[0]!.status === "fulfilled"
      ? ["A", "Archive", "Archive/Reports", "B", "B/Reports"]
      : ["A", "A/Reports", "Archive", "Archive/Reports", "B"],
  );
});

Deno.test("two moves at once in two processes that would put two folders inside each other: the first is made, the second refused, and the projections go on and replay", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 1);
  const other = beside.apps[0]!;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = (name: string, parentId: string | null = null) =>
    createFolder(server.app, { personId: ava.person_id, parentId, name }, "t");
  const a = await folder("Alpha");
  const b = await folder("Beta");
  await folder("inside Beta", b.folder_id);
  other.catchUp();
  const firstMove = moveFolder(
    server.app,
    { personId: ava.person_id, folderId: a.folder_id, parentId: b.folder_id },
    "t",
  );
  writesAfter(other, firstMove);
  const results = await Promise.allSettled([
    firstMove,
    moveFolder(other, { personId: ava.person_id, folderId: b.folder_id, parentId: a.folder_id }, "t"),
  ]);
  server.app.catchUp();
  assert.equal(server.app.projector.failure, null);
  assert.equal(other.projector.failure, null);
  assert.equal(results[0]!.status, "fulfilled");
  assert.deepEqual(refusals(results), ['Cannot move "Beta" into itself or a folder inside it']);
  assert.deepEqual(paths(listFolders(server.app.db, ava.person_id)), [
    "Beta",
    "Beta/Alpha",
    "Beta/inside Beta",
  ]);
  // The next command works, and a replay of the log gives the same folders.
  await folder("after");
  const replay = await runCli(["replay", "--data", server.dir]);
  assert.equal(replay.code, 0, replay.stderr);
  const db = new DatabaseSync(join(server.dir, "projections.db"), { readOnly: true });
  try {
    assert.deepEqual(paths(listFolders(db, ava.person_id)), [
      "Beta",
      "Beta/Alpha",
      "Beta/inside Beta",
      "after",
    ]);
  } finally {
    db.close();
  }
});

Deno.test("the CLI beside the server: two `folder add` processes of one path at once make one folder tree; both print it", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  // The test holds the log's write lock while both processes start, so both look for the folder before
  // either appends (their appends wait for the lock, up to the store's 10 s busy timeout).
  const lock = new DatabaseSync(join(server.dir, "events.db"));
  lock.exec("BEGIN IMMEDIATE");
  const running = Promise.all(
    [1, 2].map(() =>
      runCli(["folder", "add", "--person", "ava@example.com", "Contracts/2026", "--data", server.dir])
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 5000));
  lock.exec("COMMIT");
  lock.close();
  const clis = await running;
  assert.deepEqual(clis.map((cli) => cli.code), [0, 0], clis.map((cli) => cli.stderr).join("\n"));
  assert.equal(clis[0]!.stdout, clis[1]!.stdout);
  assert.match(clis[0]!.stdout, /^Ava Bennett's documents\/Contracts\/2026 \(id [\w-]+\)\n$/);
  server.app.catchUp();
  assert.deepEqual(paths(listFolders(server.app.db, ava.person_id)), ["Contracts", "Contracts/2026"]);
});
