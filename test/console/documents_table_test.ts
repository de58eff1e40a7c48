/**
 * The documents table as the server renders it: rows grouped by folder, each
 * folder named once, in an order that a status does not change.
 */
import assert from "node:assert/strict";
import { render } from "preact-render-to-string";
import type { DocumentRow, Folder } from "../../projections/catalogue.ts";
import { DocumentsPage } from "../../src/console/pages/documents_page.tsx";

const ROOT = "Ava Bennett's documents";

const doc = (
  id: string,
  name: string,
  folder: string | null,
  extra: Partial<DocumentRow> = {},
): DocumentRow => ({
  document_id: id,
  person_id: "p1",
  folder_id: folder,
  name,
  type: "pdf",
  size: 1000,
  sha256: "0".repeat(64),
  preset: "basic",
  uploaded_at: "2026-12-01T00:00:00.000Z",
  uploaded_position: 1,
  status: "searchable",
  failure_reason: null,
  page_count: 1,
  pages_estimated: false,
  pages_to_view: [],
  image_only_pages: [],
  pdf_copy_status: "none",
  pdf_copy_sha256: null,
  pdf_copy_pages: null,
  pdf_copy_reason: null,
  processing_worker: null,
  processing_lease_until: null,
  ...extra,
});

const folders: Folder[] = [
  { folder_id: "f1", person_id: "p1", parent_id: null, name: "Reports", path: "Reports" },
  { folder_id: "f2", person_id: "p1", parent_id: null, name: "Notes", path: "Notes" },
];

function page(documents: DocumentRow[]): string {
  return render(DocumentsPage({
    context: {
      csrf: "x",
      person: { name: "Ava Bennett", email: "a@example.com", admin: false },
      path: "/documents",
      assetVersion: "1",
    },
    rootLabel: ROOT,
    folders,
    current: null,
    documents,
    total: documents.length,
    offset: 0,
    perPage: 100,
    folderPaths: new Map(folders.map((f) => [f.folder_id, `${ROOT}/${f.path}`])),
    maxUploadBytes: 1_000_000,
  }));
}

/** The folder headings and document names, in the order the table shows them. */
function rows(html: string): string[] {
  return [
    ...html.matchAll(/<th scope="rowgroup"[^>]*>([^<]+)<\/th>|<a href="\/documents\/\w+" title="([^"]+)"/g),
  ]
    .map((m) => m[1] ? `# ${m[1]}` : m[2]!);
}

Deno.test("rows are grouped by folder, each folder named once, names in order", () => {
  const html = page([
    doc("d1", "zeta.pdf", "f1"),
    doc("d2", "alpha.pdf", "f2"),
    doc("d3", "beta.pdf", "f1"),
    doc("d4", "top.pdf", null),
  ]);
  assert.deepEqual(rows(html), [
    `# ${ROOT}`,
    "top.pdf",
    `# ${ROOT}/Notes`,
    "alpha.pdf",
    `# ${ROOT}/Reports`,
    "beta.pdf",
    "zeta.pdf",
  ]);
  assert.equal(
    html.split(`${ROOT}/Reports`).length - 1,
    1,
    "the folder path is written once, not on every row",
  );
});

Deno.test("a row keeps its place while documents are processed or arrive newer", () => {
  const before = rows(page([doc("d1", "b.pdf", "f1", { status: "processing" }), doc("d2", "a.pdf", "f1")]));
  const after = rows(page([doc("d2", "a.pdf", "f1"), doc("d1", "b.pdf", "f1", { status: "searchable" })]));
  assert.deepEqual(before, ["a.pdf", "b.pdf"]);
  assert.deepEqual(after, before);
});

Deno.test("the empty root shows the three steps; an empty folder only says it is empty", () => {
  assert.match(page([]), /id="first-steps"/);
  const folder = render(DocumentsPage({
    context: {
      csrf: "x",
      person: { name: "Ava Bennett", email: "a@example.com", admin: false },
      path: "/documents",
      assetVersion: "1",
    },
    rootLabel: ROOT,
    folders,
    current: folders[0]!,
    documents: [],
    total: 0,
    offset: 0,
    perPage: 100,
    folderPaths: new Map(),
    maxUploadBytes: 1_000_000,
  }));
  assert.doesNotMatch(folder, /first-steps/);
  assert.match(folder, /No documents here yet\./);
});
