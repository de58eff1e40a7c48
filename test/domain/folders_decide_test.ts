/**
 * The folder rules as specifications, without a database or a clock: given
 * the catalogue rows a command's caller loads, when the command is decided,
 * then these appends, or this refusal.
 */
import assert from "node:assert/strict";
import type { Folder } from "../../projections/catalogue.ts";
import {
  decideCreateFolder,
  decideDeleteFolder,
  decideMoveFolder,
  decideRenameFolder,
  type DeleteFolderState,
  takeBackCreation,
  takeBackMove,
  takeBackRename,
} from "../../src/domain/folders_decide.ts";

const metadata = { now: new Date("2026-03-01T09:30:00.000Z"), actor: "person-ava" };
const meta = { time: "2026-03-01T09:30:00.000Z", actor: "person-ava" };

function folder(folder_id: string, name: string, parent?: Folder, person_id = "ava"): Folder {
  return {
    folder_id,
    person_id,
    parent_id: parent?.folder_id ?? null,
    name,
    path: parent ? `${parent.path}/${name}` : name,
  };
}

const energy = folder("F-energy", "Energy");
const basic = folder("F-basic", "Basic", energy);
const deep = folder("F-2026", "2026", basic);
const bens = folder("F-ben", "Ben's", undefined, "ben");

Deno.test("create: given a free name in the person's folder, then one FolderCreated on a new stream", () => {
  assert.deepEqual(
    decideCreateFolder(
      { folderId: "F-new", personId: "ava", parentId: energy.folder_id, name: "Reports", metadata },
      { parent: energy, holder: undefined },
    ),
    [{
      stream: "folder-F-new",
      events: [{
        type: "FolderCreated",
        data: { folder_id: "F-new", person_id: "ava", parent_id: "F-energy", name: "Reports" },
        metadata: meta,
      }],
      expectedVersion: "no_stream",
    }],
  );
  assert.equal(
    decideCreateFolder(
      { folderId: "F-top", personId: "ava", parentId: null, name: "Energy 2", metadata },
      { parent: undefined, holder: undefined },
    )[0]!.events[0]!.type,
    "FolderCreated",
  );
});

Deno.test("create: given a sibling of that name, then refused; a bad name is refused before the parent is looked at", () => {
  const create =
    (name: string, parentId: string | null, state: Parameters<typeof decideCreateFolder>[1]) => () =>
      decideCreateFolder({ folderId: "F-new", personId: "ava", parentId, name, metadata }, state);
  assert.throws(create("Basic", energy.folder_id, { parent: energy, holder: basic }), {
    code: "conflict",
    message: 'A folder named "Basic" already exists there',
  });
  assert.throws(create("Reports", "F-gone", { parent: undefined, holder: undefined }), {
    code: "not_found",
    message: 'No folder with id "F-gone"',
  });
  assert.throws(create("Reports", bens.folder_id, { parent: bens, holder: undefined }), {
    code: "not_found",
    message: 'No folder with id "F-ben"',
  }, "another person's folder looks missing");
  assert.throws(create("a/b", "F-gone", { parent: undefined, holder: undefined }), {
    code: "invalid",
    message: 'Folder name "a/b" cannot contain "/"',
  });
  assert.throws(create(" Energy", null, { parent: undefined, holder: undefined }), {
    message: 'Folder name " Energy" cannot start or end with spaces',
  });
  assert.throws(create("x".repeat(201), null, { parent: undefined, holder: undefined }), {
    message: "Folder name is too long: at most 200 characters, got 201",
  });
});

Deno.test("rename: given a free name, then FolderRenamed; the same name decides nothing; a sibling's name is refused", () => {
  const rename = (name: string, holder?: Folder) =>
    decideRenameFolder({ personId: "ava", folderId: basic.folder_id, name, metadata }, {
      folder: basic,
      holder,
    });
  assert.deepEqual(rename("Advanced"), [{
    stream: "folder-F-basic",
    events: [{ type: "FolderRenamed", data: { folder_id: "F-basic", name: "Advanced" }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
  assert.deepEqual(rename("Basic"), []);
  assert.throws(() => rename("Standard", folder("F-std", "Standard", energy)), {
    code: "conflict",
    message: 'A folder named "Standard" already exists there',
  });
  assert.throws(
    () =>
      decideRenameFolder({ personId: "ava", folderId: "F-ben", name: "x", metadata }, {
        folder: bens,
        holder: undefined,
      }),
    { code: "not_found", message: 'No folder with id "F-ben"' },
  );
  assert.throws(() => rename(".."), { code: "invalid", message: 'Folder name ".." is not allowed' });
});

Deno.test("move: given a free place, then FolderMoved; into itself or below is refused; where it is decides nothing", () => {
  const move = (parentId: string | null, state: Partial<Parameters<typeof decideMoveFolder>[1]> = {}) =>
    decideMoveFolder({ personId: "ava", folderId: basic.folder_id, parentId, metadata }, {
      folder: basic,
      parent: undefined,
      parentInside: false,
      holder: undefined,
      ...state,
    });
  assert.deepEqual(move(null), [{
    stream: "folder-F-basic",
    events: [{ type: "FolderMoved", data: { folder_id: "F-basic", parent_id: null }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
  assert.deepEqual(move(energy.folder_id, { parent: energy }), [], "already there");
  assert.throws(() => move(deep.folder_id, { parent: deep, parentInside: true }), {
    code: "invalid",
    message: 'Cannot move "Basic" into itself or a folder inside it',
  });
  assert.throws(() => move(basic.folder_id, { parent: basic, parentInside: true }), {
    message: 'Cannot move "Basic" into itself or a folder inside it',
  });
  assert.throws(() => move(null, { holder: folder("F-b2", "Basic") }), {
    code: "conflict",
    message: 'A folder named "Basic" already exists there',
  });
  assert.throws(() => move(bens.folder_id, { parent: bens }), {
    code: "not_found",
    message: 'No folder with id "F-ben"',
  });
  assert.throws(() => move("F-gone"), { code: "not_found", message: 'No folder with id "F-gone"' });
});

Deno.test("delete: given a folder that holds something, then refused unless recursive, which deletes documents, then folders deepest first", () => {
  const state: DeleteFolderState = {
    folder: energy,
    holdsAnything: true,
    folders: [energy, deep, basic, folder("F-aaa", "Aaa", energy)],
    documentIds: ["D1", "D2"],
  };
  const del = (recursive: boolean, given = state) =>
    decideDeleteFolder({ personId: "ava", folderId: energy.folder_id, recursive, metadata }, given);
  assert.throws(() => del(false), {
    code: "conflict",
    message: 'Folder "Energy" is not empty: delete it recursively to delete what it holds',
  });
  const appends = del(true);
  assert.deepEqual(appends.map((a) => a.stream), [
    "document-D1",
    "document-D2",
    "folder-F-2026",
    "folder-F-aaa",
    "folder-F-basic",
    "folder-F-energy",
  ]);
  assert.deepEqual(appends[0], {
    stream: "document-D1",
    events: [{ type: "DocumentDeleted", data: { document_id: "D1" }, metadata: meta }],
  });
  assert.deepEqual(appends[5], {
    stream: "folder-F-energy",
    events: [{ type: "FolderDeleted", data: { folder_id: "F-energy" }, metadata: meta }],
  });
  assert.deepEqual(
    del(false, { folder: deep, holdsAnything: false, folders: [deep], documentIds: [] }).map((a) => a.stream),
    ["folder-F-2026"],
  );
  assert.throws(() => del(true, { ...state, folder: undefined }), { code: "not_found" });
});

Deno.test("take-backs: a creation is deleted; a rename and a move go back to what the folder had, if nothing changed since", () => {
  assert.deepEqual(takeBackCreation("F-new", metadata), {
    stream: "folder-F-new",
    events: [{ type: "FolderDeleted", data: { folder_id: "F-new" }, metadata: meta }],
    expectedVersion: "stream_exists",
  });
  assert.deepEqual(takeBackRename(basic, 3, metadata), {
    stream: "folder-F-basic",
    events: [{ type: "FolderRenamed", data: { folder_id: "F-basic", name: "Basic" }, metadata: meta }],
    expectedVersion: 3,
  });
  assert.deepEqual(takeBackMove(basic, 4, metadata), {
    stream: "folder-F-basic",
    events: [{ type: "FolderMoved", data: { folder_id: "F-basic", parent_id: "F-energy" }, metadata: meta }],
    expectedVersion: 4,
  });
});
