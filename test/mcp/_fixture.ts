/**
 * A real Sergo data set for the MCP tests, made the way users make it: an
 * open data directory (`openApp`: the SQLite log, every projection kept up to
 * date), people, folders, uploads and agent keys made by the domain
 * commands, and real corpus files read by the real processing worker.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { EventStore } from "../../events/store.ts";
import type { AppEventStore } from "../../src/app.ts";
import type { CanRead, SergoEvent } from "../../events/types.ts";
import { getAgentKey } from "../../projections/key_scopes.ts";
import { openApp, type SergoApp } from "../../src/app.ts";
import { BlobStore } from "../../src/blob_store.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { createFolder, renameFolder } from "../../src/domain/folders.ts";
import { changeAgentKey, createAgentKey, deleteAgentKey, rollAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { NOT_INSTALLED } from "../../src/pdf_copy/libreoffice.ts";
import { createExtractionPool, type ExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { needs } from "../helpers/dependencies.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import type { McpSettings } from "../../src/mcp/settings.ts";

/** The corpus folder. */
export const CORPUS = new URL("../corpus/", import.meta.url);

/** The MCP reference. */
export const REFERENCE = new URL("../../docs/reference/sergo-mcp-reference.txt", import.meta.url);

let people = 0;

/** A data directory with a log and projections. */
export class Fixture {
  readonly dir: string;
  readonly app: SergoApp;
  /** A document uploaded with `processed: false`, which later processing would read too. */
  #unread: string | null = null;
  #pool: ExtractionPool | null = null;

  private constructor(dir: string, app: SergoApp) {
    this.dir = dir;
    this.app = app;
  }

  /** Opens a fresh fixture in a temporary directory. */
  static async open(options: { writer?: "inline" | "thread" } = {}): Promise<Fixture> {
    const dir = await Deno.makeTempDir({ prefix: "sergo-mcp-" });
    return new Fixture(dir, await openApp(dir, { writer: options.writer }));
  }

  /** Opens the same data directory again (a restart, or a second process such as a CLI command). */
  static async reopen(dir: string): Promise<Fixture> {
    return new Fixture(dir, await openApp(dir));
  }

  get db() {
    return this.app.db;
  }

  get store(): AppEventStore {
    return this.app.store;
  }

  get projector() {
    return this.app.projector;
  }

  /**
   * The MCP endpoint over this fixture's projections and log, with a rate
   * limit no test reaches (10,000 a second) unless `settings` sets it.
   */
  endpoint(settings: Partial<McpSettings> = {}): (request: Request) => Promise<Response> {
    return createMcpEndpoint({
      db: this.db,
      store: this.store,
      settings: { rateLimitPerSecond: 10_000, ...settings },
    });
  }

  get blobs(): BlobStore {
    // The fixture's data directory keeps its blobs on disk.
    assert.ok(this.app.blobs instanceof BlobStore);
    return this.app.blobs;
  }

  /**
   * Appends events as they are to a stream: only for tests about how the
   * server takes one particular event (everything else goes through the
   * domain commands below).
   */
  async append(stream: string, events: Array<Omit<SergoEvent, "metadata">>): Promise<void> {
    await this.app.append(
      stream,
      events.map((e) => ({ ...e, metadata: this.app.meta("cli") })) as SergoEvent[],
    );
  }

  /** Adds a person; returns their id. */
  async person(name: string): Promise<string> {
    const email = `${name.toLowerCase().replace(/[^a-z]+/g, ".")}.${++people}@example.com`;
    return (await addPerson(this.app, { name, email })).person_id;
  }

  /** Creates a folder; returns its id. */
  async folder(personId: string, name: string, parentId: string | null = null): Promise<string> {
    return (await createFolder(this.app, { personId, parentId, name }, "cli")).folder_id;
  }

  /**
   * Uploads a corpus file and has the processing worker read it (unless
   * `processed: false`: then it stays being processed, so it must be the
   * last upload that is read); returns the document id.
   */
  async document(
    personId: string,
    folderId: string | null,
    path: string,
    options: { name?: string; processed?: boolean } = {},
  ): Promise<string> {
    if (this.#unread !== null && options.processed !== false) {
      throw new Error(`Upload the unprocessed document last: reading ${path} would read ${this.#unread} too`);
    }
    const tempPath = await Deno.makeTempFile({ prefix: "sergo-upload-" });
    await Deno.copyFile(new URL(path, CORPUS), tempPath);
    const row = await uploadFile(this.app, {
      personId,
      folderId,
      name: options.name ?? path.split("/").pop()!,
      tempPath,
    }, "cli");
    if (options.processed === false) this.#unread ??= row.document_id;
    else await this.#process();
    return row.document_id;
  }

  /**
   * Runs the real PDF copy worker where LibreOffice is not installed (its
   * `soffice` is looked for on a PATH that holds only `prlimit`): every copy
   * waiting now fails with the reason users see, as on a server that ran
   * without LibreOffice before it was installed. Returns the documents whose
   * copy failed.
   */
  async copyWithoutLibreOffice(): Promise<string[]> {
    const bin = await Deno.makeTempDir({ prefix: "sergo-no-soffice-" });
    try {
      await Deno.symlink(await needs("prlimit"), `${bin}/prlimit`);
      const before = this.store.head().position;
      const worker = new PdfCopyWorker(this.app, { convert: { searchPath: bin } });
      worker.kick();
      await worker.drain();
      await worker.stop();
      const failed = this.store.readFrom(before, 1_000_000).flatMap((e) =>
        e.type === "PdfCopyFailed" ? [e.data] : []
      );
      for (const { reason } of failed) assert.equal(reason, NOT_INSTALLED);
      return failed.map((data) => data.document_id);
    } finally {
      await Deno.remove(bin, { recursive: true });
    }
  }

  async #process(): Promise<void> {
    this.#pool ??= createExtractionPool({ concurrency: 1 });
    const worker = new ProcessingWorker(this.app, this.#pool, { workerId: "fixture", concurrency: 1 });
    worker.kick();
    await worker.drain();
  }

  /** Creates an agent key; returns its id and value. */
  async agentKey(
    personId: string,
    name: string,
    description: string,
    canRead: CanRead,
  ): Promise<{ keyId: string; value: string }> {
    const { key, value } = await createAgentKey(this.app, { personId, name, description, canRead }, "cli");
    return { keyId: key.key_id, value };
  }

  /** Changes an agent key. */
  async changeKey(
    keyId: string,
    change: { name?: string; description?: string; can_read?: CanRead },
  ): Promise<void> {
    const key = getAgentKey(this.db, keyId);
    if (!key) throw new Error(`No agent key ${keyId}`);
    await changeAgentKey(this.app, {
      personId: key.person_id,
      keyId,
      name: change.name,
      description: change.description,
      canRead: change.can_read,
    }, "cli");
  }

  /** Deletes an agent key (every value of it stops at once). */
  async deleteKey(keyId: string): Promise<void> {
    const key = getAgentKey(this.db, keyId);
    if (!key) throw new Error(`No agent key ${keyId}`);
    await deleteAgentKey(this.app, { personId: key.person_id, keyId }, "cli");
  }

  /** Rolls an agent key; returns the new value and when the old one stops (grace: now, 1h, 24h or 7d). */
  async rollKey(keyId: string, grace: string): Promise<{ value: string; oldExpiresAt: string }> {
    const key = getAgentKey(this.db, keyId);
    if (!key) throw new Error(`No agent key ${keyId}`);
    const { value, oldExpiresAt } = await rollAgentKey(
      this.app,
      { personId: key.person_id, keyId, grace },
      "cli",
    );
    return { value, oldExpiresAt };
  }

  /** Renames a folder. */
  async renameFolder(personId: string, folderId: string, name: string): Promise<void> {
    await renameFolder(this.app, { personId, folderId, name }, "cli");
  }

  /** The `McpCalled` events in the log. */
  auditEvents(): Array<Extract<SergoEvent, { type: "McpCalled" }>> {
    return this.store.readFrom(0, 1_000_000).filter((e) => e.type === "McpCalled") as Array<
      Extract<SergoEvent, { type: "McpCalled" }>
    >;
  }

  /** Closes the data directory (keeps it). */
  async close(): Promise<void> {
    await this.#pool?.close();
    this.#pool = null;
    await this.app.close();
  }

  /** Closes and deletes the directory. */
  async dispose(): Promise<void> {
    await this.close();
    await Deno.remove(this.dir, { recursive: true });
  }
}

/** Posts one JSON-RPC message to an endpoint handler and returns the response. */
export function post(
  handler: (request: Request) => Promise<Response>,
  key: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return handler(
    new Request("http://127.0.0.1:8787/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** The fixture's store, except that every append fails (a full disk). */
export function failingStore(fixture: Fixture): EventStore {
  return {
    append: () => Promise.reject(new Error("disk full")),
    readFrom: (p, l) => fixture.store.readFrom(p, l),
    readStream: (s) => fixture.store.readStream(s),
    head: () => fixture.store.head(),
    subscribe: (l) => fixture.store.subscribe(l),
    close: () => Promise.resolve(),
  };
}

/** Calls a tool through an endpoint handler and returns the JSON-RPC result. */
export async function callTool(
  handler: (request: Request) => Promise<Response>,
  key: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ content: Array<Record<string, string>>; isError: boolean }> {
  const response = await post(handler, key, {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name, arguments: args },
  }, headers);
  const body = await response.json();
  if (!body.result) throw new Error(`No result: ${response.status} ${JSON.stringify(body)}`);
  return body.result;
}

/** Extracts the JSON value that starts at the first `{` after `marker` in a text. */
export function jsonAfter(text: string, marker: string): unknown {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`Marker "${marker}" not found`);
  const start = text.indexOf("{", at + marker.length);
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return JSON.parse(text.slice(start, i + 1));
    }
  }
  throw new Error(`Unbalanced JSON after "${marker}"`);
}
