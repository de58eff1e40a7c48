/**
 * The API's document routes: list, upload (streamed, one or many files),
 * read, move, delete, process again, PDF copy, pages, the original file.
 *
 * @module
 */
import { z } from "zod";
import {
  type DocumentRow,
  expandFolders,
  folderValue,
  getFolder,
  getPages,
  getPerson,
  getProgress,
  listDocuments,
} from "../../projections/catalogue.ts";
import {
  deleteDocument,
  moveDocument,
  requestPdfCopy,
  requestProcessing,
  requireDocument,
  uploadFile,
} from "../domain/documents.ts";
import { DomainError } from "../domain/errors.ts";
import { ensureFolderPath, requireFolder, requireFolderPath } from "../domain/folders.ts";
import { oneAtATime } from "../domain/locks.ts";
import { errorResponse, json } from "../http/json.ts";
import { type ApiDeps, parseQuery, type Route, route, type RouteContext } from "./route.ts";
import { streamUploads, UploadSlots } from "./uploads.ts";

/** Streams an upload's files to disk and records each as a document. */
async function upload(
  { caller, request, url, actor }: Pick<RouteContext, "caller" | "request" | "url" | "actor">,
  s: ApiDeps,
): Promise<Response> {
  const uploads = await streamUploads(request, url, s.app.blobs, s.config.maxUploadBytes);
  const created: Record<string, unknown>[] = [];
  const errors: Array<{ name: string; code: string; message: string }> = [];
  try {
    let folderId = uploads.fields.folder_id
      ? requireFolder(s.app.db, caller.personId, uploads.fields.folder_id).folder_id
      : uploads.fields.folder
      ? requireFolderPath(s.app.db, caller.personId, uploads.fields.folder).folder_id
      : null;
    // A dropped folder: its files go into a matching tree under the chosen folder, made as needed.
    if (uploads.fields.subfolder) {
      const base = folderId ? requireFolder(s.app.db, caller.personId, folderId).path : "";
      const path = base ? `${base}/${uploads.fields.subfolder}` : uploads.fields.subfolder;
      // Files of one dropped folder arrive side by side: one makes each folder, the others find it.
      folderId = (await oneAtATime(
        `folders/${caller.personId}`,
        () => ensureFolderPath(s.app, { personId: caller.personId, path }, actor),
      )).folder_id;
    }
    for (const file of uploads.files) {
      try {
        const doc = await uploadFile(s.app, {
          personId: caller.personId,
          folderId,
          name: file.name,
          tempPath: file.tempPath,
          preset: uploads.fields.preset ?? "basic",
          refuseDuplicate: uploads.fields.duplicates === "refuse",
        }, actor);
        created.push(documentJson(s, doc));
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        errors.push({ name: file.name, code: error.code, message: error.message });
      }
    }
  } finally {
    for (const file of uploads.files) await Deno.remove(file.tempPath).catch(() => {});
  }
  if (created.length === 0 && errors.length === 1) {
    const e = errors[0]!;
    return errorResponse(
      e.code === "unsupported" ? 415 : e.code === "conflict" ? 409 : 400,
      e.code,
      e.message,
    );
  }
  return json({ documents: created, ...(errors.length ? { errors } : {}) }, created.length ? 201 : 400);
}

/** The uploads arriving now, per person, of each server. */
const uploadSlots = new WeakMap<ApiDeps, UploadSlots>();

const documentPatch = z.object({ folder_id: z.string().nullable() }).strict();
const processBody = z.object({ preset: z.enum(["basic", "standard", "none"]).default("basic") }).strict();
const listQuery = z.object({
  folder_id: z.string().optional().describe("Only this folder (with every folder inside it)"),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe("How many documents"),
  offset: z.coerce.number().int().min(0).default(0).describe("Skip this many (newest first)"),
});

/** A document as the API shows it. */
export function documentJson(services: ApiDeps, doc: DocumentRow): Record<string, unknown> {
  const person = getPerson(services.app.db, doc.person_id);
  const progress = doc.status === "processing" ? getProgress(services.app.db, doc.document_id) : null;
  const folder = doc.folder_id === null ? undefined : getFolder(services.app.db, doc.folder_id);
  return {
    id: doc.document_id,
    name: doc.name,
    folder_id: doc.folder_id,
    folder: folderValue(person?.name ?? "", folder?.path ?? null),
    type: doc.type,
    size: doc.size,
    sha256: doc.sha256,
    uploaded: doc.uploaded_at,
    preset: doc.preset,
    status: doc.status,
    ...(doc.failure_reason ? { reason: doc.failure_reason } : {}),
    ...(doc.status === "processing" && progress ? { transcribed: progress } : {}),
    pages: doc.page_count,
    pages_estimated: doc.pages_estimated,
    pages_to_view: doc.pages_to_view,
    image_only_pages: doc.image_only_pages,
    pdf_copy: {
      status: doc.pdf_copy_status,
      ...(doc.pdf_copy_pages ? { pages: doc.pdf_copy_pages } : {}),
      ...(doc.pdf_copy_reason ? { reason: doc.pdf_copy_reason } : {}),
    },
  };
}

/** A file name for the plain `filename=` parameter: ASCII, no quotes or backslashes. */
function asciiName(name: string): string {
  return name.replace(/[^\x20-\x7e]|["\\]/g, "_");
}

/** The document routes, in the order the API page lists them. */
export const DOCUMENT_ROUTES: Route[] = [
  route("GET", "/api/documents", {
    summary: "The caller's documents, newest first; ?folder_id= narrows to a folder (with everything inside)",
    query: listQuery,
    handle: ({ caller, url }, s) => {
      const q = parseQuery(listQuery, url);
      let folderIds: string[] | null = null;
      if (q.folder_id !== undefined) {
        folderIds = expandFolders(s.app.db, [
          requireFolder(s.app.db, caller.personId, q.folder_id).folder_id,
        ]);
      }
      const { total, items } = listDocuments(s.app.db, {
        personId: caller.personId,
        folderIds,
        documentIds: [],
      }, q);
      return Promise.resolve(json({ total, items: items.map((d) => documentJson(s, d)) }));
    },
  }),
  route("POST", "/api/documents", {
    summary:
      "Upload: multipart/form-data (fields folder_id or folder, preset; one or more files) or a raw body with ?name=&folder=&preset=",
    raw: true,
    handle: async ({ caller, request, url, actor }, s) => {
      let slots = uploadSlots.get(s);
      if (!slots) uploadSlots.set(s, slots = new UploadSlots());
      const release = slots.take(caller.personId);
      if (!release) {
        await request.body?.cancel().catch(() => {});
        return errorResponse(429, "too_many_uploads", slots.message);
      }
      try {
        return await upload({ caller, request, url, actor }, s);
      } finally {
        release();
      }
    },
  }),
  route("GET", "/api/documents/:id", {
    summary: "One document",
    handle: ({ caller, params }, s) =>
      Promise.resolve(json(documentJson(s, requireDocument(s.app.db, caller.personId, params.id!)))),
  }),
  route("PATCH", "/api/documents/:id", {
    summary: "Move a document to another folder (null for the root)",
    body: documentPatch,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof documentPatch>;
      const doc = await moveDocument(s.app, {
        personId: caller.personId,
        documentId: params.id!,
        folderId: b.folder_id,
      }, actor);
      return json(documentJson(s, doc));
    },
  }),
  route("DELETE", "/api/documents/:id", {
    summary: "Delete a document",
    handle: async ({ caller, params, actor }, s) => {
      await deleteDocument(s.app, { personId: caller.personId, documentId: params.id! }, actor);
      return new Response(null, { status: 204 });
    },
  }),
  route("POST", "/api/documents/:id/process", {
    summary: "Process a document again with a preset",
    body: processBody,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof processBody>;
      const doc = await requestProcessing(s.app, {
        personId: caller.personId,
        documentId: params.id!,
        preset: b.preset,
      }, actor);
      return json(documentJson(s, doc), 202);
    },
  }),
  route("POST", "/api/documents/:id/pdf-copy", {
    summary: "Make a PDF copy of an Office or text file",
    handle: async ({ caller, params, actor }, s) => {
      const doc = await requestPdfCopy(s.app, { personId: caller.personId, documentId: params.id! }, actor);
      return json(documentJson(s, doc), 202);
    },
  }),
  route("GET", "/api/documents/:id/pages/:page", {
    summary: "One page's text and marks",
    handle: ({ caller, params }, s) => {
      const doc = requireDocument(s.app.db, caller.personId, params.id!);
      const n = Number(params.page);
      const page = Number.isInteger(n) ? getPages(s.app.db, doc.document_id, n, n)[0] : undefined;
      if (!page) throw new DomainError("not_found", `"${doc.name}" has no page ${params.page}`);
      return Promise.resolve(json({ document_id: doc.document_id, ...page }));
    },
  }),
  route("GET", "/api/documents/:id/original", {
    summary: "The file as it was uploaded, byte for byte (Content-Disposition: attachment)",
    handle: async ({ caller, params }, s) => {
      const doc = requireDocument(s.app.db, caller.personId, params.id!);
      const body = await s.app.blobs.stream(doc.sha256);
      return new Response(body, {
        headers: {
          "content-type": "application/octet-stream",
          "content-length": String(doc.size),
          "content-disposition": `attachment; filename="${asciiName(doc.name)}"; filename*=UTF-8''${
            encodeURIComponent(doc.name)
          }`,
          "cache-control": "private, no-store",
          "x-content-type-options": "nosniff",
        },
      });
    },
  }),
  route("GET", "/api/documents/:id/pages/:page/image", {
    summary: "One page as a PNG (the same drawing as view_page)",
    handle: async ({ caller, params }, s) => {
      const doc = requireDocument(s.app.db, caller.personId, params.id!);
      const png = await s.pagePicture(doc, Number(params.page), "image");
      return new Response(png as Uint8Array<ArrayBuffer>, {
        headers: { "content-type": "image/png", "cache-control": "private, max-age=3600" },
      });
    },
  }),
];
