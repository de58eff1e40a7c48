/** @jsxImportSource preact */
/**
 * Pieces shown for a document on both the documents list and its own page:
 * the status, the page count, the pages to view and the actions.
 *
 * @module
 */
import type { VNode } from "preact";
import type { DocumentRow, Folder } from "../../../projections/catalogue.ts";
import { Alert } from "./layout.tsx";
import { registeredTranscriber } from "../../processing/transcribers/choose.ts";

const TYPE_LABELS: Record<string, string> = {
  pdf: "PDF",
  pptx: "PowerPoint",
  docx: "Word",
  txt: "Text",
  md: "Markdown",
};

/** A document type as people read it. */
export function typeLabel(type: string): string {
  return TYPE_LABELS[type] ?? type;
}

/** The status of a document: searchable, processing, or not indexed with its reason. */
export function Status({ doc }: { doc: DocumentRow }): VNode {
  if (doc.status === "searchable") {
    if (!doc.failure_reason) return <span class="badge ok" data-status="searchable">Searchable</span>;
    // Standard's budget left pages untranscribed: the person is told which.
    return (
      <span class="status-block" data-status="searchable">
        <span class="badge ok">Searchable</span>
        <span class="reason">{doc.failure_reason}</span>
      </span>
    );
  }
  if (doc.status === "processing") {
    const p = doc.progress;
    return (
      <span class="badge busy" data-status="processing">
        {p ? `Transcribing… ${p.pages_done} of ${p.pages_total} pages` : "Processing…"}
      </span>
    );
  }
  return (
    <span class="status-block" data-status="not_indexed">
      <span class="badge warn">Not indexed</span>
      {doc.failure_reason && <span class="reason">{doc.failure_reason}</span>}
    </span>
  );
}

/** The page count, with `≈` when the pages are estimates. */
export function pageCount(doc: DocumentRow): string {
  if (doc.page_count === null) return "—";
  return doc.pages_estimated ? `≈${doc.page_count}` : String(doc.page_count);
}

/** The pages to view, each a link to that page on the document's page. */
export function PagesToView({ doc, max = 12 }: { doc: DocumentRow; max?: number }): VNode {
  if (doc.pages_to_view.length === 0) return <span class="muted">—</span>;
  const shown = doc.pages_to_view.slice(0, max);
  return (
    <span class="page-links">
      {shown.map((n) => (
        <a
          key={n}
          href={`/documents/${doc.document_id}?page=${n}#page-${n}`}
          title={`Page ${n} may hold a figure, chart or table`}
        >
          {n}
        </a>
      ))}
      {doc.pages_to_view.length > max && <span class="muted">+{doc.pages_to_view.length - max} more</span>}
    </span>
  );
}

/** Whether a document can have a PDF copy (anything but a PDF). */
export function canHavePdfCopy(doc: DocumentRow): boolean {
  return doc.type !== "pdf";
}

/** What the Standard preset is, as its option says it. */
export const STANDARD_LABEL = "Standard — reads scanned pages (Tesseract, or a vision model when configured)";

/**
 * The Standard preset's option: enabled, naming this server's transcriber on
 * hover, or disabled saying none is set up.
 */
export function StandardOption(): VNode {
  const label = registeredTranscriber();
  if (label === null) {
    return (
      <option value="standard" disabled>
        Standard — reads scanned pages (needs Tesseract or a vision model; none is set up)
      </option>
    );
  }
  return (
    <option value="standard" title={label ? `This server reads them with ${label}` : undefined}>
      {STANDARD_LABEL}
    </option>
  );
}

/** Options of {@linkcode DocumentActions}. */
export interface DocumentActionsProps {
  doc: DocumentRow;
  folders: readonly Folder[];
  rootLabel: string;
  /** Where to go after deleting. */
  afterDelete: string;
}

/** Move, process again, make a PDF copy, delete: small forms that call the API. */
export function DocumentActions({ doc, folders, rootLabel, afterDelete }: DocumentActionsProps): VNode {
  const id = doc.document_id;
  return (
    <div class="actions">
      <form data-api={`/api/documents/${id}`} data-method="PATCH" data-done="reload" class="inline">
        <label>
          Move to
          <select name="folder_id" data-null-if-empty>
            <option value="" selected={doc.folder_id === null}>{rootLabel}</option>
            {folders.map((f) => (
              <option key={f.folder_id} value={f.folder_id} selected={doc.folder_id === f.folder_id}>
                {f.path}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Move</button>
        <Alert />
      </form>
      <form data-api={`/api/documents/${id}/process`} data-method="POST" data-done="reload" class="inline">
        <label>
          Process again with
          <select name="preset">
            <option value="basic">Basic — text by rules</option>
            <StandardOption />
            <option value="none">None — keep it unindexed</option>
          </select>
        </label>
        <button type="submit">Process</button>
        <Alert />
      </form>
      {canHavePdfCopy(doc) && (
        <form data-api={`/api/documents/${id}/pdf-copy`} data-method="POST" data-done="reload" class="inline">
          <span class="muted">
            PDF copy: {doc.pdf_copy_status === "made"
              ? `made (${doc.pdf_copy_pages ?? "?"} pages)`
              : doc.pdf_copy_status === "pending"
              ? "being made…"
              : doc.pdf_copy_status === "failed"
              ? `failed${doc.pdf_copy_reason ? ` — ${doc.pdf_copy_reason}` : ""}`
              : "none"}
          </span>
          <button type="submit" disabled={doc.pdf_copy_status === "pending"}>Make a PDF copy</button>
          <Alert />
        </form>
      )}
      <form
        data-api={`/api/documents/${id}`}
        data-method="DELETE"
        data-done={`goto:${afterDelete}`}
        data-confirm={`Delete "${doc.name}"? Keys that read it will no longer see it.`}
        class="inline"
      >
        <button type="submit" class="danger">Delete</button>
        <Alert />
      </form>
    </div>
  );
}
