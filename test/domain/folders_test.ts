import assert from "node:assert/strict";
import { getFolder, listFolders } from "../../projections/catalogue.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import {
  createFolder,
  deleteFolder,
  ensureFolderPath,
  moveFolder,
  renameFolder,
} from "../../src/domain/folders.ts";
import { addPerson } from "../../src/domain/people.ts";
import { tempApp } from "../helpers/temp.ts";

Deno.test("folder names: unique among siblings, no slash or control characters, at most 200 characters", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const p = ava.person_id;
  const top = await createFolder(t.app, { personId: p, parentId: null, name: "Energy outlooks" }, "test");
  await assert.rejects(
    createFolder(t.app, { personId: p, parentId: null, name: "Energy outlooks" }, "test"),
    /already exists/,
  );
  await createFolder(t.app, { personId: p, parentId: top.folder_id, name: "Energy outlooks" }, "test"); // not a sibling
  await assert.rejects(
    createFolder(t.app, { personId: p, parentId: null, name: "a/b" }, "test"),
    /cannot contain "\/"/,
  );
  await assert.rejects(
    createFolder(t.app, { personId: p, parentId: null, name: "a\u0007b" }, "test"),
    /control characters/,
  );
  await assert.rejects(
    createFolder(t.app, { personId: p, parentId: null, name: "x".repeat(201) }, "test"),
    /at most 200/,
  );
  await assert.rejects(
    createFolder(t.app, { personId: p, parentId: null, name: "  " }, "test"),
    /cannot be empty/,
  );
  await createFolder(t.app, { personId: p, parentId: null, name: "x".repeat(200) }, "test");
});

Deno.test("rename and move keep ids and re-path everything inside; a folder cannot move into itself", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const p = ava.person_id;
  const basic = await ensureFolderPath(t.app, { personId: p, path: "Energy outlooks/Basic/2023" }, "test");
  const top = listFolders(t.app.db, p).find((f) => f.path === "Energy outlooks")!;
  await renameFolder(t.app, { personId: p, folderId: top.folder_id, name: "Outlooks" }, "test");
  assert.equal(getFolder(t.app.db, basic.folder_id)?.path, "Outlooks/Basic/2023");
  const archive = await createFolder(t.app, { personId: p, parentId: null, name: "Archive" }, "test");
  await moveFolder(t.app, { personId: p, folderId: top.folder_id, parentId: archive.folder_id }, "test");
  assert.equal(getFolder(t.app.db, basic.folder_id)?.path, "Archive/Outlooks/Basic/2023");
  await assert.rejects(
    moveFolder(t.app, { personId: p, folderId: top.folder_id, parentId: basic.folder_id }, "test"),
    /into itself/,
  );
});

Deno.test("deleting a folder that holds anything is refused unless recursive; another person's folder looks missing", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(t.app, { name: "Ben Okafor", email: "ben@example.com" });
  const folder = await ensureFolderPath(t.app, { personId: ava.person_id, path: "A/B" }, "test");
  await recordUpload(t.app, {
    personId: ava.person_id,
    folderId: folder.folder_id,
    name: "x.txt",
    sha256: "b".repeat(64),
    size: 1,
    type: "txt",
    preset: "none",
  }, "test");
  const a = listFolders(t.app.db, ava.person_id).find((f) => f.path === "A")!;
  await assert.rejects(
    deleteFolder(t.app, { personId: ben.person_id, folderId: a.folder_id, recursive: true }, "test"),
    /No folder with id/,
  );
  await assert.rejects(
    deleteFolder(t.app, { personId: ava.person_id, folderId: a.folder_id, recursive: false }, "test"),
    /is not empty/,
  );
  await deleteFolder(t.app, { personId: ava.person_id, folderId: a.folder_id, recursive: true }, "test");
  assert.deepEqual(listFolders(t.app.db, ava.person_id), []);
  assert.equal((t.app.db.prepare("SELECT count(*) AS n FROM cat_documents").get() as { n: number }).n, 0);
});
