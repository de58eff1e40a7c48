/**
 * The document rules as specifications, without a database, a file or a
 * clock: given the catalogue rows a command's caller loads, when the command
 * is decided, then these appends, or this refusal.
 */
import assert from "node:assert/strict";
import type { DocumentRow, Folder } from "../../projections/catalogue.ts";
import {
  checkUpload,
  decideDeleteDocument,
  decideMoveDocument,
  decidePdfCopy,
  decideProcessing,
  decideUpload,
  NONE_PRESET_REASON,
  type RecordUpload,
  takeBackUpload,
} from "../../src/domain/documents_decide.ts";

const metadata = { now: new Date("2026-03-01T09:30:00.000Z"), actor: "person-ava" };
const meta = { time: "2026-03-01T09:30:00.000Z", actor: "person-ava" };

const reports: Folder = {
  folder_id: "F-rep",
  person_id: "ava",
  parent_id: null,
  name: "Reports",
  path: "Reports",
};
const bens: Folder = { folder_id: "F-ben", person_id: "ben", parent_id: null, name: "Ben", path: "Ben" };

function doc(document_id: string, fields: Partial<DocumentRow> = {}): DocumentRow {
  return {
    document_id,
    person_id: "ava",
    folder_id: null,
    name: "outlook.docx",
    type: "docx",
    size: 1200,
    sha256: "ab".repeat(32),
    preset: "basic",
    uploaded_at: "2026-02-01T00:00:00.000Z",
    uploaded_position: 7,
    status: "searchable",
    failure_reason: null,
    page_count: 3,
    pages_estimated: false,
    pages_to_view: [],
    image_only_pages: [],
    pdf_copy_status: "none",
    pdf_copy_sha256: null,
    pdf_copy_pages: null,
    pdf_copy_reason: null,
    processing_worker: null,
    processing_lease_until: null,
    ...fields,
  };
}

const upload: RecordUpload = {
  documentId: "D-new",
  personId: "ava",
  folderId: reports.folder_id,
  name: "C:\\Users\\ava\\Energy outlook 2026.pdf",
  sha256: "cd".repeat(32),
  size: 52_000,
  type: "pdf",
  preset: "basic",
  metadata,
};

Deno.test("upload: given the person's folder, then DocumentUploaded under the file name's last part, on a new stream", () => {
  assert.deepEqual(decideUpload(upload, { folder: reports, transcriberInstalled: false }), [{
    stream: "document-D-new",
    events: [{
      type: "DocumentUploaded",
      data: {
        document_id: "D-new",
        person_id: "ava",
        folder_id: "F-rep",
        name: "Energy outlook 2026.pdf",
        type: "pdf",
        size: 52_000,
        sha256: "cd".repeat(32),
        preset: "basic",
      },
      metadata: meta,
    }],
    expectedVersion: "no_stream",
  }]);
});

Deno.test("upload: the same bytes in the folder are refused only when duplicates are refused", () => {
  const twin = { name: "outlook (old).pdf" };
  assert.equal(decideUpload(upload, { folder: reports, transcriberInstalled: false, twin }).length, 1);
  assert.throws(
    () =>
      decideUpload({ ...upload, refuseDuplicate: true }, {
        folder: reports,
        transcriberInstalled: false,
        twin,
      }),
    {
      code: "conflict",
      message:
        '"Energy outlook 2026.pdf" is already in this folder as "outlook (old).pdf" (the same bytes): choose "Upload anyway" to keep both',
    },
  );
  assert.equal(
    decideUpload({ ...upload, refuseDuplicate: true }, { folder: reports, transcriberInstalled: false })
      .length,
    1,
  );
});

Deno.test("upload: a missing or another person's folder, an unknown preset, standard without a transcriber, a bad name: refused", () => {
  const refused =
    (command: Partial<RecordUpload>, folder: Folder | undefined, transcriberInstalled = false) => () =>
      decideUpload({ ...upload, ...command }, { folder, transcriberInstalled });
  assert.throws(refused({}, bens), { code: "not_found", message: 'No folder with id "F-rep"' });
  assert.throws(refused({}, undefined), { code: "not_found", message: 'No folder with id "F-rep"' });
  assert.throws(refused({ preset: "deluxe" }, reports), {
    code: "invalid",
    message: 'Preset "deluxe" is not one of: basic, standard, none',
  });
  assert.throws(refused({ preset: "standard" }, reports), {
    code: "invalid",
    message:
      'The "standard" preset needs a transcriber, and none is installed here: install tesseract-ocr or set SERGO_TRANSCRIBER',
  });
  assert.equal(refused({ preset: "standard" }, reports, true)()[0]!.events[0]!.type, "DocumentUploaded");
  assert.throws(refused({ name: "a\u202Efdp.exe" }, reports), {
    code: "invalid",
    message:
      "File name cannot contain the bidirectional control character U+202E: it makes a name read differently from what it is",
  });
  assert.throws(refused({ name: "x".repeat(256) }, reports), {
    message: "File name is too long: at most 255 characters, got 256",
  });
  assert.equal(
    checkUpload({ personId: "ava", folderId: null, name: "a/b/notes.md", preset: "none" }, {
      folder: undefined,
      transcriberInstalled: false,
    }),
    "notes.md",
  );
});

Deno.test("move: given another folder, then DocumentMoved; where it is decides nothing; another person's document looks missing", () => {
  const document = doc("D1");
  const move = (folderId: string | null, folder?: Folder, given = document) =>
    decideMoveDocument({ personId: "ava", documentId: "D1", folderId, metadata }, {
      document: given,
      folder,
    });
  assert.deepEqual(move("F-rep", reports), [{
    stream: "document-D1",
    events: [{ type: "DocumentMoved", data: { document_id: "D1", folder_id: "F-rep" }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
  assert.deepEqual(move(null), []);
  assert.throws(() => move("F-ben", bens), { code: "not_found", message: 'No folder with id "F-ben"' });
  assert.throws(() => move(null, undefined, doc("D1", { person_id: "ben" })), {
    code: "not_found",
    message: 'No document with id "D1"',
  });
});

Deno.test("delete: given the person's document, then DocumentDeleted; a missing one is refused", () => {
  assert.deepEqual(
    decideDeleteDocument({ personId: "ava", documentId: "D1", metadata }, { document: doc("D1") }),
    [{
      stream: "document-D1",
      events: [{ type: "DocumentDeleted", data: { document_id: "D1" }, metadata: meta }],
      expectedVersion: "stream_exists",
    }],
  );
  assert.throws(
    () => decideDeleteDocument({ personId: "ava", documentId: "D9", metadata }, { document: undefined }),
    { code: "not_found", message: 'No document with id "D9"' },
  );
});

Deno.test("process again: a preset asks for processing; the preset none records at once that there is nothing to search", () => {
  const process = (preset: string, transcriberInstalled = false) =>
    decideProcessing({ personId: "ava", documentId: "D1", preset, metadata }, {
      document: doc("D1"),
      transcriberInstalled,
    });
  assert.deepEqual(process("basic")[0]!.events, [{
    type: "ProcessingRequested",
    data: { document_id: "D1", preset: "basic" },
    metadata: meta,
  }]);
  assert.deepEqual(process("none")[0]!.events, [{
    type: "ProcessingFailed",
    data: { document_id: "D1", preset: "none", reason: NONE_PRESET_REASON },
    metadata: meta,
  }]);
  assert.throws(() => process("standard"), { code: "invalid", message: /needs a transcriber/ });
  assert.equal(process("standard", true)[0]!.events[0]!.type, "ProcessingRequested");
});

Deno.test("PDF copy: asked for an Office or text file; a PDF needs none", () => {
  assert.deepEqual(decidePdfCopy({ personId: "ava", documentId: "D1", metadata }, { document: doc("D1") }), [{
    stream: "document-D1",
    events: [{ type: "PdfCopyRequested", data: { document_id: "D1" }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
  assert.throws(
    () =>
      decidePdfCopy({ personId: "ava", documentId: "D2", metadata }, {
        document: doc("D2", { type: "pdf", name: "outlook.pdf" }),
      }),
    { code: "invalid", message: '"outlook.pdf" is a PDF already: it needs no PDF copy' },
  );
});

Deno.test("take-back: an upload that another, first in the log, made a duplicate of is deleted", () => {
  assert.deepEqual(takeBackUpload("D-new", metadata), {
    stream: "document-D-new",
    events: [{ type: "DocumentDeleted", data: { document_id: "D-new" }, metadata: meta }],
    expectedVersion: "stream_exists",
  });
});
