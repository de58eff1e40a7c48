/**
 * Commands on documents: upload, move, delete, process again, ask for a PDF
 * copy.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { DocumentType, Preset } from "../../events/types.ts";
import {
  type DocumentRow,
  documentsWithBytes,
  documentWithBytes,
  getDocument,
  getFolder,
} from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { ProcessingError } from "../processing/processing_error.ts";
import { registeredTranscriber } from "../processing/transcribers/choose.ts";
import { appendDecided, commandMetadata } from "./_append.ts";
import {
  checkPresetName,
  checkUpload,
  decideDeleteDocument,
  decideMoveDocument,
  decidePdfCopy,
  decideProcessing,
  decideUpload,
  ownDocument,
  sameBytes,
  takeBackUpload,
} from "./documents_decide.ts";
import { DomainError } from "./errors.ts";
import { newDocumentId } from "./ids.ts";
import { oneAtATime } from "./locks.ts";

const EXTENSIONS: Record<string, DocumentType> = {
  pdf: "pdf",
  pptx: "pptx",
  docx: "docx",
  txt: "txt",
  text: "txt",
  md: "md",
  markdown: "md",
};

/**
 * Decides a document's type at upload from its first bytes, then its name.
 * The processor checks the whole content later and refuses a file that is not
 * what it claims, with the reason.
 */
export function guessType(head: Uint8Array, fileName: string): DocumentType {
  const extension = fileName.includes(".") ? fileName.split(".").pop()!.toLowerCase() : "";
  const byName = EXTENSIONS[extension];
  const text = new TextDecoder("latin1").decode(head.subarray(0, 1024));
  if (text.includes("%PDF-")) return "pdf";
  if (head[0] === 0x50 && head[1] === 0x4b && (byName === "pptx" || byName === "docx")) return byName;
  if (byName) return byName;
  if (head.length > 0 && !head.subarray(0, 4096).includes(0)) return "txt";
  throw new DomainError(
    "unsupported",
    `"${fileName}" is not a file Sergo reads: upload a PDF, PowerPoint (.pptx), Word (.docx), text or Markdown file`,
  );
}

/** Office containers whose content is read up front (larger ones are judged by processing). */
const CONTENT_CHECK_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Refuses, before anything is recorded, a zip or OLE container that is not a
 * Word or PowerPoint file whatever its name says (a spreadsheet named .docx, a
 * legacy .doc, a .xlsx), with the sentence processing would give later.
 */
async function refuseUnreadable(path: string, head: Uint8Array, name: string): Promise<void> {
  const zip = head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
  const ole = head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0;
  if (!zip && !ole) return;
  if ((await Deno.stat(path)).size > CONTENT_CHECK_MAX_BYTES) return;
  // Loaded for the first zip or OLE upload (it reads zip and XML), not at start-up.
  const { detectType } = await import("../processing/detect_type.ts");
  try {
    detectType(await Deno.readFile(path), name);
  } catch (error) {
    if (!(error instanceof ProcessingError)) throw error;
    throw new DomainError(
      "unsupported",
      `"${name}" cannot be read by Sergo: ${error.message.replace(/\.$/, "")}`,
    );
  }
}

/** A document of the person with the same bytes in the same folder, if any. */
export function sameFileInFolder(
  db: DatabaseSync,
  personId: string,
  folderId: string | null,
  sha256: string,
): DocumentRow | undefined {
  return documentWithBytes(db, personId, folderId, sha256);
}

/**
 * Where, in log order, a document came into the folder it is in: its upload
 * or its last move.
 */
function placedAt(app: SergoApp, documentId: string): number {
  const events = app.store.readStream(`document-${documentId}`);
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === "DocumentUploaded" || type === "DocumentMoved") return events[i]!.position;
  }
  return Infinity;
}

/**
 * The document with these bytes in this folder that came into it first in log
 * order. The check before an upload reads the projections, so two uploads of
 * the same bytes at the same moment from two processes (two replicas) can both
 * pass it; after the append the projections hold every event before it, and
 * every process sees the same log order, so exactly the later one finds an
 * earlier twin and takes itself back (as folder names do).
 */
function firstInFolder(
  app: SergoApp,
  personId: string,
  folderId: string | null,
  sha256: string,
): { document_id: string; name: string } | undefined {
  const twins = documentsWithBytes(app.db, personId, folderId, sha256);
  if (twins.length <= 1) return twins[0];
  return twins.map((twin) => ({ twin, at: placedAt(app, twin.document_id) }))
    .sort((a, b) => a.at - b.at)[0]!.twin;
}

/** Checks a preset name; `standard` needs a transcriber installed here. */
export function checkPreset(preset: string): Preset {
  return checkPresetName(preset, registeredTranscriber() !== null);
}

/** Finds a person's document; another person's looks exactly like a missing one. */
export function requireDocument(db: DatabaseSync, personId: string, documentId: string): DocumentRow {
  return ownDocument(personId, documentId, getDocument(db, documentId));
}

/** What an upload records, once its bytes are a blob. */
export interface UploadInput {
  personId: string;
  folderId: string | null;
  name: string;
  sha256: string;
  size: number;
  type: DocumentType;
  preset: string;
}

/** Records an uploaded document whose bytes are already in the blob store. */
export async function recordUpload(app: SergoApp, input: UploadInput, actor: string): Promise<DocumentRow> {
  return await recordDecided(app, input, actor, undefined);
}

/** Records an upload unless `twin` is given and duplicates are refused. */
async function recordDecided(
  app: SergoApp,
  input: UploadInput & { refuseDuplicate?: boolean },
  actor: string,
  twin: { name: string } | undefined,
): Promise<DocumentRow> {
  const documentId = newDocumentId();
  await appendDecided(
    app,
    decideUpload({ documentId, ...input, metadata: commandMetadata(app, actor) }, {
      folder: input.folderId === null ? undefined : getFolder(app.db, input.folderId),
      transcriberInstalled: registeredTranscriber() !== null,
      twin,
    }),
  );
  return getDocument(app.db, documentId)!;
}

/**
 * Uploads a file that was streamed to `tempPath`: it becomes a blob, its type
 * is decided by content, and the upload is recorded.
 */
export async function uploadFile(
  app: SergoApp,
  input: {
    personId: string;
    folderId: string | null;
    name: string;
    tempPath: string;
    preset?: string;
    /** Refuse it when the same bytes are already in that folder (the console asks; "Upload anyway" does not). */
    refuseDuplicate?: boolean;
  },
  actor: string,
): Promise<DocumentRow> {
  const name = checkUpload({ ...input, preset: input.preset ?? "basic" }, {
    folder: input.folderId === null ? undefined : getFolder(app.db, input.folderId),
    transcriberInstalled: registeredTranscriber() !== null,
  });
  const head = new Uint8Array(4096);
  let read: number | null;
  {
    using file = await Deno.open(input.tempPath, { read: true });
    read = await file.read(head);
  }
  try {
    await refuseUnreadable(input.tempPath, head.subarray(0, read ?? 0), name);
  } catch (error) {
    await Deno.remove(input.tempPath).catch(() => {});
    throw error;
  }
  let type: DocumentType;
  try {
    type = guessType(head.subarray(0, read ?? 0), name);
  } catch (error) {
    await Deno.remove(input.tempPath).catch(() => {});
    throw error;
  }
  const { sha256, size } = await app.blobs.adopt(input.tempPath);
  const record = (twin?: { name: string }) =>
    recordDecided(
      app,
      {
        personId: input.personId,
        folderId: input.folderId,
        name,
        sha256,
        size,
        type,
        preset: input.preset ?? "basic",
        refuseDuplicate: input.refuseDuplicate,
      },
      actor,
      twin,
    );
  if (!input.refuseDuplicate) return await record();
  // One check-and-record at a time per folder, so two uploads of the same bytes cannot both pass.
  return await oneAtATime(`upload/${input.personId}/${input.folderId ?? ""}`, async () => {
    const made = await record(sameFileInFolder(app.db, input.personId, input.folderId, sha256));
    // Another process may have recorded the same bytes here at the same moment: the first in the log keeps them.
    const first = firstInFolder(app, input.personId, input.folderId, sha256);
    if (first === undefined || first.document_id === made.document_id) return made;
    await appendDecided(app, [takeBackUpload(made.document_id, commandMetadata(app, actor))]);
    throw sameBytes(name, first);
  });
}

/** Moves a document to another folder (null for the root). */
export async function moveDocument(
  app: SergoApp,
  input: { personId: string; documentId: string; folderId: string | null },
  actor: string,
): Promise<DocumentRow> {
  const document = getDocument(app.db, input.documentId);
  const appends = decideMoveDocument({ ...input, metadata: commandMetadata(app, actor) }, {
    document,
    folder: input.folderId === null ? undefined : getFolder(app.db, input.folderId),
  });
  if (appends.length === 0) return document!;
  await appendDecided(app, appends);
  return getDocument(app.db, document!.document_id)!;
}

/** Deletes a document. */
export async function deleteDocument(
  app: SergoApp,
  input: { personId: string; documentId: string },
  actor: string,
): Promise<void> {
  const document = getDocument(app.db, input.documentId);
  await appendDecided(
    app,
    decideDeleteDocument({ ...input, metadata: commandMetadata(app, actor) }, { document }),
  );
}

/**
 * Asks for a document to be processed again, with a preset. The preset none
 * takes the document out of search at once (there is nothing to read).
 */
export async function requestProcessing(
  app: SergoApp,
  input: { personId: string; documentId: string; preset: string },
  actor: string,
): Promise<DocumentRow> {
  const document = getDocument(app.db, input.documentId);
  await appendDecided(
    app,
    decideProcessing({ ...input, metadata: commandMetadata(app, actor) }, {
      document,
      transcriberInstalled: registeredTranscriber() !== null,
    }),
  );
  return getDocument(app.db, document!.document_id)!;
}

/** Asks for a PDF copy of a document (Office and text files). */
export async function requestPdfCopy(
  app: SergoApp,
  input: { personId: string; documentId: string },
  actor: string,
): Promise<DocumentRow> {
  const document = getDocument(app.db, input.documentId);
  await appendDecided(app, decidePdfCopy({ ...input, metadata: commandMetadata(app, actor) }, { document }));
  return getDocument(app.db, document!.document_id)!;
}
