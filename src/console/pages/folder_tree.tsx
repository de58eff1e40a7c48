/** @jsxImportSource preact */
/**
 * The folder tree: a person's folders as nested lists, as links (to browse)
 * or as checkboxes (to pick what a key can read).
 *
 * @module
 */
import type { VNode } from "preact";
import type { Folder } from "../../../projections/catalogue.ts";

/** A folder with its children, for drawing the tree. */
export interface FolderNode {
  folder: Folder;
  children: FolderNode[];
}

/** Builds the tree of a person's folders (the roots are the folders without a parent). */
export function folderTree(folders: readonly Folder[]): FolderNode[] {
  const nodes = new Map<string, FolderNode>();
  for (const folder of folders) nodes.set(folder.folder_id, { folder, children: [] });
  const roots: FolderNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.folder.parent_id === null ? undefined : nodes.get(node.folder.parent_id);
    (parent ? parent.children : roots).push(node);
  }
  const sort = (list: FolderNode[]) => {
    list.sort((a, b) => a.folder.name.localeCompare(b.folder.name));
    for (const node of list) sort(node.children);
  };
  sort(roots);
  return roots;
}

/** Options of {@linkcode FolderLinks}. */
export interface FolderLinksProps {
  rootLabel: string;
  folders: readonly Folder[];
  /** The folder shown now; null for the root. */
  currentId: string | null;
}

/** The folder tree as links to `/documents?folder=ID`. */
export function FolderLinks({ rootLabel, folders, currentId }: FolderLinksProps): VNode {
  const item = (node: FolderNode): VNode => (
    <li key={node.folder.folder_id}>
      <a
        href={`/documents?folder=${encodeURIComponent(node.folder.folder_id)}`}
        aria-current={node.folder.folder_id === currentId ? "page" : undefined}
        data-folder-id={node.folder.folder_id}
      >
        {node.folder.name}
      </a>
      {node.children.length > 0 && <ul>{node.children.map(item)}</ul>}
    </li>
  );
  return (
    <nav class="tree" aria-label="Folders">
      <ul>
        <li>
          <a href="/documents" aria-current={currentId === null ? "page" : undefined}>{rootLabel}</a>
          {folders.length > 0 && <ul>{folderTree(folders).map(item)}</ul>}
        </li>
      </ul>
    </nav>
  );
}

/** Options of {@linkcode FolderChecks}. */
export interface FolderChecksProps {
  folders: readonly Folder[];
  /** Documents to offer, each under its folder (null: the root). */
  documents: ReadonlyArray<{ id: string; name: string; folder_id: string | null }>;
  checkedFolders: readonly string[];
  checkedDocuments: readonly string[];
  rootLabel: string;
}

/** The folder tree with checkboxes for folders and their documents, to pick what a key can read. */
export function FolderChecks(props: FolderChecksProps): VNode {
  const docsIn = (folderId: string | null) => props.documents.filter((d) => d.folder_id === folderId);
  const docItems = (folderId: string | null) =>
    docsIn(folderId).map((d) => (
      <li key={d.id} class="doc">
        <label>
          <input
            type="checkbox"
            name="documents"
            value={d.id}
            checked={props.checkedDocuments.includes(d.id)}
          />
          <span class="doc-name">{d.name}</span>
        </label>
      </li>
    ));
  const item = (node: FolderNode): VNode => (
    <li key={node.folder.folder_id}>
      <label>
        <input
          type="checkbox"
          name="folders"
          value={node.folder.folder_id}
          checked={props.checkedFolders.includes(node.folder.folder_id)}
        />
        <span class="folder-name">{node.folder.name}</span>
      </label>
      {(node.children.length > 0 || docsIn(node.folder.folder_id).length > 0) && (
        <ul>
          {node.children.map(item)}
          {docItems(node.folder.folder_id)}
        </ul>
      )}
    </li>
  );
  const roots = folderTree(props.folders);
  return (
    <fieldset class="tree checks">
      <legend>Can read</legend>
      <p class="hint">
        A folder gives everything inside it, now and later. Pick single documents to add them alone.
      </p>
      {roots.length === 0 && docsIn(null).length === 0
        ? <p class="empty">Nothing to pick yet — make a folder or upload a document first.</p>
        : (
          <ul>
            <li>
              <span class="root-label">{props.rootLabel}</span>
              <ul>
                {roots.map(item)}
                {docItems(null)}
              </ul>
            </li>
          </ul>
        )}
    </fieldset>
  );
}
