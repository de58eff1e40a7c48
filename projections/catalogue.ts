/**
 * The catalogue: people, folders, documents with their status, pages, pages
 * to view and PDF copies. Its queries serve the API, the console and the MCP
 * tools.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { DocumentType, Preset, RecordedEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";
import { statement } from "./_statements.ts";

/** A person as the catalogue holds them. */
export interface Person {
  person_id: string;
  name: string;
  email: string;
  password_hash: string | null;
}

/** A folder; `path` runs from the person's root, such as `Energy outlooks/Basic`. */
export interface Folder {
  folder_id: string;
  person_id: string;
  parent_id: string | null;
  name: string;
  path: string;
}

/** A document's status: searchable, being processed, or without text to search. */
export type DocumentStatus = "searchable" | "processing" | "not_indexed";

/** Where a document's PDF copy stands. */
export type PdfCopyStatus = "none" | "pending" | "made" | "failed";

/** A document as the catalogue holds it. */
export interface DocumentRow {
  document_id: string;
  person_id: string;
  folder_id: string | null;
  name: string;
  type: DocumentType;
  size: number;
  sha256: string;
  preset: Preset;
  uploaded_at: string;
  uploaded_position: number;
  status: DocumentStatus;
  /** Why it is not indexed; for a searchable document, why some pages were not transcribed (or null). */
  failure_reason: string | null;
  page_count: number | null;
  pages_estimated: boolean;
  pages_to_view: number[];
  image_only_pages: number[];
  pdf_copy_status: PdfCopyStatus;
  pdf_copy_sha256: string | null;
  pdf_copy_pages: number | null;
  pdf_copy_reason: string | null;
  /** Who is processing the document now, and until when others leave it alone. */
  processing_worker: string | null;
  processing_lease_until: string | null;
  /** Standard: pages transcribed so far, while processing (filled in by callers that show it). */
  progress?: { pages_done: number; pages_total: number } | null;
}

/** One page's text and marks. */
export interface PageRow {
  page: number;
  text: string;
  marked: boolean;
  image_only: boolean;
}

/** One chunk of a processed document, in reading order, with its (estimated or real) page. */
export interface ChunkRow {
  ord: number;
  page: number;
  section: string | null;
  text: string;
}

const TABLES = [
  "cat_people",
  "cat_admins",
  "cat_password_links",
  "cat_folders",
  "cat_documents",
  "cat_pages",
  "cat_chunks",
  "cat_progress",
  "cat_copy_leases",
] as const;

/** The catalogue projection. */
export const catalogue: Projection = {
  name: "catalogue",
  handles: [
    "PersonAdded",
    "PersonPasswordSet",
    "PersonMadeAdministrator",
    "PersonAdministratorRemoved",
    "PasswordLinkIssued",
    "PasswordLinkUsed",
    "FolderCreated",
    "FolderRenamed",
    "FolderMoved",
    "FolderDeleted",
    "DocumentUploaded",
    "DocumentMoved",
    "DocumentDeleted",
    "ProcessingRequested",
    "ProcessingStarted",
    "ProcessingLeaseRenewed",
    "DocumentProcessed",
    "TranscriptionProgressed",
    "ProcessingFailed",
    "PdfCopyRequested",
    "PdfCopyStarted",
    "PdfCopyLeaseRenewed",
    "PdfCopyMade",
    "PdfCopyFailed",
  ],
  tables: TABLES,
  init(db: DatabaseSync): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS cat_people (
        person_id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, password_hash TEXT
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_admins (person_id TEXT PRIMARY KEY) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_password_links (
        link_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
        purpose TEXT NOT NULL, expires_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_folders (
        folder_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL, path TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS cat_folders_parent ON cat_folders (person_id, parent_id);
      CREATE TABLE IF NOT EXISTS cat_documents (
        document_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, folder_id TEXT, name TEXT NOT NULL,
        type TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, preset TEXT NOT NULL,
        uploaded_at TEXT NOT NULL, uploaded_position INTEGER NOT NULL, status TEXT NOT NULL,
        failure_reason TEXT, page_count INTEGER, pages_estimated INTEGER NOT NULL DEFAULT 0,
        pages_to_view TEXT NOT NULL DEFAULT '[]', image_only_pages TEXT NOT NULL DEFAULT '[]',
        pdf_copy_status TEXT NOT NULL DEFAULT 'none', pdf_copy_sha256 TEXT, pdf_copy_pages INTEGER,
        pdf_copy_reason TEXT, processing_worker TEXT, processing_lease_until TEXT
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS cat_documents_person ON cat_documents (person_id, uploaded_position);
      CREATE INDEX IF NOT EXISTS cat_documents_folder ON cat_documents (folder_id, uploaded_position);
      CREATE INDEX IF NOT EXISTS cat_documents_processing ON cat_documents (uploaded_position)
        WHERE status = 'processing';
      CREATE INDEX IF NOT EXISTS cat_documents_copy_pending ON cat_documents (uploaded_position)
        WHERE pdf_copy_status = 'pending';
      CREATE TABLE IF NOT EXISTS cat_pages (
        document_id TEXT NOT NULL, page INTEGER NOT NULL, text TEXT NOT NULL,
        marked INTEGER NOT NULL, image_only INTEGER NOT NULL, PRIMARY KEY (document_id, page)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_progress (
        document_id TEXT PRIMARY KEY, pages_done INTEGER NOT NULL, pages_total INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_copy_leases (
        document_id TEXT PRIMARY KEY, worker TEXT NOT NULL, lease_until TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS cat_chunks (
        document_id TEXT NOT NULL, ord INTEGER NOT NULL, page INTEGER NOT NULL, section TEXT,
        text TEXT NOT NULL, PRIMARY KEY (document_id, ord)
      ) WITHOUT ROWID;
    `);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    switch (event.type) {
      case "PersonAdded": {
        const { person_id, name, email } = event.data;
        // Two additions of one email at the same moment can both reach the log: the first in log order is
        // the person, the later one is none (and its command says the email is taken).
        statement(
          db,
          "INSERT INTO cat_people (person_id, name, email) VALUES (?, ?, ?) ON CONFLICT (email) DO NOTHING",
        ).run(
          person_id,
          name,
          email,
        );
        return;
      }
      case "PersonPasswordSet":
        statement(db, "UPDATE cat_people SET password_hash = ? WHERE person_id = ?").run(
          event.data.password_hash,
          event.data.person_id,
        );
        return;
      case "PersonMadeAdministrator":
        statement(
          db,
          "INSERT OR IGNORE INTO cat_admins (person_id) SELECT person_id FROM cat_people WHERE person_id = ?",
        ).run(event.data.person_id);
        return;
      case "PersonAdministratorRemoved":
        statement(db, "DELETE FROM cat_admins WHERE person_id = ?").run(event.data.person_id);
        return;
      case "PasswordLinkIssued": {
        const { link_id, person_id, token_hash, purpose, expires_at } = event.data;
        statement(
          db,
          `INSERT OR REPLACE INTO cat_password_links (link_id, person_id, token_hash, purpose, expires_at)
           VALUES (?, ?, ?, ?, ?)`,
        ).run(link_id, person_id, token_hash, purpose, expires_at);
        return;
      }
      case "PasswordLinkUsed":
        statement(db, "DELETE FROM cat_password_links WHERE link_id = ?").run(event.data.link_id);
        return;
      case "FolderCreated": {
        const { folder_id, person_id, parent_id, name } = event.data;
        const parentPath = parent_id === null ? "" : folderPath(db, parent_id);
        statement(
          db,
          "INSERT INTO cat_folders (folder_id, person_id, parent_id, name, path) VALUES (?, ?, ?, ?, ?)",
        )
          .run(folder_id, person_id, parent_id, name, parentPath === "" ? name : `${parentPath}/${name}`);
        return;
      }
      case "FolderRenamed":
        statement(db, "UPDATE cat_folders SET name = ? WHERE folder_id = ?").run(
          event.data.name,
          event.data.folder_id,
        );
        repath(db, event.data.folder_id);
        return;
      case "FolderMoved":
        statement(db, "UPDATE cat_folders SET parent_id = ? WHERE folder_id = ?").run(
          event.data.parent_id,
          event.data.folder_id,
        );
        repath(db, event.data.folder_id);
        return;
      case "FolderDeleted":
        statement(db, "DELETE FROM cat_folders WHERE folder_id = ?").run(event.data.folder_id);
        return;
      case "DocumentUploaded": {
        const d = event.data;
        const office = d.type === "pptx" || d.type === "docx";
        statement(
          db,
          `INSERT INTO cat_documents (document_id, person_id, folder_id, name, type, size, sha256, preset,
             uploaded_at, uploaded_position, status, pdf_copy_status)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          d.document_id,
          d.person_id,
          d.folder_id,
          d.name,
          d.type,
          d.size,
          d.sha256,
          d.preset,
          event.metadata.time,
          event.position,
          d.preset === "none" ? "not_indexed" : "processing",
          office ? "pending" : "none",
        );
        return;
      }
      case "DocumentMoved":
        statement(db, "UPDATE cat_documents SET folder_id = ? WHERE document_id = ?").run(
          event.data.folder_id,
          event.data.document_id,
        );
        return;
      case "DocumentDeleted":
        for (const table of ["cat_documents", "cat_pages", "cat_chunks", "cat_progress", "cat_copy_leases"]) {
          statement(db, `DELETE FROM ${table} WHERE document_id = ?`).run(event.data.document_id);
        }
        return;
      case "ProcessingRequested":
        statement(db, "DELETE FROM cat_progress WHERE document_id = ?").run(event.data.document_id);
        statement(
          db,
          `UPDATE cat_documents SET status = 'processing', preset = ?, failure_reason = NULL, processing_worker = NULL,
             processing_lease_until = NULL WHERE document_id = ?`,
        ).run(event.data.preset, event.data.document_id);
        return;
      case "ProcessingStarted":
        statement(
          db,
          `UPDATE cat_documents SET status = 'processing', preset = ?, failure_reason = NULL, processing_worker = ?,
             processing_lease_until = ? WHERE document_id = ?`,
        ).run(
          event.data.preset,
          event.data.worker ?? null,
          event.data.lease_until ?? null,
          event.data.document_id,
        );
        return;
      case "ProcessingLeaseRenewed":
        statement(
          db,
          `UPDATE cat_documents SET processing_lease_until = ?
           WHERE document_id = ? AND status = 'processing' AND processing_worker = ?`,
        ).run(event.data.lease_until, event.data.document_id, event.data.worker);
        return;
      case "DocumentProcessed":
        statement(db, "DELETE FROM cat_progress WHERE document_id = ?").run(event.data.document_id);
        applyProcessed(db, event.data);
        return;
      case "TranscriptionProgressed":
        statement(
          db,
          `INSERT INTO cat_progress (document_id, pages_done, pages_total) VALUES (?, ?, ?)
           ON CONFLICT (document_id) DO UPDATE SET pages_done = excluded.pages_done, pages_total = excluded.pages_total`,
        ).run(event.data.document_id, event.data.pages_done, event.data.pages_total);
        return;
      case "ProcessingFailed":
        statement(db, "DELETE FROM cat_progress WHERE document_id = ?").run(event.data.document_id);
        statement(
          db,
          "UPDATE cat_documents SET status = 'not_indexed', failure_reason = ? WHERE document_id = ?",
        ).run(
          event.data.reason,
          event.data.document_id,
        );
        return;
      case "PdfCopyRequested":
        statement(db, "DELETE FROM cat_copy_leases WHERE document_id = ?").run(event.data.document_id);
        statement(
          db,
          "UPDATE cat_documents SET pdf_copy_status = 'pending', pdf_copy_reason = NULL WHERE document_id = ?",
        )
          .run(event.data.document_id);
        return;
      case "PdfCopyStarted":
        statement(
          db,
          `INSERT INTO cat_copy_leases (document_id, worker, lease_until) VALUES (?, ?, ?)
           ON CONFLICT (document_id) DO UPDATE SET worker = excluded.worker, lease_until = excluded.lease_until`,
        ).run(event.data.document_id, event.data.worker, event.data.lease_until);
        return;
      case "PdfCopyLeaseRenewed":
        statement(db, "UPDATE cat_copy_leases SET lease_until = ? WHERE document_id = ? AND worker = ?")
          .run(event.data.lease_until, event.data.document_id, event.data.worker);
        return;
      case "PdfCopyMade":
        statement(db, "DELETE FROM cat_copy_leases WHERE document_id = ?").run(event.data.document_id);
        applyPdfCopy(db, event.data);
        return;
      case "PdfCopyFailed":
        statement(db, "DELETE FROM cat_copy_leases WHERE document_id = ?").run(event.data.document_id);
        statement(
          db,
          "UPDATE cat_documents SET pdf_copy_status = 'failed', pdf_copy_reason = ? WHERE document_id = ?",
        )
          .run(event.data.reason, event.data.document_id);
        return;
    }
  },
};

type ProcessedData = Extract<RecordedEvent, { type: "DocumentProcessed" }>["data"];
type PdfCopyData = Extract<RecordedEvent, { type: "PdfCopyMade" }>["data"];

function applyProcessed(db: DatabaseSync, data: ProcessedData): void {
  const id = data.document_id;
  statement(db, "DELETE FROM cat_pages WHERE document_id = ?").run(id);
  statement(db, "DELETE FROM cat_chunks WHERE document_id = ?").run(id);
  const insertPage = statement(
    db,
    "INSERT INTO cat_pages (document_id, page, text, marked, image_only) VALUES (?, ?, ?, ?, ?)",
  );
  const insertChunk = statement(
    db,
    "INSERT INTO cat_chunks (document_id, ord, page, section, text) VALUES (?, ?, ?, ?, ?)",
  );
  let ord = 0;
  for (const page of data.pages) {
    insertPage.run(id, page.page, page.text, page.marked ? 1 : 0, page.image_only ? 1 : 0);
    for (const chunk of page.chunks ?? []) insertChunk.run(id, ord++, page.page, chunk.section, chunk.text);
  }
  const marked = data.pages.filter((p) => p.marked).map((p) => p.page).sort((a, b) => a - b);
  const imageOnly = data.pages.filter((p) => p.image_only).map((p) => p.page).sort((a, b) => a - b);
  statement(
    db,
    `UPDATE cat_documents SET status = ?, failure_reason = ?, preset = ?, page_count = ?,
       pages_estimated = ?, pages_to_view = ?, image_only_pages = ? WHERE document_id = ?`,
  ).run(
    data.not_indexed_reason ? "not_indexed" : "searchable",
    // A searchable document keeps the reason some of its pages were not transcribed.
    data.not_indexed_reason ?? data.incomplete_reason ?? null,
    data.preset,
    data.page_count,
    data.pages_estimated ? 1 : 0,
    JSON.stringify(marked),
    JSON.stringify(imageOnly),
    id,
  );
  // A copy made before this result still gives real pages.
  const copy = statement(
    db,
    "SELECT pdf_copy_status, pdf_copy_pages FROM cat_documents WHERE document_id = ?",
  )
    .get(id) as
      | { pdf_copy_status: string; pdf_copy_pages: number | null }
      | undefined;
  if (copy?.pdf_copy_status === "made" && data.pages_estimated) {
    statement(db, "UPDATE cat_documents SET pdf_copy_status = 'pending' WHERE document_id = ?").run(id);
  }
}

function applyPdfCopy(db: DatabaseSync, data: PdfCopyData): void {
  const id = data.document_id;
  statement(
    db,
    "UPDATE cat_documents SET pdf_copy_status = 'made', pdf_copy_sha256 = ?, pdf_copy_pages = ?, pdf_copy_reason = NULL WHERE document_id = ?",
  ).run(data.sha256, data.page_count, id);
  // A document without text (not indexed) has the copy's pages, with nothing on them to read.
  statement(
    db,
    "UPDATE cat_documents SET page_count = ?, pages_estimated = 0 WHERE document_id = ? AND status = 'not_indexed'",
  ).run(data.page_count, id);
  // Logs from before copies were read page by page moved each chunk to its copy page.
  const chunkPages = data.chunk_pages;
  if (!chunkPages) return;
  const chunks = statement(db, "SELECT ord, section, text FROM cat_chunks WHERE document_id = ? ORDER BY ord")
    .all(id) as Array<{ ord: number; section: string | null; text: string }>;
  if (chunks.length !== chunkPages.length) return;
  const update = statement(db, "UPDATE cat_chunks SET page = ? WHERE document_id = ? AND ord = ?");
  chunks.forEach((chunk, i) => update.run(chunkPages[i]!, id, chunk.ord));
  statement(db, "DELETE FROM cat_pages WHERE document_id = ?").run(id);
  const insertPage = statement(
    db,
    "INSERT INTO cat_pages (document_id, page, text, marked, image_only) VALUES (?, ?, ?, 0, 0)",
  );
  for (let page = 1; page <= data.page_count; page++) {
    const text = chunks.filter((_, i) => chunkPages[i] === page).map((c) => c.text).join("\n\n");
    insertPage.run(id, page, text);
  }
  statement(
    db,
    "UPDATE cat_documents SET page_count = ?, pages_estimated = 0, pages_to_view = '[]', image_only_pages = '[]' WHERE document_id = ?",
  ).run(data.page_count, id);
}

function folderPath(db: DatabaseSync, folderId: string): string {
  const row = statement(db, "SELECT path FROM cat_folders WHERE folder_id = ?").get(folderId) as
    | { path: string }
    | undefined;
  return row?.path ?? "";
}

/**
 * Recomputes the path of a folder and everything inside it after a rename or
 * move. Two moves at once (A into B, B into A, by two processes) can make a
 * cycle until the later one is taken back; its folders are visited once, so
 * applying it ends (it recursed until the stack overflowed, and the
 * projections stopped for good on that event).
 */
function repath(db: DatabaseSync, folderId: string, visited = new Set<string>()): void {
  if (visited.has(folderId)) return;
  visited.add(folderId);
  const folder = statement(db, "SELECT parent_id, name FROM cat_folders WHERE folder_id = ?").get(folderId) as
    | { parent_id: string | null; name: string }
    | undefined;
  if (!folder) return;
  const parentPath = folder.parent_id === null ? "" : folderPath(db, folder.parent_id);
  const path = parentPath === "" ? folder.name : `${parentPath}/${folder.name}`;
  statement(db, "UPDATE cat_folders SET path = ? WHERE folder_id = ?").run(path, folderId);
  const children = statement(db, "SELECT folder_id FROM cat_folders WHERE parent_id = ?").all(
    folderId,
  ) as Array<
    { folder_id: string }
  >;
  for (const child of children) repath(db, child.folder_id, visited);
}

// ---------------------------------------------------------------------------
// Queries

/** The label of a person's root folder, such as `Ava Bennett's documents`. */
export function rootLabel(personName: string): string {
  return `${personName}'s documents`;
}

/** A folder's value as results show it: the root label, then the path. */
export function folderValue(personName: string, path: string | null): string {
  return path ? `${rootLabel(personName)}/${path}` : rootLabel(personName);
}

/** Finds a person by id. */
export function getPerson(db: DatabaseSync, personId: string): Person | undefined {
  return statement(db, "SELECT * FROM cat_people WHERE person_id = ?").get(personId) as Person | undefined;
}

/** Finds a person by email (case-insensitive). */
export function getPersonByEmail(db: DatabaseSync, email: string): Person | undefined {
  return statement(db, "SELECT * FROM cat_people WHERE lower(email) = lower(?)").get(email) as
    | Person
    | undefined;
}

/** Every person, by name. */
export function listPeople(db: DatabaseSync): Person[] {
  return statement(db, "SELECT * FROM cat_people ORDER BY name, person_id").all() as unknown as Person[];
}

/** Whether a person is an administrator (may add people and reset their passwords). */
export function isAdministrator(db: DatabaseSync, personId: string): boolean {
  return statement(db, "SELECT 1 FROM cat_admins WHERE person_id = ?").get(personId) !== undefined;
}

/** How many administrators there are. */
export function administratorCount(db: DatabaseSync): number {
  return (statement(db, "SELECT COUNT(*) AS n FROM cat_admins").get() as { n: number }).n;
}

/** Whether anyone has been added yet (the first-run setup is open only while nobody has). */
export function anyPerson(db: DatabaseSync): boolean {
  return statement(db, "SELECT 1 FROM cat_people LIMIT 1").get() !== undefined;
}

/** An open one-time password link. */
export interface PasswordLink {
  link_id: string;
  person_id: string;
  purpose: "invite" | "reset";
  expires_at: string;
}

/** The open password link with this token hash, if any (expired ones are the caller's to refuse). */
export function passwordLinkByHash(db: DatabaseSync, tokenHash: string): PasswordLink | undefined {
  return statement(
    db,
    "SELECT link_id, person_id, purpose, expires_at FROM cat_password_links WHERE token_hash = ?",
  ).get(tokenHash) as PasswordLink | undefined;
}

/** A person's open password links. */
export function passwordLinksOf(db: DatabaseSync, personId: string): PasswordLink[] {
  return statement(
    db,
    "SELECT link_id, person_id, purpose, expires_at FROM cat_password_links WHERE person_id = ? ORDER BY expires_at",
  ).all(personId) as unknown as PasswordLink[];
}

/** A folder by id. */
export function getFolder(db: DatabaseSync, folderId: string): Folder | undefined {
  return statement(db, "SELECT * FROM cat_folders WHERE folder_id = ?").get(folderId) as Folder | undefined;
}

/** Every folder of a person, ordered by path. */
export function listFolders(db: DatabaseSync, personId: string): Folder[] {
  return statement(db, "SELECT * FROM cat_folders WHERE person_id = ? ORDER BY path, folder_id").all(
    personId,
  ) as unknown as Folder[];
}

/** A folder by its path from the person's root (exact, case-sensitive). */
export function getFolderByPath(db: DatabaseSync, personId: string, path: string): Folder | undefined {
  return statement(db, "SELECT * FROM cat_folders WHERE person_id = ? AND path = ?").get(personId, path) as
    | Folder
    | undefined;
}

/** The child folder of `parentId` (null for the root) with this name. */
export function getChildFolder(
  db: DatabaseSync,
  personId: string,
  parentId: string | null,
  name: string,
): Folder | undefined {
  return statement(db, "SELECT * FROM cat_folders WHERE person_id = ? AND parent_id IS ? AND name = ?").get(
    personId,
    parentId,
    name,
  ) as Folder | undefined;
}

/**
 * Every child folder of `parentId` (null for the root) with this name: one,
 * but for the moment between two creations (or renames, or moves) of one name
 * by two processes at once and the later one's taking it back.
 */
export function getChildFolders(
  db: DatabaseSync,
  personId: string,
  parentId: string | null,
  name: string,
): Folder[] {
  return statement(db, "SELECT * FROM cat_folders WHERE person_id = ? AND parent_id IS ? AND name = ?").all(
    personId,
    parentId,
    name,
  ) as unknown as Folder[];
}

/** The given folders with every folder inside them. */
export function expandFolders(db: DatabaseSync, folderIds: readonly string[]): string[] {
  if (folderIds.length === 0) return [];
  const rows = statement(
    db,
    `WITH RECURSIVE tree(id) AS (
       SELECT value FROM json_each(?)
       UNION SELECT f.folder_id FROM cat_folders f JOIN tree t ON f.parent_id = t.id
     ) SELECT id FROM tree JOIN cat_folders ON cat_folders.folder_id = tree.id ORDER BY id`,
  ).all(JSON.stringify(folderIds)) as Array<{ id: string }>;
  return rows.map((row) => row.id);
}

/** Whether a folder holds anything: folders or documents. */
export function folderHoldsAnything(db: DatabaseSync, folderId: string): boolean {
  return Boolean(
    statement(db, "SELECT 1 FROM cat_folders WHERE parent_id = ? LIMIT 1").get(folderId) ??
      statement(db, "SELECT 1 FROM cat_documents WHERE folder_id = ? LIMIT 1").get(folderId),
  );
}

interface RawDocument extends Omit<DocumentRow, "pages_estimated" | "pages_to_view" | "image_only_pages"> {
  pages_estimated: number;
  pages_to_view: string;
  image_only_pages: string;
}

function toDocument(raw: RawDocument): DocumentRow {
  return {
    ...raw,
    pages_estimated: raw.pages_estimated === 1,
    pages_to_view: JSON.parse(raw.pages_to_view),
    image_only_pages: JSON.parse(raw.image_only_pages),
  };
}

/** A document by id (any owner: callers check ownership). */
export function getDocument(db: DatabaseSync, documentId: string): DocumentRow | undefined {
  const raw = statement(db, "SELECT * FROM cat_documents WHERE document_id = ?").get(documentId) as
    | RawDocument
    | undefined;
  return raw ? toDocument(raw) : undefined;
}

// ---------------------------------------------------------------------------
// What the domain's commands read before they decide (src/domain): a folder's
// documents for a recursive delete, and the same bytes in one folder.

/** The ids of the documents in any of these folders (already expanded), in id order. */
export function documentIdsInFolders(db: DatabaseSync, folderIds: readonly string[]): string[] {
  const rows = statement(
    db,
    "SELECT document_id FROM cat_documents WHERE folder_id IN (SELECT value FROM json_each(?)) ORDER BY document_id",
  ).all(JSON.stringify(folderIds)) as Array<{ document_id: string }>;
  return rows.map((row) => row.document_id);
}

/** A document of the person with these bytes in this folder (null for the root), if any. */
export function documentWithBytes(
  db: DatabaseSync,
  personId: string,
  folderId: string | null,
  sha256: string,
): DocumentRow | undefined {
  const raw = statement(
    db,
    "SELECT * FROM cat_documents WHERE person_id = ? AND folder_id IS ? AND sha256 = ? LIMIT 1",
  ).get(personId, folderId, sha256) as RawDocument | undefined;
  return raw ? toDocument(raw) : undefined;
}

/** Every document of the person with these bytes in this folder (null for the root): id and name. */
export function documentsWithBytes(
  db: DatabaseSync,
  personId: string,
  folderId: string | null,
  sha256: string,
): Array<{ document_id: string; name: string }> {
  return statement(
    db,
    "SELECT document_id, name FROM cat_documents WHERE person_id = ? AND folder_id IS ? AND sha256 = ?",
  ).all(personId, folderId, sha256) as Array<{ document_id: string; name: string }>;
}

// ---------------------------------------------------------------------------

/** Which documents a listing covers: folders (already expanded) and single documents, of one person. */
export interface DocumentScope {
  personId: string;
  /** Folder ids, already expanded to include everything inside; null means every document of the person. */
  folderIds: readonly string[] | null;
  /** Single documents in scope besides the folders. */
  documentIds: readonly string[];
}

/** Documents in a scope, newest first, with the total. */
export function listDocuments(
  db: DatabaseSync,
  scope: DocumentScope,
  page: { limit: number; offset: number },
): { total: number; items: DocumentRow[] } {
  const where = scope.folderIds === null
    ? "person_id = ?"
    : `person_id = ? AND (folder_id IN (SELECT value FROM json_each(?)) OR document_id IN (SELECT value FROM json_each(?)))`;
  const params = scope.folderIds === null
    ? [scope.personId]
    : [scope.personId, JSON.stringify(scope.folderIds), JSON.stringify(scope.documentIds)];
  const rows = statement(
    db,
    `SELECT * FROM cat_documents WHERE ${where} ORDER BY uploaded_position DESC LIMIT ? OFFSET ?`,
  ).all(...params, page.limit, page.offset) as unknown as RawDocument[];
  // A first page that is not full holds everything: no need to count.
  const total = page.offset === 0 && rows.length < page.limit
    ? rows.length
    : (statement(db, `SELECT count(*) AS n FROM cat_documents WHERE ${where}`).get(...params) as {
      n: number;
    }).n;
  return { total, items: rows.map(toDocument) };
}

/** Pages `from` to `to` of a document, in order. */
export function getPages(db: DatabaseSync, documentId: string, from: number, to: number): PageRow[] {
  const rows = statement(
    db,
    "SELECT page, text, marked, image_only FROM cat_pages WHERE document_id = ? AND page BETWEEN ? AND ? ORDER BY page",
  ).all(documentId, from, to) as Array<{ page: number; text: string; marked: number; image_only: number }>;
  return rows.map((row) => ({
    page: row.page,
    text: row.text,
    marked: row.marked === 1,
    image_only: row.image_only === 1,
  }));
}

/** How far a Standard transcription has got, while the document is processing; null when none is running. */
export function getProgress(
  db: DatabaseSync,
  documentId: string,
): { pages_done: number; pages_total: number } | null {
  const row = statement(db, "SELECT pages_done, pages_total FROM cat_progress WHERE document_id = ?").get(
    documentId,
  ) as { pages_done: number; pages_total: number } | undefined;
  return row ? { pages_done: row.pages_done, pages_total: row.pages_total } : null;
}

/** A document's chunks in reading order. */
export function getChunks(db: DatabaseSync, documentId: string): ChunkRow[] {
  return statement(db, "SELECT ord, page, section, text FROM cat_chunks WHERE document_id = ? ORDER BY ord")
    .all(
      documentId,
    ) as unknown as ChunkRow[];
}

/**
 * Documents waiting to be read that a worker may take now, oldest first: no one
 * holds a live lease on them (leases are ISO times, compared as text), or the
 * lease is `reclaimFor`'s own from before a restart. At most `limit`, found
 * through a partial index, so a worker looking for its next few documents does
 * not read a whole backlog each time.
 */
export function claimableProcessing(
  db: DatabaseSync,
  options: { now: Date; reclaimFor: string | null; limit: number },
): DocumentRow[] {
  const rows = statement(
    db,
    `SELECT * FROM cat_documents WHERE status = 'processing'
       AND (processing_worker IS NULL OR processing_lease_until IS NULL OR processing_lease_until <= ?
            OR processing_worker = ?)
     ORDER BY uploaded_position LIMIT ?`,
  ).all(options.now.toISOString(), options.reclaimFor, options.limit) as unknown as RawDocument[];
  return rows.map(toDocument);
}

/**
 * Documents whose processing is pending and free to claim (as
 * {@link claimableProcessing}), at most `perPerson` of each person, in turns:
 * everyone's oldest first, then everyone's second, … (so a worker takes turns
 * between people instead of working down one person's backlog).
 */
export function claimableProcessingPerPerson(
  db: DatabaseSync,
  options: { now: Date; reclaimFor: string | null; perPerson: number },
): DocumentRow[] {
  const rows = statement(
    db,
    `SELECT * FROM (
       SELECT d.*, ROW_NUMBER() OVER (PARTITION BY d.person_id ORDER BY d.uploaded_position) AS turn
       FROM cat_documents d WHERE d.status = 'processing'
         AND (d.processing_worker IS NULL OR d.processing_lease_until IS NULL OR d.processing_lease_until <= ?
              OR d.processing_worker = ?)
     ) WHERE turn <= ? ORDER BY turn, uploaded_position`,
  ).all(options.now.toISOString(), options.reclaimFor, options.perPerson) as unknown as Array<
    RawDocument & { turn: number }
  >;
  return rows.map(({ turn: _turn, ...raw }) => toDocument(raw));
}

/**
 * The oldest `perPerson` documents of each person whose PDF copy is pending
 * and whose processing has finished, each person's oldest first (so a worker
 * can take turns between people instead of working down one person's backlog).
 */
export function copiesReadyPerPerson(
  db: DatabaseSync,
  perPerson: number,
  leases: { now: Date; reclaimFor: string | null },
): DocumentRow[] {
  // A copy another worker holds a live lease on is not ready (leases are ISO times, compared as text).
  const rows = statement(
    db,
    `SELECT * FROM (
       SELECT d.*, ROW_NUMBER() OVER (PARTITION BY d.person_id ORDER BY d.uploaded_position) AS turn
       FROM cat_documents d LEFT JOIN cat_copy_leases l ON l.document_id = d.document_id
       WHERE d.pdf_copy_status = 'pending' AND d.status <> 'processing'
         AND (l.document_id IS NULL OR l.lease_until <= ? OR l.worker = ?)
     ) WHERE turn <= ? ORDER BY turn, uploaded_position`,
  ).all(leases.now.toISOString(), leases.reclaimFor, perPerson) as unknown as Array<
    RawDocument & { turn: number }
  >;
  return rows.map(({ turn: _turn, ...raw }) => toDocument(raw));
}

/**
 * Documents whose PDF copy is pending and whose processing has finished (Word
 * chunks take the copy's pages, so the copy waits for them), oldest first, at
 * most `limit`.
 */
export function copiesReady(db: DatabaseSync, limit: number): DocumentRow[] {
  const rows = statement(
    db,
    `SELECT * FROM cat_documents WHERE pdf_copy_status = 'pending' AND status <> 'processing'
     ORDER BY uploaded_position LIMIT ?`,
  ).all(limit) as unknown as RawDocument[];
  return rows.map(toDocument);
}

// ---------------------------------------------------------------------------
// Reads the edges asked for (the console's search, the MCP key scope): kept
// together here so the catalogue stays the only code that queries its tables.

/** The ids of a person's documents at the top, in no folder. */
export function rootDocumentIds(db: DatabaseSync, personId: string): string[] {
  const rows = statement(
    db,
    "SELECT document_id FROM cat_documents WHERE person_id = ? AND folder_id IS NULL",
  )
    .all(personId) as Array<{ document_id: string }>;
  return rows.map((row) => row.document_id);
}

/** The names of those of these folders that are the person's, by folder id (others left out). */
export function folderNamesOf(
  db: DatabaseSync,
  personId: string,
  folderIds: readonly string[],
): Map<string, string> {
  const rows = statement(
    db,
    "SELECT folder_id, name FROM cat_folders WHERE person_id = ? AND folder_id IN (SELECT value FROM json_each(?))",
  ).all(personId, JSON.stringify(folderIds)) as Array<{ folder_id: string; name: string }>;
  return new Map(rows.map((row) => [row.folder_id, row.name]));
}

/** The ids of the folders holding these documents of a person (each once; the top is not a folder). */
export function foldersHolding(db: DatabaseSync, personId: string, documentIds: readonly string[]): string[] {
  const rows = statement(
    db,
    `SELECT DISTINCT folder_id FROM cat_documents WHERE person_id = ? AND folder_id IS NOT NULL
       AND document_id IN (SELECT value FROM json_each(?))`,
  ).all(personId, JSON.stringify(documentIds)) as Array<{ folder_id: string }>;
  return rows.map((row) => row.folder_id);
}
