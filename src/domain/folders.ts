/**
 * Commands on folders: create (with parents), rename, move, delete.
 *
 * Folders nest; names are unique among siblings; rename and move keep ids,
 * so keys that read a folder keep reading it.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { type AppendResult, ConcurrencyError } from "../../events/store.ts";
import {
  documentIdsInFolders,
  expandFolders,
  type Folder,
  folderHoldsAnything,
  getChildFolders,
  getFolder,
  getFolderByPath,
} from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { appendDecided, commandMetadata } from "./_append.ts";
import type { Append } from "./decision.ts";
import { DomainError } from "./errors.ts";
import {
  decideCreateFolder,
  decideDeleteFolder,
  decideMoveFolder,
  decideRenameFolder,
  intoItself,
  nameTaken,
  ownFolder,
  takeBackCreation,
  takeBackMove,
  takeBackRename,
} from "./folders_decide.ts";
import { newId } from "./ids.ts";
import { oneAtATimeIn } from "./locks.ts";
import { splitFolderPath } from "./rules.ts";

/** Finds a person's folder by id; another person's folder looks exactly like a missing one. */
export function requireFolder(db: DatabaseSync, personId: string, folderId: string): Folder {
  return ownFolder(personId, folderId, getFolder(db, folderId));
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
  return await oneAtATimeIn(app, `folders/${input.personId}`, async () => {
    const existing = childFolder(app, input.personId, input.parentId, input.name);
    if (existing) return { folder: existing, made: false };
    const folderId = newId();
    await appendDecided(
      app,
      decideCreateFolder({ folderId, ...input, metadata: commandMetadata(app, actor) }, {
        parent: input.parentId === null ? undefined : getFolder(app.db, input.parentId),
        holder: undefined,
      }),
    );
    const made = getFolder(app.db, folderId)!;
    if (keepsName(app, made)) return { folder: made, made: true };
    await appendDecided(app, [takeBackCreation(folderId, commandMetadata(app, actor))]);
    const first = childFolder(app, input.personId, input.parentId, input.name);
    if (!first) throw nameTaken(input.name);
    return { folder: first, made: false };
  });
}

/** Creates a folder under `parentId` (null for the root). */
export async function createFolder(
  app: SergoApp,
  input: { personId: string; parentId: string | null; name: string },
  actor: string,
): Promise<Folder> {
  return await oneAtATimeIn(app, `folders/${input.personId}`, async () => {
    const folderId = newId();
    const appends = decideCreateFolder({ folderId, ...input, metadata: commandMetadata(app, actor) }, {
      parent: input.parentId === null ? undefined : getFolder(app.db, input.parentId),
      holder: childFolder(app, input.personId, input.parentId, input.name),
    });
    await appendDecided(app, appends);
    const made = getFolder(app.db, folderId)!;
    if (keepsName(app, made)) return made;
    // Another process made a folder of that name there at the same moment, and was first in the log.
    await appendDecided(app, [takeBackCreation(folderId, commandMetadata(app, actor))]);
    throw nameTaken(made.name);
  });
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
  return await oneAtATimeIn(app, `folders/${input.personId}`, async () => {
    const folder = getFolder(app.db, input.folderId);
    const appends = decideRenameFolder({ ...input, metadata: commandMetadata(app, actor) }, {
      folder,
      holder: folder && childFolder(app, input.personId, folder.parent_id, input.name),
    });
    if (appends.length === 0) return folder!;
    const [{ streamVersion }] = await appendDecided(app, appends) as [AppendResult];
    const renamed = getFolder(app.db, folder!.folder_id);
    const name = input.name;
    if (renamed && renamed.name === name && !keepsName(app, renamed)) {
      // Another folder took the name first: this rename is taken back (unless the folder changed since).
      await takeBack(app, takeBackRename(folder!, streamVersion, commandMetadata(app, actor)));
      throw nameTaken(name);
    }
    return getFolder(app.db, folder!.folder_id)!;
  });
}

/** Makes a take-back's append unless the folder changed since the version it expects. */
async function takeBack(app: SergoApp, append: Append): Promise<void> {
  try {
    await appendDecided(app, [append]);
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
  return await oneAtATimeIn(app, `folders/${input.personId}`, async () => {
    const folder = getFolder(app.db, input.folderId);
    const appends = decideMoveFolder({ ...input, metadata: commandMetadata(app, actor) }, {
      folder,
      parent: input.parentId === null ? undefined : getFolder(app.db, input.parentId),
      parentInside: folder !== undefined && input.parentId !== null &&
        expandFolders(app.db, [folder.folder_id]).includes(input.parentId),
      holder: folder && childFolder(app, input.personId, input.parentId, folder.name),
    });
    if (appends.length === 0) return folder!;
    const [{ events: [moved], streamVersion }] = await appendDecided(app, appends) as [AppendResult];
    const after = getFolder(app.db, folder!.folder_id);
    if (after && after.parent_id === input.parentId) {
      const cycle = closedCycle(app, folder!.folder_id, moved!.position);
      if (cycle || !keepsName(app, after)) {
        await takeBack(app, takeBackMove(folder!, streamVersion, commandMetadata(app, actor)));
        throw cycle ? intoItself(folder!.name) : nameTaken(folder!.name);
      }
    }
    return getFolder(app.db, folder!.folder_id)!;
  });
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
  const folder = getFolder(app.db, input.folderId);
  const folderIds = folder ? expandFolders(app.db, [folder.folder_id]) : [];
  await appendDecided(
    app,
    decideDeleteFolder({ ...input, metadata: commandMetadata(app, actor) }, {
      folder,
      holdsAnything: folder !== undefined && folderHoldsAnything(app.db, folder.folder_id),
      folders: folderIds.map((id) => getFolder(app.db, id)!),
      documentIds: documentIdsInFolders(app.db, folderIds),
    }),
  );
}
