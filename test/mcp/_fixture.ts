/**
 * A real Sergo data set for the MCP tests: a SQLite event log, the
 * projections the tools read (catalogue, key scopes, search index) kept up
 * to date on every append, real corpus files read by the real extractors.
 *
 * @module
 */
import type { EventStore } from "../../events/store.ts";
import { join } from "node:path";
import { openSqliteStore, type SqliteEventStore } from "../../events/sqlite_store.ts";
import type { CanRead, DocumentType, SergoEvent } from "../../events/types.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { generateSecret, hashSecret, lastFour } from "../../src/auth/key_format.ts";
import { BlobStore } from "../../src/blob_store.ts";
import type { ExtractResult } from "../../src/processing/extract_result.ts";
import { extractPdf } from "../../src/processing/pdf_extract.ts";
import { extractPptx } from "../../src/processing/pptx_extract.ts";

/** The corpus folder. */
export const CORPUS = new URL("../../../shared/corpus/", import.meta.url);

/** The MCP reference. */
export const REFERENCE = new URL("../../../shared/reference/sergo-mcp-reference.txt", import.meta.url);

let counter = 0;
function id(prefix: string): string {
  counter++;
  return `${prefix}${counter.toString(36).padStart(7, "0")}`.slice(-8);
}

const extracted = new Map<string, ExtractResult>();

/** Reads a corpus file with the real extractor (cached across tests of one run). */
export async function extractCorpus(path: string): Promise<{ bytes: Uint8Array; result: ExtractResult }> {
  const bytes = await Deno.readFile(new URL(path, CORPUS));
  let result = extracted.get(path);
  if (!result) {
    result = path.endsWith(".pdf") ? await extractPdf(bytes) : await extractPptx(bytes);
    extracted.set(path, result);
  }
  return { bytes, result };
}

/** A data directory with a log and projections. */
export class Fixture {
  readonly dir: string;
  readonly store: SqliteEventStore;
  readonly projector: Projector;
  readonly blobs: BlobStore;
  #unsubscribe: () => void;

  private constructor(dir: string, writer: "inline" | "thread" = "inline") {
    this.dir = dir;
    this.store = openSqliteStore(join(dir, "events.db"), { writer });
    // Every projection, as a server keeps them (the audit view applies each call's event too).
    this.projector = openProjector(join(dir, "projections.db"), ALL_PROJECTIONS);
    this.blobs = new BlobStore(join(dir, "blobs"));
    this.#unsubscribe = this.store.subscribe(() => this.projector.catchUp(this.store));
  }

  /** Opens a fresh fixture in a temporary directory. */
  static async open(options: { writer?: "inline" | "thread" } = {}): Promise<Fixture> {
    return new Fixture(await Deno.makeTempDir({ prefix: "sergo-mcp-" }), options.writer);
  }

  /** Reopens the same data directory (a restart). */
  static reopen(dir: string): Fixture {
    return new Fixture(dir);
  }

  get db() {
    return this.projector.db;
  }

  /** Appends events to a stream. */
  async append(stream: string, events: Array<Omit<SergoEvent, "metadata">>): Promise<void> {
    const time = new Date().toISOString();
    await this.store.append(
      stream,
      events.map((e) => ({ ...e, metadata: { time, actor: "cli" } })) as SergoEvent[],
    );
  }

  /** Adds a person; returns their id. */
  async person(name: string): Promise<string> {
    const personId = id("p");
    await this.append(`person-${personId}`, [{
      type: "PersonAdded",
      data: { person_id: personId, name, email: `${personId}@example.com` },
    }]);
    return personId;
  }

  /** Creates a folder; returns its id. */
  async folder(personId: string, name: string, parentId: string | null = null): Promise<string> {
    const folderId = id("f");
    await this.append(`folder-${folderId}`, [{
      type: "FolderCreated",
      data: { folder_id: folderId, person_id: personId, parent_id: parentId, name },
    }]);
    return folderId;
  }

  /** Uploads a corpus file and records its processing result; returns the document id. */
  async document(
    personId: string,
    folderId: string | null,
    path: string,
    options: { name?: string; processed?: boolean; pdfCopy?: "none" | "pending" } = {},
  ): Promise<string> {
    const { bytes, result } = await extractCorpus(path);
    const sha256 = await this.blobs.write(bytes);
    const documentId = id("d");
    const type = path.split(".").pop() as DocumentType;
    await this.append(`document-${documentId}`, [{
      type: "DocumentUploaded",
      data: {
        document_id: documentId,
        person_id: personId,
        folder_id: folderId,
        name: options.name ?? path.split("/").pop()!,
        type,
        size: bytes.length,
        sha256,
        preset: "basic",
      },
    }]);
    if (options.processed !== false) {
      await this.append(`document-${documentId}`, [{
        type: "DocumentProcessed",
        data: {
          document_id: documentId,
          preset: "basic",
          page_count: result.page_count,
          pages_estimated: result.pages_estimated,
          pages: result.pages,
        },
      }]);
    }
    if (options.pdfCopy === "none" && type !== "pdf") {
      await this.append(`document-${documentId}`, [{
        type: "PdfCopyFailed",
        data: { document_id: documentId, reason: "No converter in this test" },
      }]);
    }
    return documentId;
  }

  /** Creates an agent key; returns its id and value. */
  async agentKey(
    personId: string,
    name: string,
    description: string,
    canRead: CanRead,
  ): Promise<{ keyId: string; value: string }> {
    const value = generateSecret("agent");
    const keyId = id("k");
    await this.append(`key-${keyId}`, [{
      type: "AgentKeyCreated",
      data: {
        key_id: keyId,
        person_id: personId,
        name,
        description,
        key_hash: hashSecret(value),
        last4: lastFour(value),
        can_read: canRead,
      },
    }]);
    return { keyId, value };
  }

  /** Changes an agent key. */
  async changeKey(
    keyId: string,
    change: { name?: string; description?: string; can_read?: CanRead },
  ): Promise<void> {
    await this.append(`key-${keyId}`, [{ type: "AgentKeyChanged", data: { key_id: keyId, ...change } }]);
  }

  /** The `McpCalled` events in the log. */
  auditEvents(): Array<Extract<SergoEvent, { type: "McpCalled" }>> {
    return this.store.readFrom(0, 1_000_000).filter((e) => e.type === "McpCalled") as Array<
      Extract<SergoEvent, { type: "McpCalled" }>
    >;
  }

  /** Closes the store and projections (keeps the directory). */
  async close(): Promise<void> {
    this.#unsubscribe();
    await this.store.close();
    this.projector.close();
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
