/**
 * A mixed workload for audit tests: two people with folders, documents,
 * processing results, PDF copies, keys and MCP calls, appended through the
 * real SQLite store and projected by the real projector.
 *
 * @module
 */
import { join } from "node:path";
import { openSqliteStore, type SqliteEventStore } from "../../events/sqlite_store.ts";
import type { EventData, SergoEvent } from "../../events/types.ts";
import { auditView } from "../../projections/audit_view.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";

/** An opened test install. */
export interface Install {
  dir: string;
  dataDir: string;
  eventsPath: string;
  store: SqliteEventStore;
  projector: Projector;
  close(): Promise<void>;
}

/** Opens a fresh install in a temp directory. */
export async function openInstall(): Promise<Install> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-audit-test-" });
  const dataDir = join(dir, "data");
  await Deno.mkdir(dataDir);
  const eventsPath = join(dataDir, "events.db");
  const store = openSqliteStore(eventsPath);
  const projector = openProjector(join(dataDir, "projections.db"), [auditView]);
  return {
    dir,
    dataDir,
    eventsPath,
    store,
    projector,
    async close() {
      projector.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const hex = (n: number): string => n.toString(16).padStart(64, "0");

let clock = Date.parse("2026-10-24T09:00:00Z");
/** Metadata with a clock that moves one second per event. */
export function meta(actor: string, endUser?: string): SergoEvent["metadata"] {
  clock += 1000;
  return { time: new Date(clock).toISOString(), actor, ...(endUser ? { end_user: endUser } : {}) };
}

/** An McpCalled event's data. */
export function mcpSearch(
  person: string,
  key: { id: string; name: string; last4: string },
  query: string,
  count: number,
  endUser: string | null = null,
): EventData<"McpCalled"> {
  return {
    key_id: key.id,
    person_id: person,
    key_name: key.name,
    masked_key: `sgk_s_…${key.last4}`,
    end_user: endUser,
    tool: "search",
    arguments: { query },
    action: "mcp search",
    details: { query, results: count },
    is_error: false,
    duration_ms: 12,
  };
}

/** Ava's research key and Ben's key. */
export const AVA_KEY = { id: "kAva0001", name: "research", last4: "a1B2" };
export const BEN_KEY = { id: "kBen0001", name: "helper", last4: "z9Y8" };

/** Appends the mixed workload: Ava and Ben, their folders, documents, keys and calls. */
export async function appendWorkload(store: SqliteEventStore): Promise<void> {
  clock = Date.parse("2026-10-24T09:00:00Z");
  const ava = "pAva", ben = "pBen";
  const a = (stream: string, events: SergoEvent[]) => store.append(stream, events);
  await a(`person-${ava}`, [
    {
      type: "PersonAdded",
      data: { person_id: ava, name: "Ava Bennett", email: "ava@example.com" },
      metadata: meta("cli"),
    },
    {
      type: "PersonPasswordSet",
      data: { person_id: ava, password_hash: "$argon2id$secret" },
      metadata: meta("cli"),
    },
  ]);
  await a(`person-${ben}`, [
    {
      type: "PersonAdded",
      data: { person_id: ben, name: "Ben Ortiz", email: "ben@example.com" },
      metadata: meta("cli"),
    },
  ]);
  await a("folder-fEnergy", [{
    type: "FolderCreated",
    data: { folder_id: "fEnergy", person_id: ava, parent_id: null, name: "Energy outlooks" },
    metadata: meta(`person-${ava}`),
  }]);
  await a("folder-fBasic", [{
    type: "FolderCreated",
    data: { folder_id: "fBasic", person_id: ava, parent_id: "fEnergy", name: "Basic" },
    metadata: meta(`person-${ava}`),
  }]);
  await a("document-xM5gW8NZ", [{
    type: "DocumentUploaded",
    data: {
      document_id: "xM5gW8NZ",
      person_id: ava,
      folder_id: "fBasic",
      name: "IEO2023_Release_Presentation.pptx",
      type: "pptx",
      size: 1234,
      sha256: hex(1),
      preset: "basic",
    },
    metadata: meta(`person-${ava}`),
  }]);
  await a("document-bBen0001", [{
    type: "DocumentUploaded",
    data: {
      document_id: "bBen0001",
      person_id: ben,
      folder_id: null,
      name: "notes.txt",
      type: "txt",
      size: 10,
      sha256: hex(2),
      preset: "basic",
    },
    metadata: meta(`person-${ben}`),
  }]);
  await a("document-xM5gW8NZ", [
    {
      type: "DocumentProcessed",
      data: {
        document_id: "xM5gW8NZ",
        preset: "basic",
        page_count: 2,
        pages_estimated: false,
        pages: [
          { page: 1, text: "Title", marked: true, image_only: false },
          { page: 2, text: "", marked: true, image_only: true },
        ],
      },
      metadata: meta("system"),
    },
    {
      type: "PdfCopyMade",
      data: { document_id: "xM5gW8NZ", sha256: hex(3), page_count: 2 },
      metadata: meta("system"),
    },
  ]);
  await a("document-bBen0001", [{
    type: "ProcessingFailed",
    data: { document_id: "bBen0001", preset: "basic", reason: "The file is empty" },
    metadata: meta("system"),
  }]);
  await a(`key-${AVA_KEY.id}`, [{
    type: "AgentKeyCreated",
    data: {
      key_id: AVA_KEY.id,
      person_id: ava,
      name: AVA_KEY.name,
      description: "Energy reports",
      key_hash: hex(4),
      last4: AVA_KEY.last4,
      can_read: { folders: ["fBasic"], documents: [] },
    },
    metadata: meta(`person-${ava}`),
  }]);
  await a(`key-${BEN_KEY.id}`, [{
    type: "AgentKeyCreated",
    data: {
      key_id: BEN_KEY.id,
      person_id: ben,
      name: BEN_KEY.name,
      description: "",
      key_hash: hex(5),
      last4: BEN_KEY.last4,
      can_read: { folders: [], documents: ["bBen0001"] },
    },
    metadata: meta(`person-${ben}`),
  }]);
  for (let i = 0; i < 5; i++) {
    await a(`mcp-${ava}`, [{
      type: "McpCalled",
      data: mcpSearch(ava, AVA_KEY, `electric vehicles ${i}`, 3, i % 2 === 0 ? "alice@corp" : null),
      metadata: meta(`key-${AVA_KEY.id}`),
    }]);
    await a(`mcp-${ben}`, [{
      type: "McpCalled",
      data: mcpSearch(ben, BEN_KEY, `notes ${i}`, 1),
      metadata: meta(`key-${BEN_KEY.id}`),
    }]);
  }
  await a(`mcp-${ava}`, [{
    type: "McpCalled",
    data: {
      ...mcpSearch(ava, AVA_KEY, "", 0),
      tool: "view_page",
      arguments: { document_id: "xM5gW8NZ", page: 2 },
      action: "mcp page viewed",
      details: { file: "IEO2023_Release_Presentation.pptx", page: 2, format: "image" },
    },
    metadata: meta(`key-${AVA_KEY.id}`),
  }]);
  await a(`key-${AVA_KEY.id}`, [
    {
      type: "AgentKeyRolled",
      data: { key_id: AVA_KEY.id, key_hash: hex(6), last4: "c3D4", old_expires_at: "2026-10-25T09:00:00Z" },
      metadata: meta(`person-${ava}`),
    },
    {
      type: "AgentKeyChanged",
      data: { key_id: AVA_KEY.id, name: "energy" },
      metadata: meta(`person-${ava}`),
    },
  ]);
  await a(`key-${BEN_KEY.id}`, [{
    type: "AgentKeyDeleted",
    data: { key_id: BEN_KEY.id },
    metadata: meta(`person-${ben}`),
  }]);
}

/** Appends `count` MCP calls of one person quickly, in batches through the real store. */
export async function appendCalls(
  store: SqliteEventStore,
  person: string,
  key: { id: string; name: string; last4: string },
  count: number,
  batch = 5000,
): Promise<void> {
  for (let done = 0; done < count; done += batch) {
    const events: SergoEvent[] = [];
    for (let i = done; i < Math.min(count, done + batch); i++) {
      events.push({
        type: "McpCalled",
        data: mcpSearch(person, key, `query ${i}`, i % 20),
        metadata: meta(`key-${key.id}`),
      });
    }
    await store.append(`mcp-${person}`, events);
  }
}
