/** @jsxImportSource preact */
/**
 * The documents page: the folder tree, folder actions, the upload area and
 * the documents of the chosen folder with their status and actions.
 *
 * @module
 */
import type { VNode } from "preact";
import type { DocumentRow, Folder } from "../../../projections/catalogue.ts";
import {
  DocumentActions,
  pageCount,
  PagesToView,
  StandardOption,
  Status,
  typeLabel,
} from "./document_parts.tsx";
import { FolderLinks } from "./folder_tree.tsx";
import { Alert, formatSize, Layout, type PageContext, Time } from "./layout.tsx";
import { SearchBox } from "./search_page.tsx";

/** Options of {@linkcode DocumentsPage}. */
export interface DocumentsPageProps {
  context: PageContext;
  rootLabel: string;
  folders: readonly Folder[];
  /** The folder shown; null for the root (every document). */
  current: Folder | null;
  documents: readonly DocumentRow[];
  total: number;
  /** How many newer documents come before these, and how many a page shows. */
  offset: number;
  perPage: number;
  /** Folder paths by id, for the folder column. */
  folderPaths: ReadonlyMap<string, string>;
  maxUploadBytes: number;
  /** The person's agent keys, to search as one of them. */
  keys?: ReadonlyArray<{ id: string; name: string }>;
}

/** How many pages to view a row lists before its "+N more" (the live update shows the same). */
const TO_VIEW_SHOWN = 8;

/** What "Pages to view" means, as the table explains it. */
const TO_VIEW_HELP =
  "Pages to view: pages whose text may miss a figure, chart or table — an agent is told to look at them with view_page";

/** A run of documents in one folder, with whether the folder's name is shown above it. */
interface FolderGroup {
  folder: string;
  show: boolean;
  documents: DocumentRow[];
}

/** The folder a row sits in, as a full path. */
function folderOf(props: DocumentsPageProps, doc: DocumentRow): string {
  return doc.folder_id === null ? props.rootLabel : props.folderPaths.get(doc.folder_id) ?? props.rootLabel;
}

/**
 * The documents by folder, each folder once, folders and names in alphabetical
 * order: a row keeps its place while documents around it are processed (it
 * does not move with a status or an upload's end). The folder is named above
 * its rows unless every row is in the one folder shown.
 */
export function groupByFolder(
  documents: readonly DocumentRow[],
  folder: (doc: DocumentRow) => string,
): FolderGroup[] {
  const groups = new Map<string, DocumentRow[]>();
  for (const doc of documents) {
    const key = folder(doc);
    groups.set(key, [...(groups.get(key) ?? []), doc]);
  }
  const byName = (a: string, b: string) => a.localeCompare(b, "en", { sensitivity: "base", numeric: true });
  const sorted = [...groups.entries()].sort(([a], [b]) => byName(a, b));
  return sorted.map(([name, docs]) => ({
    folder: name,
    show: sorted.length > 1,
    documents: docs.sort((a, b) => byName(a.name, b.name) || a.document_id.localeCompare(b.document_id)),
  }));
}

/** The empty documents page: where a newcomer begins, in three steps. */
function EmptyDocuments({ first }: { first: boolean }): VNode {
  if (!first) return <p class="empty">No documents here yet.</p>;
  return (
    <section class="card first-steps" aria-labelledby="first-steps-title" id="first-steps">
      <h2 id="first-steps-title">Three steps to your first agent</h2>
      <ol class="steps">
        <li>
          <strong>Upload</strong>{" "}
          a file above: PDF, PowerPoint, Word, text or Markdown. Sergo reads it into searchable pages.
        </li>
        <li>
          <strong>
            <a href="/keys">Make an agent key</a>
          </strong>{" "}
          that reads the folders you choose, and only those.
        </li>
        <li>
          <strong>Connect an app</strong>{" "}
          — Claude, ChatGPT, Cursor, VS Code and others: the key's page shows what to paste into each.
        </li>
      </ol>
    </section>
  );
}

function withOffset(href: string, offset: number): string {
  if (offset === 0) return href;
  return `${href}${href.includes("?") ? "&" : "?"}offset=${offset}`;
}

/** The documents page. */
export function DocumentsPage(props: DocumentsPageProps): VNode {
  const { context, current, documents } = props;
  const here = current ? current.path : props.rootLabel;
  const self = current ? `/documents?folder=${encodeURIComponent(current.folder_id)}` : "/documents";
  return (
    <Layout context={context} title={current ? current.name : "Documents"} scripts={["documents.js"]}>
      <div class="with-sidebar">
        <aside class="sidebar">
          <h2 class="sidebar-title">Folders</h2>
          <div id="folder-tree">
            <FolderLinks
              rootLabel={props.rootLabel}
              folders={props.folders}
              currentId={current?.folder_id ?? null}
            />
          </div>
          <form
            data-api="/api/folders"
            data-method="POST"
            data-done="goto-folder"
            class="stack compact"
            id="new-folder"
          >
            <input type="hidden" name="parent_id" value={current?.folder_id ?? ""} data-null-if-empty />
            <label>
              <span>
                New folder in <span class="path">{current ? current.name : "the root"}</span>
              </span>
              <input name="name" required data-rule="folder-name" placeholder="Folder name" />
            </label>
            <button type="submit">Create folder</button>
            <Alert />
          </form>
        </aside>
        <div class="content">
          <SearchBox keys={props.keys ?? []} />
          <header class="page-head">
            <div>
              <p class="crumb">{current ? props.rootLabel : "All documents"}</p>
              <h1>{here}</h1>
              <p class="muted" id="document-count">
                {props.total === 1 ? "1 document" : `${props.total} documents`}
                {current ? " in this folder and the folders inside it" : ""}
              </p>
            </div>
            {current && (
              <details class="menu">
                <summary>Folder actions</summary>
                <div class="menu-body">
                  <form
                    data-api={`/api/folders/${current.folder_id}`}
                    data-method="PATCH"
                    data-done="reload"
                    class="stack compact"
                  >
                    <label>
                      Rename to
                      <input name="name" value={current.name} required data-rule="folder-name" />
                    </label>
                    <button type="submit">Rename</button>
                    <Alert />
                  </form>
                  <form
                    data-api={`/api/folders/${current.folder_id}`}
                    data-method="DELETE"
                    data-done={`goto:${
                      current.parent_id
                        ? `/documents?folder=${encodeURIComponent(current.parent_id)}`
                        : "/documents"
                    }`}
                    data-confirm={`Delete the folder "${current.name}"?`}
                    class="stack compact"
                  >
                    <label class="check">
                      <input type="checkbox" name="recursive" value="true" data-query />
                      and everything in it
                    </label>
                    <button type="submit" class="danger">Delete folder</button>
                    <Alert />
                  </form>
                </div>
              </details>
            )}
          </header>

          <section class="upload card" aria-labelledby="upload-title">
            <h2 id="upload-title">Upload</h2>
            <form
              id="upload"
              data-folder-id={current?.folder_id ?? ""}
              data-max-bytes={String(props.maxUploadBytes)}
              class="dropzone"
            >
              <p>
                Drop PDF, PowerPoint, Word, text or Markdown files here, or{" "}
                <label class="file-pick">
                  choose files
                  <input type="file" name="files" multiple id="upload-files" />
                </label>{" "}
                or a{" "}
                <label class="file-pick">
                  folder
                  <input type="file" name="folder" multiple id="upload-folder" {...{ webkitdirectory: "" }} />
                </label>{" "}
                to put them in <strong>{here}</strong> (a folder keeps its folders inside).
              </p>
              <label class="inline">
                Processing
                <select name="preset" id="upload-preset">
                  <option value="basic">Basic — text by rules</option>
                  <StandardOption />
                  <option value="none">None — upload without processing</option>
                </select>
              </label>
              <p class="hint">Up to {formatSize(props.maxUploadBytes)} each.</p>
              <p class="hint" id="preset-help">
                Processing turns a file into searchable pages. Basic reads each page's own text by rules, with
                no AI; Standard also reads pages that are scanned or have no usable text (with Tesseract, or a
                vision model when one is configured); None keeps the file without reading it (search finds
                nothing in it until you process it). A scan uploaded with Basic is offered Standard as soon as
                it is read.
              </p>
            </form>
            <ul class="uploads" id="upload-list" aria-live="polite"></ul>
          </section>

          <div id="document-list">
            {documents.length === 0
              ? <EmptyDocuments first={!current && props.total === 0} />
              : (
                <div class="table-wrap">
                  <table class="documents">
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Status</th>
                        <th scope="col">Type</th>
                        <th scope="col">Pages</th>
                        <th scope="col">Uploaded</th>
                        <th scope="col">
                          <abbr title={TO_VIEW_HELP} aria-describedby="to-view-help">Pages to view</abbr>
                        </th>
                        <th scope="col">
                          <span class="sr-only">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    {groupByFolder(documents, (doc) => folderOf(props, doc)).map((group) => (
                      <tbody key={group.folder}>
                        {group.show && (
                          <tr class="folder-row">
                            <th scope="rowgroup" colSpan={7}>
                              {group.folder}
                            </th>
                          </tr>
                        )}
                        {group.documents.map((doc) => (
                          <tr
                            key={doc.document_id}
                            data-document-id={doc.document_id}
                            data-status={doc.status}
                          >
                            <td class="name">
                              <a href={`/documents/${doc.document_id}`} title={doc.name}>{doc.name}</a>
                              <span class="sub">{formatSize(doc.size)}</span>
                            </td>
                            <td class="status" data-cell="status">
                              <Status doc={doc} />
                            </td>
                            <td data-label="Type">{typeLabel(doc.type)}</td>
                            <td data-label="Pages" data-cell="pages">{pageCount(doc)}</td>
                            <td data-label="Uploaded">
                              <Time iso={doc.uploaded_at} dateOnly />
                            </td>
                            <td
                              data-label="Pages to view"
                              data-cell="to-view"
                              data-max={String(TO_VIEW_SHOWN)}
                            >
                              <PagesToView doc={doc} max={TO_VIEW_SHOWN} />
                            </td>
                            <td>
                              <details class="menu">
                                <summary>
                                  Actions<span class="sr-only">for {doc.name}</span>
                                </summary>
                                <div class="menu-body">
                                  <DocumentActions
                                    doc={doc}
                                    folders={props.folders}
                                    rootLabel={props.rootLabel}
                                    afterDelete={self}
                                  />
                                </div>
                              </details>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    ))}
                  </table>
                  <p class="hint" id="to-view-help">{TO_VIEW_HELP}.</p>
                </div>
              )}
            {props.total > props.perPage && (
              <nav class="pager" aria-label="More documents">
                <span class="muted">
                  {props.offset + 1}–{props.offset + documents.length} of {props.total}
                </span>
                {props.offset > 0 && (
                  <a class="button" href={withOffset(self, Math.max(0, props.offset - props.perPage))}>
                    Newer
                  </a>
                )}
                {props.offset + documents.length < props.total && (
                  <a class="button" href={withOffset(self, props.offset + props.perPage)}>Older</a>
                )}
              </nav>
            )}
          </div>
        </div>
      </div>
    </Layout>
  );
}
