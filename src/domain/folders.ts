/**
 * Commands on folders: create (with parents), rename, move, delete.
 *
 * Folders nest; names are unique among siblings; rename and move keep ids,
 * so keys that read a folder keep reading it.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { SergoEvent } from "../../events/types.ts";
import { ConcurrencyError } from "../../events/store.ts";
import {
  expandFolders,
  type Folder,
  folderHoldsAnything,
  getChildFolders,
  getFolder,
  getFolderByPath,
} from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { checkFolderName, splitFolderPath } from "./rules.ts";

/** Finds a person's folder by id; another person's folder looks exactly like a missing one. */
export function requireFolder(db: DatabaseSync, personId: string, folderId: string): Folder {
  const folder = getFolder(db, folderId);
  if (!folder || folder.person_id !== personId) {
    throw new DomainError("not_found", `No folder with id "${folderId}"`);
  }
  return folder;
}

/** Finds a person's folder by its path, such as `Energy outlooks/Basic`. */
export function requireFolderPath(db: DatabaseSync, personId: string, path: string): Folder {
  const folder = getFolderByPath(db, personId, splitFolderPath(path).join("/"));
  if (!folder) throw new DomainError("not_found", `No folder "${path}"`);
  return folder;
}

/**
 * Where, in log order, a folder took its place: its last creation, rename or
 * move (each sets its parent and name).
 */
function placedAt(app: SergoApp, folderId: string): number {
  const events = app.store.readStream(`folder-${folderId}`);
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === "FolderCreated" || type === "FolderRenamed" || type === "FolderMoved") {
      return events[i]!.position;
    }
  }
  return Infinity;
}

/** The folder named `name` in `parentId`: the first in log order to take the name if, for a moment, two have it. */
function childFolder(
  app: SergoApp,
  personId: string,
  parentId: string | null,
  name: string,
): Folder | undefined {
  const holders = getChildFolders(app.db, personId, parentId, name);
  if (holders.length <= 1) return holders[0];
  return holders.map((folder) => ({ folder, at: placedAt(app, folder.folder_id) }))
    .sort((a, b) => a.at - b.at)[0]!.folder;
}

/**
 * Whether `folder` (as the projections hold it now) keeps its name in its
 * parent: it is the first of the folders there with that name to have taken
 * it, in log order. The check before an append reads the projections, so two
 * creations, renames or moves to one name at the same moment (two requests,
 * two replicas, or the CLI beside `serve`) can both pass it; after the append
 * the projections hold every event before it, and every process sees the
 * same log order, so exactly the later ones find an earlier holder and give
 * the name back (as agent key names do).
 */
function keepsName(app: SergoApp, folder: Folder): boolean {
  const first = childFolder(app, folder.person_id, folder.parent_id, folder.name);
  return first === undefined || first.folder_id === folder.folder_id;
}

function nameTaken(name: string): DomainError {
  return new DomainError("conflict", `A folder named "${name}" already exists there`);
}

/**
 * Makes a folder `name` in `parentId` unless one is there; returns the one
 * there, which is the one made unless another process made one of that name
 * at the same moment and was first in the log (this one is then taken back).
 */
async function makeChild(
  app: SergoApp,
  input: { personId: string; parentId: string | null; name: string },
  actor: string,
): Promise<{ folder: Folder; made: boolean }> {
  const existing = childFolder(app, input.personId, input.parentId, input.name);
  if (existing) return { folder: existing, made: false };
  const folderId = newId();
  await app.append(`folder-${folderId}`, [{
    type: "FolderCreated",
    data: { folder_id: folderId, person_id: input.personId, parent_id: input.parentId, name: input.name },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  const made = getFolder(app.db, folderId)!;
  if (keepsName(app, made)) return { folder: made, made: true };
  await app.append(`folder-${folderId}`, [{
    type: "FolderDeleted",
    data: { folder_id: folderId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  const first = childFolder(app, input.personId, input.parentId, input.name);
  if (!first) throw nameTaken(input.name);
  return { folder: first, made: false };
}

/** Creates a folder under `parentId` (null for the root). */
export async function createFolder(
  app: SergoApp,
  input: { personId: string; parentId: string | null; name: string },
  actor: string,
): Promise<Folder> {
  const name = checkFolderName(input.name);
  if (input.parentId !== null) requireFolder(app.db, input.personId, input.parentId);
  const { folder, made } = await makeChild(app, { ...input, name }, actor);
  if (!made) throw nameTaken(name);
  return folder;
}

/**
 * Creates a folder path, making the folders that do not exist yet; returns
 * the last one. Two processes making one path at the same moment end in the
 * same folders.
 */
export async function ensureFolderPath(
  app: SergoApp,
  input: { personId: string; path: string },
  actor: string,
): Promise<Folder> {
  let parent: Folder | undefined;
  for (const name of splitFolderPath(input.path)) {
    parent =
      (await makeChild(app, { personId: input.personId, parentId: parent?.folder_id ?? null, name }, actor))
        .folder;
  }
  return parent!;
}

/** Renames a folder; its id stays. */
export async function renameFolder(
  app: SergoApp,
  input: { personId: string; folderId: string; name: string },
  actor: string,
): Promise<Folder> {
  const folder = requireFolder(app.db, input.personId, input.folderId);
  const name = checkFolderName(input.name);
  if (name === folder.name) return folder;
  if (childFolder(app, input.personId, folder.parent_id, name)) throw nameTaken(name);
  const { streamVersion } = await app.append(`folder-${folder.folder_id}`, [{
    type: "FolderRenamed",
    data: { folder_id: folder.folder_id, name },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  const renamed = getFolder(app.db, folder.folder_id);
  if (renamed && renamed.name === name && !keepsName(app, renamed)) {
    // Another folder took the name first: this rename is taken back (unless the folder changed since).
    await takeBack(app, folder.folder_id, streamVersion, {
      type: "FolderRenamed",
      data: { folder_id: folder.folder_id, name: folder.name },
      metadata: app.meta(actor),
    });
    throw nameTaken(name);
  }
  return getFolder(app.db, folder.folder_id)!;
}

/** Appends `event` to the folder's stream if nothing was appended there since `version`. */
async function takeBack(app: SergoApp, folderId: string, version: number, event: SergoEvent): Promise<void> {
  try {
    await app.append(`folder-${folderId}`, [event], { expectedVersion: version });
  } catch (error) {
    // A later change of the folder (another rename or move) replaced this one already.
    if (!(error instanceof ConcurrencyError)) throw error;
  }
}

/**
 * Whether the move at `position` closed a cycle of folders (each inside the
 * next): two moves at once, A into B and B into A, each pass the check before
 * the append. The later of the moves in the cycle is taken back.
 */
function closedCycle(app: SergoApp, folderId: string, position: number): boolean {
  const members: string[] = [];
  let id: string | null = folderId;
  for (;;) {
    const current: Folder | undefined = getFolder(app.db, id);
    if (!current) return false;
    members.push(current.folder_id);
    id = current.parent_id;
    if (id === null) return false;
    if (id === folderId) break;
    if (members.includes(id)) return false; // a cycle this folder is not in: its own mover takes it back
  }
  const parentSetAt = (member: string): number => {
    const events = app.store.readStream(`folder-${member}`);
    for (let i = events.length - 1; i >= 0; i--) {
      const type = events[i]!.type;
      if (type === "FolderCreated" || type === "FolderMoved") return events[i]!.position;
    }
    return -Infinity;
  };
  return Math.max(...members.map(parentSetAt)) === position;
}

/** Moves a folder under another (null for the root); not into itself or its own subfolders. */
export async function moveFolder(
  app: SergoApp,
  input: { personId: string; folderId: string; parentId: string | null },
  actor: string,
): Promise<Folder> {
  const folder = requireFolder(app.db, input.personId, input.folderId);
  const intoItself = () =>
    new DomainError("invalid", `Cannot move "${folder.name}" into itself or a folder inside it`);
  if (input.parentId !== null) {
    requireFolder(app.db, input.personId, input.parentId);
    if (expandFolders(app.db, [folder.folder_id]).includes(input.parentId)) throw intoItself();
  }
  if (folder.parent_id === input.parentId) return folder;
  if (childFolder(app, input.personId, input.parentId, folder.name)) throw nameTaken(folder.name);
  const { events: [moved], streamVersion } = await app.append(`folder-${folder.folder_id}`, [{
    type: "FolderMoved",
    data: { folder_id: folder.folder_id, parent_id: input.parentId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  const after = getFolder(app.db, folder.folder_id);
  if (after && after.parent_id === input.parentId) {
    const cycle = closedCycle(app, folder.folder_id, moved!.position);
    if (cycle || !keepsName(app, after)) {
      await takeBack(app, folder.folder_id, streamVersion, {
        type: "FolderMoved",
        data: { folder_id: folder.folder_id, parent_id: folder.parent_id },
        metadata: app.meta(actor),
      });
      throw cycle ? intoItself() : nameTaken(folder.name);
    }
  }
  return getFolder(app.db, folder.folder_id)!;
}

/**
 * Deletes a folder. One that holds anything is refused unless `recursive`,
 * which deletes every document and folder inside it first.
 */
export async function deleteFolder(
  app: SergoApp,
  input: { personId: string; folderId: string; recursive: boolean },
  actor: string,
): Promise<void> {
  const folder = requireFolder(app.db, input.personId, input.folderId);
  if (!input.recursive && folderHoldsAnything(app.db, folder.folder_id)) {
    throw new DomainError(
      "conflict",
      `Folder "${folder.name}" is not empty: delete it recursively to delete what it holds`,
    );
  }
  const folderIds = expandFolders(app.db, [folder.folder_id]);
  const documents = app.db.prepare(
    "SELECT document_id FROM cat_documents WHERE folder_id IN (SELECT value FROM json_each(?)) ORDER BY document_id",
  ).all(JSON.stringify(folderIds)) as Array<{ document_id: string }>;
  const meta = app.meta(actor);
  for (const doc of documents) {
    await app.append(`document-${doc.document_id}`, [{
      type: "DocumentDeleted",
      data: { document_id: doc.document_id },
      metadata: meta,
    }]);
  }
  // Deepest first, so no folder outlives its parent in the catalogue.
  const ordered = folderIds
    .map((id) => getFolder(app.db, id)!)
    .sort((a, b) =>
      b.path.split("/").length - a.path.split("/").length || a.folder_id.localeCompare(b.folder_id)
    );
  for (const f of ordered) {
    const event: SergoEvent = { type: "FolderDeleted", data: { folder_id: f.folder_id }, metadata: meta };
    await app.append(`folder-${f.folder_id}`, [event]);
  }
}
