/**
 * The document rules as pure deciders: record an upload, move, delete,
 * process again, ask for a PDF copy. Each takes the command and the
 * catalogue rows its caller loaded, and returns the appends or refuses with
 * one sentence; nothing here reads a database, a file or a clock.
 *
 * @module
 */
import { type DocumentType, type Preset, PRESETS } from "../../events/types.ts";
import type { DocumentRow, Folder } from "../../projections/catalogue.ts";
import type { Append, CommandMetadata } from "./decision.ts";
import { eventMetadata } from "./decision.ts";
import { DomainError } from "./errors.ts";
import { ownFolder } from "./folders_decide.ts";
import { checkFileName } from "./rules.ts";

/** What "processing" with the preset none records: the document is left without text to search. */
export const NONE_PRESET_REASON = "Not indexed: the preset none keeps a document without text to search";

/** Checks a preset name; `standard` needs a transcriber installed here. */
export function checkPresetName(preset: string, transcriberInstalled: boolean): Preset {
  if (!(PRESETS as readonly string[]).includes(preset)) {
    throw new DomainError("invalid", `Preset "${preset}" is not one of: ${PRESETS.join(", ")}`);
  }
  if (preset === "standard" && !transcriberInstalled) {
    throw new DomainError(
      "invalid",
      'The "standard" preset needs a transcriber, and none is installed here: install tesseract-ocr or set SERGO_TRANSCRIBER',
    );
  }
  return preset as Preset;
}

/** The document a person asked for by id; another person's looks exactly like a missing one. */
export function ownDocument(personId: string, documentId: string, doc: DocumentRow | undefined): DocumentRow {
  if (!doc || doc.person_id !== personId) {
    throw new DomainError("not_found", `No document with id "${documentId}"`);
  }
  return doc;
}

/** The refusal of bytes that are in the folder already. */
export function sameBytes(name: string, twin: { name: string }): DomainError {
  return new DomainError(
    "conflict",
    `"${name}" is already in this folder as "${twin.name}" (the same bytes): choose "Upload anyway" to keep both`,
  );
}

/** Record an upload whose bytes are a blob already, as document `documentId`. */
export interface RecordUpload {
  documentId: string;
  personId: string;
  folderId: string | null;
  name: string;
  sha256: string;
  size: number;
  type: DocumentType;
  preset: string;
  /** Refuse it when the same bytes are in that folder already (the console asks; "Upload anyway" does not). */
  refuseDuplicate?: boolean;
  metadata: CommandMetadata;
}

/** What an upload needs to know. */
export interface RecordUploadState {
  /** The folder `folderId` names, whoever's it is (undefined when missing, or for the root). */
  folder: Folder | undefined;
  /** Whether a transcriber is installed here (the standard preset needs one). */
  transcriberInstalled: boolean;
  /** A document of the person with the same bytes in that folder, if any (read when duplicates are refused). */
  twin?: { name: string } | undefined;
}

/**
 * Checks what an upload asks for before its bytes are read: an allowed file
 * name (its last part), a preset, the person's folder. Returns the name kept.
 */
export function checkUpload(
  command: Pick<RecordUpload, "personId" | "folderId" | "name" | "preset">,
  state: Pick<RecordUploadState, "folder" | "transcriberInstalled">,
): string {
  const name = checkFileName(command.name);
  checkPresetName(command.preset, state.transcriberInstalled);
  if (command.folderId !== null) ownFolder(command.personId, command.folderId, state.folder);
  return name;
}

/** Decides an upload: the checks of {@linkcode checkUpload}, then no twin when duplicates are refused. */
export function decideUpload(command: RecordUpload, state: RecordUploadState): Append[] {
  const name = checkUpload(command, state);
  const preset = checkPresetName(command.preset, state.transcriberInstalled);
  if (command.refuseDuplicate && state.twin) throw sameBytes(name, state.twin);
  return [{
    stream: `document-${command.documentId}`,
    events: [{
      type: "DocumentUploaded",
      data: {
        document_id: command.documentId,
        person_id: command.personId,
        folder_id: command.folderId,
        name,
        type: command.type,
        size: command.size,
        sha256: command.sha256,
        preset,
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** Put document `documentId` in `folderId` (null for the root). */
export interface MoveDocument {
  personId: string;
  documentId: string;
  folderId: string | null;
  metadata: CommandMetadata;
}

/** Decides a move: nothing when the document is there already. */
export function decideMoveDocument(
  command: MoveDocument,
  state: { document: DocumentRow | undefined; folder: Folder | undefined },
): Append[] {
  const doc = ownDocument(command.personId, command.documentId, state.document);
  if (command.folderId !== null) ownFolder(command.personId, command.folderId, state.folder);
  if (doc.folder_id === command.folderId) return [];
  return [{
    stream: `document-${doc.document_id}`,
    events: [{
      type: "DocumentMoved",
      data: { document_id: doc.document_id, folder_id: command.folderId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Delete document `documentId`. */
export interface DeleteDocument {
  personId: string;
  documentId: string;
  metadata: CommandMetadata;
}

/** Decides a deletion of the person's document. */
export function decideDeleteDocument(
  command: DeleteDocument,
  state: { document: DocumentRow | undefined },
): Append[] {
  const doc = ownDocument(command.personId, command.documentId, state.document);
  return [{
    stream: `document-${doc.document_id}`,
    events: [{
      type: "DocumentDeleted",
      data: { document_id: doc.document_id },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Process document `documentId` again with `preset`. */
export interface RequestProcessing {
  personId: string;
  documentId: string;
  preset: string;
  metadata: CommandMetadata;
}

/**
 * Decides a request to process again. The preset none takes the document out
 * of search at once (there is nothing to read): it records the failure
 * straight away.
 */
export function decideProcessing(
  command: RequestProcessing,
  state: { document: DocumentRow | undefined; transcriberInstalled: boolean },
): Append[] {
  const doc = ownDocument(command.personId, command.documentId, state.document);
  const preset = checkPresetName(command.preset, state.transcriberInstalled);
  const document_id = doc.document_id;
  const metadata = eventMetadata(command.metadata);
  return [{
    stream: `document-${document_id}`,
    events: [
      preset === "none"
        ? { type: "ProcessingFailed", data: { document_id, preset, reason: NONE_PRESET_REASON }, metadata }
        : { type: "ProcessingRequested", data: { document_id, preset }, metadata },
    ],
    expectedVersion: "stream_exists",
  }];
}

/** Make a PDF copy of document `documentId`. */
export interface RequestPdfCopy {
  personId: string;
  documentId: string;
  metadata: CommandMetadata;
}

/** Decides a request for a PDF copy: Office and text files only. */
export function decidePdfCopy(
  command: RequestPdfCopy,
  state: { document: DocumentRow | undefined },
): Append[] {
  const doc = ownDocument(command.personId, command.documentId, state.document);
  if (doc.type === "pdf") {
    throw new DomainError("invalid", `"${doc.name}" is a PDF already: it needs no PDF copy`);
  }
  return [{
    stream: `document-${doc.document_id}`,
    events: [{
      type: "PdfCopyRequested",
      data: { document_id: doc.document_id },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/**
 * Takes back an upload of bytes that another upload into the same folder,
 * first in the log, recorded at the same moment.
 */
export function takeBackUpload(documentId: string, metadata: CommandMetadata): Append {
  return {
    stream: `document-${documentId}`,
    events: [{
      type: "DocumentDeleted",
      data: { document_id: documentId },
      metadata: eventMetadata(metadata),
    }],
    expectedVersion: "stream_exists",
  };
}
