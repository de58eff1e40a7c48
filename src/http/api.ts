/**
 * The REST API under `/api/`: the caller, folders, documents (with streamed
 * uploads), agent keys, personal keys, and the audit. Bodies are validated
 * with zod, and `/api/openapi.json` is generated from the same schemas.
 *
 * @module
 */
import { z } from "zod";
import {
  type DocumentRow,
  folderValue,
  getPages,
  getPerson,
  getProgress,
  listDocuments,
  listFolders,
} from "../../projections/catalogue.ts";
import { type AgentKey, listAgentKeys, oldValues, personalKeys } from "../../projections/key_scopes.ts";
import { type ApiCaller, authenticateApi } from "../auth/api_auth.ts";
import { maskKey } from "../domain/key_format.ts";
import {
  deleteDocument,
  moveDocument,
  requestPdfCopy,
  requestProcessing,
  requireDocument,
  uploadFile,
} from "../domain/documents.ts";
import { DomainError } from "../domain/errors.ts";
import { oneAtATime } from "../domain/locks.ts";
import {
  createFolder,
  deleteFolder,
  ensureFolderPath,
  moveFolder,
  renameFolder,
  requireFolder,
  requireFolderPath,
} from "../domain/folders.ts";
import {
  changeAgentKey,
  createAgentKey,
  createPersonalKey,
  deleteAgentKey,
  deletePersonalKey,
  requireAgentKey,
  revokeLoginToken,
  rollAgentKey,
} from "../domain/keys.ts";
import type { ApiDeps } from "../api/deps.ts";
import { consoleSearch } from "../console/search.ts";
import { type DocumentedRoute, OTHER_ROUTES } from "./other_routes.ts";
import { VERSION } from "../version.ts";
import { errorResponse, errorToResponse, json, notFound } from "./json.ts";
import { readBodyText } from "./read_body.ts";
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

/** The largest JSON body the API reads. */
const MAX_JSON_BODY = 1_000_000;

/** A route's context: the request, its caller and the path's groups. */
interface RouteContext {
  request: Request;
  url: URL;
  caller: ApiCaller;
  params: Record<string, string>;
  body: unknown;
  actor: string;
}

interface Route {
  method: string;
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The JSON answer's shape, for the OpenAPI document. */
  answer?: z.ZodType;
  /** Handles the request body itself (uploads). */
  raw?: boolean;
  handle(context: RouteContext, services: ApiDeps): Promise<Response>;
  pattern: URLPattern;
}

const folderBody = z.object({
  name: z.string().optional().describe("The new folder's name (with parent_id), or leave out and give path"),
  parent_id: z.string().nullable().optional().describe("The parent folder's id; null or absent for the root"),
  path: z.string().optional().describe("A path such as Energy outlooks/Basic; missing folders are made"),
}).strict();
const folderPatch = z.object({
  name: z.string().optional(),
  parent_id: z.string().nullable().optional().describe("Move under this folder; null for the root"),
}).strict();
const canRead = z.object({
  folders: z.array(z.string()).max(1000).default([]),
  documents: z.array(z.string()).max(1000).default([]),
}).strict();
const keyBody = z.object({
  name: z.string(),
  description: z.string().default(""),
  can_read: canRead.default({ folders: [], documents: [] }),
}).strict();
const keyPatch = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  can_read: canRead.optional(),
}).strict();
const rollBody = z.object({ grace: z.enum(["now", "1h", "24h", "7d"]) }).strict();
const documentPatch = z.object({ folder_id: z.string().nullable() }).strict();
const processBody = z.object({ preset: z.enum(["basic", "standard", "none"]).default("basic") }).strict();
const listQuery = z.object({
  folder_id: z.string().optional().describe("Only this folder (with every folder inside it)"),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe("How many documents"),
  offset: z.coerce.number().int().min(0).default(0).describe("Skip this many (newest first)"),
});
const searchQuery = z.object({
  q: z.string().trim().min(1).max(500).describe("What to look for, in any language"),
  as: z.string().optional().describe(
    "An agent key's id: search only what that key can read, as its agent would",
  ),
  offset: z.coerce.number().int().min(0).max(80).default(0).describe(
    "Skip this many results: the answer's next_offset",
  ),
});
const searchAnswer = z.object({
  query: z.string(),
  as_key: z.object({ id: z.string(), name: z.string() }).nullable().describe("The key searched as, if any"),
  documents: z.array(z.object({
    document_id: z.string(),
    document: z.string().describe("The file name"),
    folder: z.string(),
    pages_estimated: z.literal(true).optional(),
    image_only_pages: z.array(z.number().int()).optional(),
    hits: z.array(z.object({
      page: z.number().int().optional(),
      section: z.string().optional(),
      view_page_may_help: z.literal(true).optional().describe("The page may hold a figure, chart or table"),
      excerpt: z.string().describe("The passage, with the matching words marked"),
    })),
  })).describe("The search tool's own answer: the best excerpts, grouped by document"),
  message: z.string().nullable().describe("The tool's sentence when there is nothing to show, or why not"),
  next_offset: z.number().int().nullable().describe("Pass it as offset for more results; null when done"),
  offset: z.number().int(),
}).describe("Audited as the person: a console search entry with the pages it showed");

/** A document as the API shows it. */
export function documentJson(services: ApiDeps, doc: DocumentRow): Record<string, unknown> {
  const person = getPerson(services.app.db, doc.person_id);
  const progress = doc.status === "processing" ? getProgress(services.app.db, doc.document_id) : null;
  const folder = doc.folder_id === null
    ? null
    : services.app.db.prepare("SELECT path FROM cat_folders WHERE folder_id = ?").get(doc.folder_id) as
      | { path: string }
      | undefined;
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

/** An agent key as the API shows it: masked, with its old values still in their grace time. */
export function keyJson(services: ApiDeps, key: AgentKey): Record<string, unknown> {
  return {
    id: key.key_id,
    name: key.name,
    description: key.description,
    can_read: key.can_read,
    key: maskKey("agent", key.last4),
    created: key.created_at,
    old_values: oldValues(services.app.db, key.key_id, services.app.now()).map((v) => ({
      key: maskKey("agent", v.last4),
      works_until: v.expires_at,
    })),
  };
}

/** A file name for the plain `filename=` parameter: ASCII, no quotes or backslashes. */
function asciiName(name: string): string {
  return name.replace(/[^\x20-\x7e]|["\\]/g, "_");
}

function route(method: string, path: string, spec: Omit<Route, "method" | "path" | "pattern">): Route {
  return { method, path, ...spec, pattern: new URLPattern({ pathname: path }) };
}

const ROUTES: Route[] = [
  route("GET", "/api/me", {
    summary: "The caller: who they are",
    handle: ({ caller }, s) => {
      const person = getPerson(s.app.db, caller.personId)!;
      return Promise.resolve(
        json({ id: person.person_id, name: person.name, email: person.email, via: caller.kind }),
      );
    },
  }),
  route("GET", "/api/folders", {
    summary: "Every folder of the caller, by path",
    handle: ({ caller }, s) => {
      const person = getPerson(s.app.db, caller.personId)!;
      return Promise.resolve(json({
        root: folderValue(person.name, null),
        folders: listFolders(s.app.db, caller.personId).map((f) => ({
          id: f.folder_id,
          name: f.name,
          parent_id: f.parent_id,
          path: f.path,
          folder: folderValue(person.name, f.path),
        })),
      }));
    },
  }),
  route("POST", "/api/folders", {
    summary: "Create a folder (name + parent_id) or a path",
    body: folderBody,
    handle: async ({ caller, body, actor }, s) => {
      const b = body as z.infer<typeof folderBody>;
      const folder = b.path !== undefined
        ? await ensureFolderPath(s.app, { personId: caller.personId, path: b.path }, actor)
        : await createFolder(s.app, {
          personId: caller.personId,
          parentId: b.parent_id ?? null,
          name: b.name ?? "",
        }, actor);
      return json(
        { id: folder.folder_id, name: folder.name, parent_id: folder.parent_id, path: folder.path },
        201,
      );
    },
  }),
  route("PATCH", "/api/folders/:id", {
    summary: "Rename or move a folder; its id stays",
    body: folderPatch,
    handle: async ({ caller, body, params, actor }, s) => {
      const b = body as z.infer<typeof folderPatch>;
      requireFolder(s.app.db, caller.personId, params.id!);
      if (b.name !== undefined) {
        await renameFolder(s.app, { personId: caller.personId, folderId: params.id!, name: b.name }, actor);
      }
      if (b.parent_id !== undefined) {
        await moveFolder(
          s.app,
          { personId: caller.personId, folderId: params.id!, parentId: b.parent_id },
          actor,
        );
      }
      const f = requireFolder(s.app.db, caller.personId, params.id!);
      return json({ id: f.folder_id, name: f.name, parent_id: f.parent_id, path: f.path });
    },
  }),
  route("DELETE", "/api/folders/:id", {
    summary: "Delete a folder; one that holds anything needs ?recursive=true",
    handle: async ({ caller, params, url, actor }, s) => {
      await deleteFolder(s.app, {
        personId: caller.personId,
        folderId: params.id!,
        recursive: url.searchParams.get("recursive") === "true",
      }, actor);
      return new Response(null, { status: 204 });
    },
  }),
  route("GET", "/api/documents", {
    summary: "The caller's documents, newest first; ?folder_id= narrows to a folder (with everything inside)",
    query: listQuery,
    handle: ({ caller, url }, s) => {
      const q = parseQuery(listQuery, url);
      let folderIds: string[] | null = null;
      if (q.folder_id !== undefined) {
        requireFolder(s.app.db, caller.personId, q.folder_id);
        folderIds = s.app.db.prepare(
          `WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT f.folder_id FROM cat_folders f JOIN t ON f.parent_id = t.id)
           SELECT id FROM t`,
        ).all(q.folder_id).map((r) => (r as { id: string }).id);
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
  route("GET", "/api/search", {
    summary:
      "Search the caller's documents, or as one of their agent keys sees them: the search tool's excerpts, pages and marks",
    query: searchQuery,
    answer: searchAnswer,
    handle: async ({ caller, url }, s) => {
      const q = parseQuery(searchQuery, url);
      const result = await consoleSearch(s, getPerson(s.app.db, caller.personId)!, {
        query: q.q,
        asKeyId: q.as || null,
        offset: q.offset,
      });
      return json({
        query: result.query,
        as_key: result.asKey,
        documents: result.documents,
        message: result.message,
        next_offset: result.nextOffset,
        offset: result.offset,
      });
    },
  }),
  route("GET", "/api/keys", {
    summary: "The caller's agent keys, masked",
    handle: ({ caller }, s) =>
      Promise.resolve(json({ keys: listAgentKeys(s.app.db, caller.personId).map((k) => keyJson(s, k)) })),
  }),
  route("POST", "/api/keys", {
    summary: "Create an agent key; its value is in this answer only",
    body: keyBody,
    handle: async ({ caller, body, actor }, s) => {
      const b = body as z.infer<typeof keyBody>;
      const { key, value } = await createAgentKey(s.app, {
        personId: caller.personId,
        name: b.name,
        description: b.description,
        canRead: b.can_read,
        requireScope: caller.kind === "login",
      }, actor);
      return json({ ...keyJson(s, key), value }, 201);
    },
  }),
  route("PATCH", "/api/keys/:id", {
    summary: "Change an agent key's name, description or what it can read",
    body: keyPatch,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof keyPatch>;
      const key = await changeAgentKey(s.app, {
        personId: caller.personId,
        keyId: params.id!,
        name: b.name,
        description: b.description,
        canRead: b.can_read,
        requireScope: caller.kind === "login",
      }, actor);
      return json(keyJson(s, key));
    },
  }),
  route("POST", "/api/keys/:id/roll", {
    summary: "Roll an agent key: a new value; the old one works for the grace time",
    body: rollBody,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof rollBody>;
      const rolled = await rollAgentKey(s.app, {
        personId: caller.personId,
        keyId: params.id!,
        grace: b.grace,
      }, actor);
      return json({
        ...keyJson(s, rolled.key),
        value: rolled.value,
        old_value_works_until: rolled.oldExpiresAt,
      });
    },
  }),
  route("DELETE", "/api/keys/:id", {
    summary: "Delete an agent key: every value stops at once",
    handle: async ({ caller, params, actor }, s) => {
      requireAgentKey(s.app.db, caller.personId, params.id!);
      await deleteAgentKey(s.app, { personId: caller.personId, keyId: params.id! }, actor);
      return new Response(null, { status: 204 });
    },
  }),
  route("GET", "/api/personal-keys", {
    summary: "The caller's personal keys, masked",
    handle: ({ caller }, s) =>
      Promise.resolve(json({
        keys: personalKeys(s.app.db, caller.personId).map((k) => ({
          id: k.key_id,
          key: maskKey("personal", k.last4),
          created: k.created_at,
        })),
      })),
  }),
  route("POST", "/api/personal-keys", {
    summary: "Create a personal key; its value is in this answer only",
    handle: async ({ caller, actor }, s) => {
      const { keyId, value } = await createPersonalKey(s.app, { personId: caller.personId }, actor);
      return json({ id: keyId, value }, 201);
    },
  }),
  route("DELETE", "/api/personal-keys/:id", {
    summary: "Delete a personal key",
    handle: async ({ caller, params, actor }, s) => {
      await deletePersonalKey(s.app, { personId: caller.personId, keyId: params.id! }, actor);
      return new Response(null, { status: 204 });
    },
  }),
  route("DELETE", "/api/session", {
    summary: "Sign out: revoke the login token this request carries",
    handle: async ({ caller, actor }, s) => {
      if (caller.kind !== "login") {
        throw new DomainError("invalid", "Only a login token can sign out; this request used a personal key");
      }
      await revokeLoginToken(s.app, { tokenId: caller.credentialId }, actor);
      return new Response(null, { status: 204 });
    },
  }),
];

function parseQuery<T extends z.ZodObject>(schema: T, url: URL): z.infer<T> {
  const result = schema.safeParse(Object.fromEntries(url.searchParams));
  if (!result.success) throw new DomainError("invalid", zodMessage(result.error));
  return result.data;
}

/** One sentence from a zod error: which field and what is wrong. */
export function zodMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "The request is not valid";
  const where = issue.path.length ? `"${issue.path.join(".")}"` : "The body";
  if (issue.code === "unrecognized_keys") {
    return `Unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
  }
  return `${where}: ${issue.message}`;
}

/** The tag a REST route is listed under on the API page. */
function tagOf(path: string): string {
  const part = path.split("/")[2] ?? "";
  return {
    me: "Account",
    session: "Account",
    folders: "Folders",
    documents: "Documents",
    search: "Search",
    keys: "Agent keys",
    "personal-keys": "Personal keys",
  }[part] ?? "Account";
}

/** A zod schema as the JSON Schema an OpenAPI operation embeds (without its own `$schema`). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

/** A zod object's fields as OpenAPI query parameters. */
function queryParameters(schema: z.ZodObject): Record<string, unknown>[] {
  const json = z.toJSONSchema(schema, { io: "input" }) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, { description, ...rest }]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    ...(description ? { description } : {}),
    schema: rest,
  }));
}

const SECURITY: Record<DocumentedRoute["security"], unknown[]> = {
  bearer: [{ bearer: [] }, { session: [] }],
  "agent-key": [{ agentKey: [] }],
  session: [{ session: [] }],
  none: [],
};

/**
 * The OpenAPI 3.1 document of every route the server answers: the REST table
 * (generated from its zod schemas) and the routes outside it (other_routes.ts).
 */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (method: string, path: string, operation: Record<string, unknown>) => {
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = operation;
  };
  const pathParameters = (path: string) =>
    [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
  for (const r of ROUTES) {
    const path = r.path.replace(/:(\w+)/g, "{$1}");
    const params = [...pathParameters(path), ...(r.query ? queryParameters(r.query) : [])];
    add(r.method, path, {
      tags: [tagOf(r.path)],
      summary: r.summary,
      ...(params.length ? { parameters: params } : {}),
      ...(r.body
        ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(r.body, "input") } },
          },
        }
        : {}),
      responses: {
        "default": {
          description: "JSON; errors are {code, message}",
          ...(r.answer
            ? { content: { "application/json": { schema: jsonSchema(r.answer, "output") } } }
            : {}),
        },
      },
      security: SECURITY.bearer,
    });
  }
  for (const r of OTHER_ROUTES) {
    const params = [
      ...pathParameters(r.path),
      ...(r.query ?? []).map((q) => ({ in: "query", required: false, ...q })),
    ];
    add(r.method, r.path, {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(params.length ? { parameters: params } : {}),
      responses: {
        "default": {
          description: r.security === "none" ? "The answer" : "The answer; without a valid credential, 401",
          content: Object.fromEntries(
            Object.entries(r.responses).map(([type, schema]) => [type, schema ? { schema } : {}]),
          ),
        },
      },
      security: SECURITY[r.security],
    });
  }
  add("GET", "/api/openapi.json", {
    tags: ["Server"],
    summary: "This OpenAPI document",
    responses: { "default": { description: "The document", content: { "application/json": {} } } },
    security: [],
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Sergo API",
      version: VERSION,
      description:
        "Every route Sergo answers: the REST API (a personal key, or the console's session cookie " +
        "with X-CSRF-Token for changes), the audit and its export, MCP, OAuth and the console's pages.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A personal key or a login token" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "sergo_session",
          description: "The console's sign-in; changes also need the X-CSRF-Token header",
        },
        agentKey: { type: "http", scheme: "bearer", description: "An agent key, or an OAuth access token" },
      },
    },
    paths,
  };
}

/** Builds the API handler over the services. */
export function createApi(services: ApiDeps): (request: Request) => Promise<Response> {
  const openapi = JSON.stringify(openApiDocument());
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/api/openapi.json" && request.method === "GET") {
      return new Response(openapi, { headers: { "content-type": "application/json" } });
    }
    const auth = authenticateApi(services.app.db, request, services.app.now());
    if (auth instanceof Response) return auth;
    if (auth.viaCookie && request.method !== "GET" && !services.checkCsrf(request)) {
      return errorResponse(403, "csrf", "This form has expired — reload the page and try again");
    }
    if (url.pathname.startsWith("/api/audit")) {
      const response = await services.audit(request, auth.personId);
      if (response) return response;
    }
    let methodMismatch = false;
    for (const r of ROUTES) {
      const match = r.pattern.exec({ pathname: url.pathname });
      if (!match) continue;
      if (r.method !== request.method) {
        methodMismatch = true;
        continue;
      }
      try {
        let body: unknown = undefined;
        if (r.body) {
          const type = request.headers.get("content-type") ?? "";
          if (!type.includes("application/json")) {
            return errorResponse(
              415,
              "unsupported",
              "Send the body as JSON (Content-Type: application/json)",
            );
          }
          const text = await readBodyText(request, MAX_JSON_BODY);
          if (text === null) {
            return errorResponse(413, "too_large", `The body is too large: at most ${MAX_JSON_BODY} bytes`);
          }
          let raw: unknown;
          try {
            raw = text === "" ? {} : JSON.parse(text);
          } catch {
            return errorResponse(400, "invalid", "The body is not valid JSON");
          }
          const parsed = r.body.safeParse(raw);
          if (!parsed.success) return errorResponse(400, "invalid", zodMessage(parsed.error));
          body = parsed.data;
        }
        return await r.handle({
          request,
          url,
          caller: auth,
          params: match.pathname.groups as Record<string, string>,
          body,
          actor: `person-${auth.personId}`,
        }, services);
      } catch (error) {
        return errorToResponse(error);
      }
    }
    if (methodMismatch) {
      return errorResponse(405, "method_not_allowed", `${request.method} is not allowed on ${url.pathname}`);
    }
    return notFound();
  };
}
