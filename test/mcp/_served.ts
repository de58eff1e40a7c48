/**
 * A whole server for MCP tests whose data is made the way users make it: the
 * domain commands add people, folders, uploads and keys, the processing
 * worker reads the files, the PDF copy worker (LibreOffice) copies decks, and
 * every call goes through the server's HTTP handler to `/mcp`.
 *
 * @module
 */
import { type DocumentRow, getDocument } from "../../projections/catalogue.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { createAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import type { CanRead } from "../../events/types.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { waitFor } from "../helpers/wait.ts";
import { type TestServer, testServer } from "../http/_server.ts";

/** A server under test with a person. */
export interface Served extends AsyncDisposable {
  server: TestServer;
  personId: string;
  /** Creates a folder (under `parent` when given); returns its id. */
  folder(name: string, parent?: string | null): Promise<string>;
  /** Uploads a corpus file (a path under the corpus) or bytes; returns the document id (not read yet). */
  upload(
    file: string | { name: string; bytes: Uint8Array },
    options?: { folder?: string | null; preset?: "basic" | "none" },
  ): Promise<string>;
  /** Reads every uploaded document with the real processing worker. */
  process(): Promise<void>;
  /** Makes the PDF copies that are due (LibreOffice), and waits for them. */
  copy(): Promise<void>;
  /** Creates an agent key; returns its value. */
  key(name: string, canRead: CanRead): Promise<string>;
  document(id: string): DocumentRow;
  /** Calls a tool through `/mcp`; returns the JSON-RPC result. */
  call(key: string, name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** Sends one JSON-RPC message to `/mcp`. */
  post(key: string | null, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** A tool's result as the endpoint sends it. */
export interface ToolResult {
  content: Array<Record<string, string>>;
  isError: boolean;
}

/** Starts a server over a fresh data directory, with Ava Bennett, and settings from `env`. */
export async function served(
  env: Record<string, string> = {},
  options: { now?: () => Date } = {},
): Promise<Served> {
  const server = await testServer({
    env: { SERGO_RATE_LIMIT: "100000", SERGO_RATE_BURST: "100000", ...env },
    now: options.now,
  });
  const { app } = server;
  const person = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  let calls = 0;
  const post = (key: string | null, body: unknown, headers: Record<string, string> = {}) =>
    server.fetch("/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return {
    server,
    personId: person.person_id,
    async folder(name, parent = null) {
      return (await createFolder(app, { personId: person.person_id, parentId: parent, name }, "cli"))
        .folder_id;
    },
    async upload(file, options = {}) {
      const tempPath = await Deno.makeTempFile({ prefix: "sergo-upload-" });
      const name = typeof file === "string" ? file.split("/").pop()! : file.name;
      if (typeof file === "string") await Deno.copyFile(`${CORPUS_DIR}/${file}`, tempPath);
      else await Deno.writeFile(tempPath, file.bytes);
      const row = await uploadFile(app, {
        personId: person.person_id,
        folderId: options.folder ?? null,
        name,
        tempPath,
        preset: options.preset,
      }, "cli");
      return row.document_id;
    },
    async process() {
      const pool = createExtractionPool({ concurrency: 1 });
      try {
        const worker = new ProcessingWorker(app, pool, { workerId: "test", concurrency: 1 });
        worker.kick();
        await worker.drain();
      } finally {
        await pool.close();
      }
    },
    async copy() {
      const pending = () =>
        app.db.prepare("SELECT name FROM cat_documents WHERE pdf_copy_status = 'pending'").all()
          .map((row) => row.name as string);
      await waitFor(() => {
        server.services.kick();
        return pending().length === 0;
      }, {
        ms: 180_000,
        everyMs: 100,
        what: "every pending PDF copy is made or its failure recorded",
        detail: () => `still pending: ${pending().join(", ")}`,
      });
    },
    async key(name, canRead) {
      return (await createAgentKey(
        app,
        { personId: person.person_id, name, description: "", canRead },
        "cli",
      ))
        .value;
    },
    document(id) {
      return getDocument(app.db, id)!;
    },
    async call(key, name, args) {
      const response = await post(key, {
        jsonrpc: "2.0",
        id: ++calls,
        method: "tools/call",
        params: { name, arguments: args },
      });
      const body = await response.json();
      if (!body.result) throw new Error(`No result: ${response.status} ${JSON.stringify(body)}`);
      return body.result;
    },
    post,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
