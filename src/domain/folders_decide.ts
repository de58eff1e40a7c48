/**
 * The folder rules as pure deciders: create, rename, move, delete. Each takes
 * the command and the catalogue rows its caller loaded, and returns the
 * appends or refuses with one sentence; nothing here reads a database or a
 * clock.
 *
 * Folders nest; names are unique among siblings; rename and move keep ids,
 * so keys that read a folder keep reading it.
 *
 * @module
 */
import type { Folder } from "../../projections/catalogue.ts";
import type { Append, CommandMetadata } from "./decision.ts";
import { eventMetadata } from "./decision.ts";
import { DomainError } from "./errors.ts";
import { checkFolderName } from "./rules.ts";

/** The folder a person asked for by id; another person's folder looks exactly like a missing one. */
export function ownFolder(personId: string, folderId: string, folder: Folder | undefined): Folder {
  if (!folder || folder.person_id !== personId) {
    throw new DomainError("not_found", `No folder with id "${folderId}"`);
  }
  return folder;
}

/** The refusal of a name a sibling holds. */
export function nameTaken(name: string): DomainError {
  return new DomainError("conflict", `A folder named "${name}" already exists there`);
}

/** The refusal of a move into the folder itself or a folder inside it. */
export function intoItself(name: string): DomainError {
  return new DomainError("invalid", `Cannot move "${name}" into itself or a folder inside it`);
}

/** Make a folder `name` in `parentId` (null for the root), with the new id `folderId`. */
export interface CreateFolder {
  folderId: string;
  personId: string;
  parentId: string | null;
  name: string;
  metadata: CommandMetadata;
}

/** What a creation needs to know. */
export interface CreateFolderState {
  /** The folder `parentId` names, whoever's it is (undefined when missing, or for the root). */
  parent: Folder | undefined;
  /** The folder that holds `name` in that parent now, if any. */
  holder: Folder | undefined;
}

/** Decides a creation: the name must be allowed, the parent the person's, and the name free there. */
export function decideCreateFolder(command: CreateFolder, state: CreateFolderState): Append[] {
  const name = checkFolderName(command.name);
  if (command.parentId !== null) ownFolder(command.personId, command.parentId, state.parent);
  if (state.holder) throw nameTaken(name);
  return [{
    stream: `folder-${command.folderId}`,
    events: [{
      type: "FolderCreated",
      data: { folder_id: command.folderId, person_id: command.personId, parent_id: command.parentId, name },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** Give folder `folderId` the name `name`. */
export interface RenameFolder {
  personId: string;
  folderId: string;
  name: string;
  metadata: CommandMetadata;
}

/** What a rename needs to know. */
export interface RenameFolderState {
  /** The folder, whoever's it is. */
  folder: Folder | undefined;
  /** The folder beside it that holds the new name now, if any. */
  holder: Folder | undefined;
}

/** Decides a rename: nothing when the name is already the folder's; refused when a sibling holds it. */
export function decideRenameFolder(command: RenameFolder, state: RenameFolderState): Append[] {
  const folder = ownFolder(command.personId, command.folderId, state.folder);
  const name = checkFolderName(command.name);
  if (name === folder.name) return [];
  if (state.holder) throw nameTaken(name);
  return [{
    stream: `folder-${folder.folder_id}`,
    events: [{
      type: "FolderRenamed",
      data: { folder_id: folder.folder_id, name },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Put folder `folderId` in `parentId` (null for the root). */
export interface MoveFolder {
  personId: string;
  folderId: string;
  parentId: string | null;
  metadata: CommandMetadata;
}

/** What a move needs to know. */
export interface MoveFolderState {
  /** The folder to move, whoever's it is. */
  folder: Folder | undefined;
  /** The folder `parentId` names, whoever's it is (undefined when missing, or for the root). */
  parent: Folder | undefined;
  /** Whether `parentId` is the folder itself or a folder inside it. */
  parentInside: boolean;
  /** The folder in `parentId` that holds the moved folder's name now, if any. */
  holder: Folder | undefined;
}

/**
 * Decides a move: not into the folder itself or its own subfolders, nothing
 * when it is there already, refused when a folder there holds its name.
 */
export function decideMoveFolder(command: MoveFolder, state: MoveFolderState): Append[] {
  const folder = ownFolder(command.personId, command.folderId, state.folder);
  if (command.parentId !== null) {
    ownFolder(command.personId, command.parentId, state.parent);
    if (state.parentInside) throw intoItself(folder.name);
  }
  if (folder.parent_id === command.parentId) return [];
  if (state.holder) throw nameTaken(folder.name);
  return [{
    stream: `folder-${folder.folder_id}`,
    events: [{
      type: "FolderMoved",
      data: { folder_id: folder.folder_id, parent_id: command.parentId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Delete folder `folderId`; `recursive` deletes what it holds with it. */
export interface DeleteFolder {
  personId: string;
  folderId: string;
  recursive: boolean;
  metadata: CommandMetadata;
}

/** What a deletion needs to know. */
export interface DeleteFolderState {
  /** The folder, whoever's it is. */
  folder: Folder | undefined;
  /** Whether it holds any folder or document. */
  holdsAnything: boolean;
  /** The folder and every folder inside it. */
  folders: Folder[];
  /** The documents in those folders, in the order they are deleted. */
  documentIds: string[];
}

/**
 * Decides a deletion. A folder that holds anything is refused unless
 * `recursive`, which deletes every document inside it, then every folder,
 * deepest first, so no folder outlives its parent in the catalogue.
 */
export function decideDeleteFolder(command: DeleteFolder, state: DeleteFolderState): Append[] {
  const folder = ownFolder(command.personId, command.folderId, state.folder);
  if (!command.recursive && state.holdsAnything) {
    throw new DomainError(
      "conflict",
      `Folder "${folder.name}" is not empty: delete it recursively to delete what it holds`,
    );
  }
  const metadata = eventMetadata(command.metadata);
  const documents: Append[] = state.documentIds.map((documentId) => ({
    stream: `document-${documentId}`,
    events: [{ type: "DocumentDeleted", data: { document_id: documentId }, metadata }],
  }));
  const folders: Append[] = [...state.folders]
    .sort((a, b) =>
      b.path.split("/").length - a.path.split("/").length || a.folder_id.localeCompare(b.folder_id)
    )
    .map((f) => ({
      stream: `folder-${f.folder_id}`,
      events: [{ type: "FolderDeleted", data: { folder_id: f.folder_id }, metadata }],
    }));
  return [...documents, ...folders];
}

/**
 * Takes back a creation that another folder's, first in the log, made a
 * second holder of one name.
 */
export function takeBackCreation(folderId: string, metadata: CommandMetadata): Append {
  return {
    stream: `folder-${folderId}`,
    events: [{ type: "FolderDeleted", data: { folder_id: folderId }, metadata: eventMetadata(metadata) }],
    expectedVersion: "stream_exists",
  };
}

/**
 * Takes back a rename (to the name `before` had) unless the folder changed
 * since the stream's `version`.
 */
export function takeBackRename(before: Folder, version: number, metadata: CommandMetadata): Append {
  return {
    stream: `folder-${before.folder_id}`,
    events: [{
      type: "FolderRenamed",
      data: { folder_id: before.folder_id, name: before.name },
      metadata: eventMetadata(metadata),
    }],
    expectedVersion: version,
  };
}

/**
 * Takes back a move (to the parent `before` had) unless the folder changed
 * since the stream's `version`.
 */
export function takeBackMove(before: Folder, version: number, metadata: CommandMetadata): Append {
  return {
    stream: `folder-${before.folder_id}`,
    events: [{
      type: "FolderMoved",
      data: { folder_id: before.folder_id, parent_id: before.parent_id },
      metadata: eventMetadata(metadata),
    }],
    expectedVersion: version,
  };
}
