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
import {
  expandFolders,
  type Folder,
  folderHoldsAnything,
  getChildFolder,
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

/** Creates a folder under `parentId` (null for the root). */
export async function createFolder(
  app: SergoApp,
  input: { personId: string; parentId: string | null; name: string },
  actor: string,
): Promise<Folder> {
  const name = checkFolderName(input.name);
  if (input.parentId !== null) requireFolder(app.db, input.personId, input.parentId);
  if (getChildFolder(app.db, input.personId, input.parentId, name)) {
    throw new DomainError("conflict", `A folder named "${name}" already exists there`);
  }
  const folderId = newId();
  await app.append(`folder-${folderId}`, [{
    type: "FolderCreated",
    data: { folder_id: folderId, person_id: input.personId, parent_id: input.parentId, name },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  return getFolder(app.db, folderId)!;
}

/** Creates a folder path, making the folders that do not exist yet; returns the last one. */
export async function ensureFolderPath(
  app: SergoApp,
  input: { personId: string; path: string },
  actor: string,
): Promise<Folder> {
  let parent: Folder | undefined;
  for (const name of splitFolderPath(input.path)) {
    const existing = getChildFolder(app.db, input.personId, parent?.folder_id ?? null, name);
    parent = existing ??
      await createFolder(app, { personId: input.personId, parentId: parent?.folder_id ?? null, name }, actor);
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
  if (getChildFolder(app.db, input.personId, folder.parent_id, name)) {
    throw new DomainError("conflict", `A folder named "${name}" already exists there`);
  }
  await app.append(`folder-${folder.folder_id}`, [{
    type: "FolderRenamed",
    data: { folder_id: folder.folder_id, name },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  return getFolder(app.db, folder.folder_id)!;
}

/** Moves a folder under another (null for the root); not into itself or its own subfolders. */
export async function moveFolder(
  app: SergoApp,
  input: { personId: string; folderId: string; parentId: string | null },
  actor: string,
): Promise<Folder> {
  const folder = requireFolder(app.db, input.personId, input.folderId);
  if (input.parentId !== null) {
    requireFolder(app.db, input.personId, input.parentId);
    if (expandFolders(app.db, [folder.folder_id]).includes(input.parentId)) {
      throw new DomainError("invalid", `Cannot move "${folder.name}" into itself or a folder inside it`);
    }
  }
  if (folder.parent_id === input.parentId) return folder;
  if (getChildFolder(app.db, input.personId, input.parentId, folder.name)) {
    throw new DomainError("conflict", `A folder named "${folder.name}" already exists there`);
  }
  await app.append(`folder-${folder.folder_id}`, [{
    type: "FolderMoved",
    data: { folder_id: folder.folder_id, parent_id: input.parentId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
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
