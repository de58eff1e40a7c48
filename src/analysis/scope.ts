/**
 * What a search may look at: a person's folders and single documents, and the
 * scope tokens through which the FTS5 index reaches their passages.
 *
 * Every passage carries its document's token, and when it is in a folder, the
 * folder's token and its person's "in a folder" token (see
 * `projections/search_index.ts`). Each token names the person too, so a scope
 * that names another person's folder or document reaches nothing: no
 * passage, no statistic. A scope token starts with a private-use character,
 * which analyzed text never holds (see `analysis.ts`), so no word meets one
 * and no column filter is needed; then digits only: a kind digit and three
 * digits per UTF-8 byte of the person's id, a slash and the folder's or
 * document's id.
 *
 * @module
 */

/** The documents a search may return. */
export interface SearchScope {
  /** Only this person's documents are ever returned. */
  personId: string;
  /** Folders to search (already expanded to their descendants); null means every folder of the person. */
  folderIds: string[] | null;
  /** Single documents to search as well (the only way documents outside any folder are searched). */
  documentIds: string[];
}

/** Whether the scope holds nothing at all. */
export function isEmptyScope(scope: SearchScope): boolean {
  return scope.folderIds !== null && scope.folderIds.length === 0 && scope.documentIds.length === 0;
}

/** The scope tokens of one passage (its document, and its folder and person when it is in a folder). */
export function passageScopeTokens(documentId: string, folderId: string | null, personId: string): string {
  const tokens = [documentToken(personId, documentId)];
  if (folderId !== null) tokens.push(folderToken(personId, folderId), inFolderToken(personId));
  return tokens.join(" ");
}

/** The scope tokens a search in `scope` matches: its folders (or the person's "in a folder") and documents. */
export function scopeTokens(scope: SearchScope): string[] {
  const { personId } = scope;
  const tokens = scope.folderIds === null
    ? [inFolderToken(personId)]
    : scope.folderIds.map((folderId) => folderToken(personId, folderId));
  return [...tokens, ...scope.documentIds.map((documentId) => documentToken(personId, documentId))];
}

function inFolderToken(personId: string): string {
  return `\ue0001${digits(personId)}`;
}

function folderToken(personId: string, folderId: string): string {
  return `\ue0002${digits(`${personId}/${folderId}`)}`;
}

function documentToken(personId: string, documentId: string): string {
  return `\ue0003${digits(`${personId}/${documentId}`)}`;
}

function digits(id: string): string {
  return [...new TextEncoder().encode(id)].map((byte) => String(byte).padStart(3, "0")).join("");
}
