/**
 * What an agent key can see now: its folders (with every folder inside
 * them) and its single files, all of its owner, read fresh from the
 * projections on every call so a change of access shows at once.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import {
  type DocumentRow,
  type Folder,
  folderNamesOf,
  foldersHolding,
  folderValue,
  getPerson,
  listFolders,
} from "../../projections/catalogue.ts";
import type { AgentKey } from "../../projections/key_scopes.ts";
import { MESSAGES } from "./texts.ts";

/** A key's scope, resolved against the catalogue. */
export interface KeyScope {
  personId: string;
  /** The owner's name, for folder values such as `Ava Bennett's documents/…`. */
  personName: string;
  /** The folders the key reads, in the key's order (existing ones of its owner only). */
  roots: Folder[];
  /** Every folder in scope: the roots and everything inside them. */
  folders: Folder[];
  /** Ids of every folder in scope. */
  folderIds: string[];
  /** The single files the key reads besides its folders. */
  documentIds: string[];
  /** The path of every folder holding a single file the key reads, by folder id. */
  singleFileFolders: Map<string, string>;
}

/** The names of the folders a key reads, for the tool descriptions. */
export function rootFolderNames(db: DatabaseSync, key: AgentKey): string[] {
  if (key.can_read.folders.length === 0) return [];
  const byId = folderNamesOf(db, key.person_id, key.can_read.folders);
  return key.can_read.folders.flatMap((id) => byId.has(id) ? [byId.get(id)!] : []);
}

/** Resolves what a key can see now. */
export function keyScope(db: DatabaseSync, key: AgentKey): KeyScope {
  const person = getPerson(db, key.person_id);
  const all = key.can_read.folders.length > 0 || key.can_read.documents.length > 0
    ? listFolders(db, key.person_id)
    : [];
  const byId = new Map(all.map((folder) => [folder.folder_id, folder]));
  const roots = key.can_read.folders.flatMap((id) => byId.has(id) ? [byId.get(id)!] : []);
  const inScope = new Set(roots.map((folder) => folder.folder_id));
  // listFolders is ordered by path, so a parent comes before everything inside it.
  for (const folder of all) {
    if (folder.parent_id !== null && inScope.has(folder.parent_id)) inScope.add(folder.folder_id);
  }
  const folders = all.filter((folder) => inScope.has(folder.folder_id));
  const singleFileFolders = new Map<string, string>();
  if (key.can_read.documents.length > 0) {
    const holding = new Set(foldersHolding(db, key.person_id, key.can_read.documents));
    for (const folder of all) {
      if (holding.has(folder.folder_id)) singleFileFolders.set(folder.folder_id, folder.path);
    }
  }
  return {
    personId: key.person_id,
    personName: person?.name ?? "",
    roots,
    folders,
    folderIds: folders.map((folder) => folder.folder_id),
    documentIds: [...key.can_read.documents],
    singleFileFolders,
  };
}

/** Whether a document is in a key's scope. */
export function inScope(scope: KeyScope, document: DocumentRow | undefined): document is DocumentRow {
  if (!document || document.person_id !== scope.personId) return false;
  if (document.folder_id !== null && scope.folderIds.includes(document.folder_id)) return true;
  return scope.documentIds.includes(document.document_id);
}

/** The folder value shown in results, such as `Ava Bennett's documents/Energy outlooks/Basic`. */
export function documentFolder(scope: KeyScope, document: DocumentRow): string {
  if (document.folder_id === null) return folderValue(scope.personName, null);
  const path = scope.folders.find((f) => f.folder_id === document.folder_id)?.path ??
    scope.singleFileFolders.get(document.folder_id) ?? null;
  return folderValue(scope.personName, path);
}

/** The documents a call covers: folder ids (expanded) and single files. */
export interface Narrowed {
  folderIds: string[];
  documentIds: string[];
}

/**
 * Narrows a scope to the folders asked for, each by its own name (any depth),
 * by a path, or by a full folder value; every folder that matches counts, with
 * everything inside it. Single files are left out when narrowing.
 */
export function narrowToFolders(
  scope: KeyScope,
  requested: readonly string[] | undefined,
): { ok: true; narrowed: Narrowed } | { ok: false; message: string } {
  if (requested === undefined || requested.length === 0) {
    return { ok: true, narrowed: { folderIds: scope.folderIds, documentIds: scope.documentIds } };
  }
  const matched = new Set<string>();
  for (const raw of requested) {
    const wanted = raw.trim().replace(/\/+$/, "");
    const hits = matchFolders(scope, wanted);
    if (hits.length === 0) return { ok: false, message: noFolderMessage(scope, raw) };
    for (const folder of hits) matched.add(folder.folder_id);
  }
  // Expand the matches to everything inside them (the scope's folders are ordered by path).
  for (const folder of scope.folders) {
    if (folder.parent_id !== null && matched.has(folder.parent_id)) matched.add(folder.folder_id);
  }
  return {
    ok: true,
    narrowed: { folderIds: scope.folderIds.filter((id) => matched.has(id)), documentIds: [] },
  };
}

function matchFolders(scope: KeyScope, wanted: string): Folder[] {
  if (wanted === "") return [];
  const exact = scope.folders.filter((folder) => folderMatches(scope, folder, wanted, (s) => s));
  if (exact.length > 0) return exact;
  const lower = (s: string) => s.normalize("NFC").toLowerCase();
  return scope.folders.filter((folder) => folderMatches(scope, folder, lower(wanted), lower));
}

function folderMatches(
  scope: KeyScope,
  folder: Folder,
  wanted: string,
  norm: (s: string) => string,
): boolean {
  const path = norm(folder.path);
  return norm(folder.name) === wanted || path === wanted || path.endsWith(`/${wanted}`) ||
    norm(folderValue(scope.personName, folder.path)) === wanted;
}

function noFolderMessage(scope: KeyScope, name: string): string {
  if (scope.roots.length === 0) return MESSAGES.noFolderSingleFiles(name);
  const rootIds = new Set(scope.roots.map((folder) => folder.folder_id));
  // The key's folders in its order (as the tool descriptions list them), then the folders inside by name.
  const inside = [...new Set(scope.folders.filter((f) => !rootIds.has(f.folder_id)).map((f) => f.name))]
    .sort(byName);
  return MESSAGES.noFolder(name, scope.roots.map((folder) => folder.name), inside);
}

const nameOrder = new Intl.Collator("en", { numeric: true });

/** Folder names in the order a person reads them (numbers by value), exact ties by code point. */
function byName(a: string, b: string): number {
  return nameOrder.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
