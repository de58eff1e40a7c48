/** @jsxImportSource preact */
/**
 * A document's page: what it is, its actions, and each page's text with the
 * page as a picture (the same drawing as `view_page`), marked pages flagged.
 *
 * @module
 */
import type { VNode } from "preact";
import type { DocumentRow, Folder, PageRow } from "../../../projections/catalogue.ts";
import { DocumentActions, pageCount, PagesToView, Status, typeLabel } from "./document_parts.tsx";
import { formatSize, Layout, type PageContext, Time } from "./layout.tsx";

/** Options of {@linkcode DocumentPage}. */
export interface DocumentPageProps {
  context: PageContext;
  doc: DocumentRow;
  /** The folder's full value, such as `Ava Bennett's documents/Energy outlooks`. */
  folderLabel: string;
  folderHref: string;
  folders: readonly Folder[];
  rootLabel: string;
  pages: readonly PageRow[];
  /** Which pages are shown (a window of a long document) and how many there are. */
  window: { from: number; to: number; count: number };
  /** Whether page pictures can be drawn (a PDF, or a PDF copy exists). */
  pictures: boolean;
  /** Why there are no pictures, when there are none. */
  noPictures: string;
  /** The page asked for (`?page=`), shown with its picture open beside its text. */
  focusPage?: number;
}

function PageWindowNav({ id, window }: { id: string; window: DocumentPageProps["window"] }): VNode | null {
  if (window.count <= window.to - window.from + 1) return null;
  const size = window.to - window.from + 1;
  return (
    <nav class="pager" aria-label="Pages of this document">
      <span class="muted">Pages {window.from}–{window.to} of {window.count}</span>
      {window.from > 1 && (
        <a class="button" href={`/documents/${id}?page=${Math.max(1, window.from - size)}`}>Previous pages</a>
      )}
      {window.to < window.count && (
        <a class="button" href={`/documents/${id}?page=${window.to + 1}`}>Next pages</a>
      )}
    </nav>
  );
}

/** The document page. */
export function DocumentPage(props: DocumentPageProps): VNode {
  const { doc } = props;
  return (
    <Layout context={props.context} title={doc.name} scripts={["documents.js"]}>
      <p class="crumb">
        <a href={props.folderHref}>{props.folderLabel}</a>
      </p>
      <header class="page-head">
        <div>
          <h1 class="doc-title">{doc.name}</h1>
          <p class="doc-status" data-document-id={doc.document_id} data-status={doc.status} data-watch>
            <Status doc={doc} />
          </p>
        </div>
      </header>
      <dl class="facts">
        <div>
          <dt>Type</dt>
          <dd>{typeLabel(doc.type)}</dd>
        </div>
        <div>
          <dt>Pages</dt>
          <dd>{pageCount(doc)}{doc.pages_estimated && <span class="muted">(estimated)</span>}</dd>
        </div>
        <div>
          <dt>Uploaded</dt>
          <dd>
            <Time iso={doc.uploaded_at} />
          </dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatSize(doc.size)}</dd>
        </div>
        <div>
          <dt>Preset</dt>
          <dd>{doc.preset}</dd>
        </div>
        <div>
          <dt>Id</dt>
          <dd>
            <code>{doc.document_id}</code>
          </dd>
        </div>
        <div>
          <dt>Pages to view</dt>
          <dd>
            <PagesToView doc={doc} max={40} />
          </dd>
        </div>
      </dl>
      <section class="card">
        <h2>Actions</h2>
        <p>
          <a
            class="button"
            id="download-original"
            href={`/api/documents/${doc.document_id}/original`}
            download
          >
            Download the original ({formatSize(doc.size)})
          </a>
        </p>
        <DocumentActions
          doc={doc}
          folders={props.folders}
          rootLabel={props.rootLabel}
          afterDelete={props.folderHref}
        />
      </section>
      <section aria-labelledby="pages-title">
        <h2 id="pages-title">Pages</h2>
        {!props.pictures && <p class="hint">{props.noPictures}</p>}
        <PageWindowNav id={doc.document_id} window={props.window} />
        {props.pages.length === 0
          ? (
            <p class="empty">
              {doc.status === "processing"
                ? "The pages appear here once processing is done."
                : "This document has no text pages."}
            </p>
          )
          : (
            <ol class="pages">
              {props.pages.map((page) => (
                <li key={page.page} id={`page-${page.page}`} class={page.marked ? "page marked" : "page"}>
                  <header>
                    <h3>Page {page.page}</h3>
                    {page.marked && (
                      <span
                        class="badge warn"
                        title="The text of this page may miss a figure, chart or table"
                      >
                        To view
                      </span>
                    )}
                    {page.image_only && <span class="badge">Picture only</span>}
                  </header>
                  <div class="page-body">
                    {page.text.trim() === ""
                      ? <p class="muted">No text on this page.</p>
                      : <pre class="page-text">{page.text}</pre>}
                    {props.pictures && (
                      <details class="picture" data-page={page.page} open={props.focusPage === page.page}>
                        <summary>Show page {page.page} as a picture</summary>
                        <a
                          href={`/api/documents/${doc.document_id}/pages/${page.page}/image`}
                          target="_blank"
                        >
                          <img
                            loading="lazy"
                            src={`/api/documents/${doc.document_id}/pages/${page.page}/image`}
                            alt={`Page ${page.page} of ${doc.name}`}
                          />
                        </a>
                      </details>
                    )}
                  </div>
                </li>
              ))}
            </ol>
          )}
        <PageWindowNav id={doc.document_id} window={props.window} />
      </section>
    </Layout>
  );
}
