/**
 * What the console shows of the Standard preset: the option, enabled with the
 * transcriber's name where one is installed, disabled and saying so where none
 * is; a document being transcribed, with its pages so far; a scan Basic could
 * not read, with what would read it.
 */
import assert from "node:assert/strict";
import { render } from "preact-render-to-string";
import type { DocumentRow } from "../../projections/catalogue.ts";
import { StandardOption, Status } from "../../src/console/pages/document_parts.tsx";
import { registerTranscriber } from "../../src/processing/transcribers/choose.ts";
import { NO_TEXT_LAYER_REASON } from "../../src/processing/standard.ts";

const doc = (extra: Partial<DocumentRow>): DocumentRow => ({
  document_id: "d1",
  person_id: "p1",
  folder_id: null,
  name: "scan.pdf",
  type: "pdf",
  size: 1,
  sha256: "0".repeat(64),
  preset: "standard",
  uploaded_at: "2026-12-01T00:00:00.000Z",
  uploaded_position: 1,
  status: "searchable",
  failure_reason: null,
  page_count: 4,
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

Deno.test("the console's Standard option says what it reads, names the transcriber, or says none is set up", () => {
  try {
    registerTranscriber("Tesseract 5.3.0 (eng, rus)");
    assert.equal(
      render(StandardOption()),
      '<option value="standard" title="This server reads them with Tesseract 5.3.0 (eng, rus)">' +
        "Standard — reads scanned pages (Tesseract, or a vision model when configured)</option>",
    );
    registerTranscriber(null);
    assert.equal(
      render(StandardOption()),
      '<option value="standard" disabled>' +
        "Standard — reads scanned pages (needs Tesseract or a vision model; none is set up)</option>",
    );
  } finally {
    registerTranscriber(undefined);
  }
});

Deno.test("the console shows pages transcribed so far, and why a scan is not indexed", () => {
  const busy = render(
    Status({ doc: doc({ status: "processing", progress: { pages_done: 3, pages_total: 17 } }) }),
  );
  assert.match(busy, /Transcribing… 3 of 17 pages/);
  assert.match(render(Status({ doc: doc({ status: "processing" }) })), /Processing…/);
  const scan = render(Status({ doc: doc({ status: "not_indexed", failure_reason: NO_TEXT_LAYER_REASON }) }));
  assert.match(scan, /Not indexed/);
  assert.ok(scan.includes(NO_TEXT_LAYER_REASON));
});
