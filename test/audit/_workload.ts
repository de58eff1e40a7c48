/**
 * A mixed workload for audit tests, made the way users make it, on the real
 * `serve` (port 0): people, Ava's password and both personal keys through the
 * domain commands the CLI runs; folders, uploads (multipart) and agent keys
 * (created, rolled, renamed, deleted) through the REST API with those personal
 * keys; the server's own processing worker reading real corpus files and its
 * PDF copy worker (LibreOffice) copying a deck; MCP calls (searches with and
 * without an end user, a refused read, a page view) through `/mcp`. No event
 * is written by hand.
 *
 * A step clock stamps the events: each step of the story happens one second
 * after the one before (`Workload.times`), and the server finishes each step's
 * work (reading, copying) before the next, so the log's order is the story's.
 *
 * The log is made once per test process and copied for each {@linkcode Install}.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openSqliteStore, type SqliteEventStore } from "../../events/sqlite_store.ts";
import { auditView } from "../../projections/audit_view.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { type RunningServer, startServer } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";

/** The password Ava set (its hash is in the log and must never leave it). */
export const AVA_PASSWORD = "correct horse battery staple";

/** Ava's searches through her "research" key, in order, with the end user each named. */
export const AVA_SEARCHES = [
  { query: "test table slide", endUser: "alice@corp" },
  { query: "rectangle shape", endUser: null },
  { query: "list items", endUser: "alice@corp" },
  { query: "merged cells", endUser: null },
  { query: "footnote", endUser: "alice@corp" },
] as const;

/** Ben's searches through his "helper" key (his one document could not be read: nothing is found). */
export const BEN_SEARCHES = ["meeting notes", "budget", "notes", "travel plans", "agenda"] as const;

/** What the workload made, for tests to look for. */
export interface Workload {
  ava: { personId: string; email: string; personalKey: string };
  ben: { personId: string; email: string; personalKey: string };
  folders: { energy: string; basic: string };
  documents: {
    /** docling-sample-table-notes.pptx in Energy outlooks/Basic: read, PDF copy made. */
    deck: string;
    /** scanned-zh-penalty-decision-ccitt.pdf in Energy outlooks: three pages with no text layer. */
    scan: string;
    /** Ben's empty notes.txt: its processing fails. */
    notes: string;
  };
  /** Ava's key: created as "research", rolled, then renamed "energy". */
  research: { keyId: string; last4: string; rolledLast4: string; oldWorksUntil: string };
  /** Ben's key "helper", deleted at the end. */
  helper: { keyId: string; last4: string };
  /** The number of excerpts each of Ava's searches answered, in order. */
  avaResults: number[];
  /** The time of each step of the story (`STEP_TIMES[name]`). */
  times: Record<StepName, string>;
}

type StepName =
  | "ava added"
  | "ava password"
  | "ben added"
  | "personal keys"
  | "energy folder"
  | "basic folder"
  | "deck uploaded"
  | "scan uploaded"
  | "notes uploaded"
  | "keys created"
  | "calls"
  | "read refused"
  | "page viewed"
  | "rolled"
  | "renamed"
  | "deleted";

/** An opened copy of the workload's data directory, projected by the real projector (audit view). */
export interface Install {
  dir: string;
  dataDir: string;
  eventsPath: string;
  store: SqliteEventStore;
  projector: Projector;
  workload: Workload;
  close(): Promise<void>;
}

interface Template {
  dataDir: string;
  workload: Workload;
}

let template: Promise<Template> | undefined;

/** Copies the workload's data directory (made on first use) into a fresh temp directory. */
export async function copyWorkload(): Promise<{ dir: string; dataDir: string; workload: Workload }> {
  template ??= makeTemplate();
  const { dataDir: source, workload } = await template;
  const dir = await Deno.makeTempDir({ prefix: "sergo-audit-test-" });
  const dataDir = join(dir, "data");
  await copyFolder(source, dataDir);
  return { dir, dataDir, workload };
}

/** Opens a fresh copy of the workload, projected by a projector of its own (the audit view alone). */
export async function openInstall(): Promise<Install> {
  const { dir, dataDir, workload } = await copyWorkload();
  const eventsPath = join(dataDir, "events.db");
  const store = openSqliteStore(eventsPath);
  // The audit view is rebuilt from the log the server wrote.
  const projector = openProjector(join(dir, "audit.db"), [auditView]);
  projector.catchUp(store);
  return {
    dir,
    dataDir,
    eventsPath,
    store,
    projector,
    workload,
    async close() {
      projector.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The workload's data directory as the server left it (its own projections included); do not change it. */
export async function workloadDataDir(): Promise<{ dataDir: string; workload: Workload }> {
  template ??= makeTemplate();
  return await template;
}

async function copyFolder(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyFolder(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}

/** The start of the story: 2026-10-24 09:00:00 UTC; step n happens n seconds later. */
const START = Date.parse("2026-10-24T09:00:00Z");

async function makeTemplate(): Promise<Template> {
  await needs("soffice"); // the deck's PDF copy
  let time = START;
  const dir = await Deno.makeTempDir({ prefix: "sergo-audit-workload-" });
  const env: Record<string, string | undefined> = {
    SERGO_RATE_LIMIT: "100000",
    SERGO_RATE_BURST: "100000",
    // Leases of an hour: no renewal (every third of a lease, in real time) lands in the story under load.
    SERGO_WORK_LEASE_S: "3600",
  };
  const config = loadConfig(["--data", dir, "--port", "0"], (name) => env[name]);
  const running = await startServer(config, { quiet: true, now: () => new Date(time) });
  const times = {} as Record<StepName, string>;
  const step = (name: StepName) => {
    time += 1000;
    times[name] = new Date(time).toISOString();
  };
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // gone already
    }
  });
  try {
    return { dataDir: dir, workload: await tell(running, step, times) };
  } finally {
    await running.stop();
  }
}

/** Tells the story through the real paths; returns what it made. */
async function tell(
  running: RunningServer,
  step: (name: StepName) => void,
  times: Record<StepName, string>,
): Promise<Workload> {
  const { app } = running;
  const send = (path: string, init: RequestInit) => fetch(new URL(path, running.url), init);
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const response = await send(path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined || body instanceof FormData ? {} : { "content-type": "application/json" }),
      },
      body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
    return text === "" ? null : JSON.parse(text);
  };
  // Each upload is read (and its PDF copy made) before the next step, so the log's order is the story's.
  const settled = async (documentId: string) => {
    for (let i = 0; i < 1200; i++) {
      const row = app.db.prepare("SELECT status, pdf_copy_status FROM cat_documents WHERE document_id = ?")
        .get(documentId) as { status: string; pdf_copy_status: string };
      if (row.status !== "processing" && row.pdf_copy_status !== "pending") return row;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${documentId} was not read within 120 s`);
  };
  const upload = async (key: string, file: string, folderId: string | null, name?: string) => {
    const form = new FormData();
    if (folderId) form.set("folder_id", folderId);
    const bytes = await Deno.readFile(join(CORPUS_DIR, file));
    form.append("file", new File([bytes], name ?? file.split("/").pop()!));
    const answer = await api(key, "POST", "/api/documents", form);
    const id = answer.documents[0].id as string;
    return { id, ...(await settled(id)) };
  };
  let calls = 0;
  const mcp = async (key: string, tool: string, args: Record<string, unknown>, endUser: string | null) => {
    const response = await send("/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
        ...(endUser ? { "x-sergo-end-user": endUser } : {}),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++calls,
        method: "tools/call",
        params: { name: tool, arguments: args },
      }),
    });
    const body = await response.json();
    assert.ok(body.result, `${tool}: ${response.status} ${JSON.stringify(body)}`);
    return body.result as { content: Array<{ type: string; text?: string }>; isError: boolean };
  };

  step("ava added");
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  step("ava password");
  await setPasswordHash(app, ava.person_id, await hashPassword(AVA_PASSWORD));
  step("ben added");
  const ben = await addPerson(app, { name: "Ben Ortiz", email: "ben@example.com" });
  step("personal keys");
  const avaApi = (await createPersonalKey(app, { personId: ava.person_id }, "cli")).value;
  const benApi = (await createPersonalKey(app, { personId: ben.person_id }, "cli")).value;

  step("energy folder");
  const energy = (await api(avaApi, "POST", "/api/folders", { name: "Energy outlooks" })).id as string;
  step("basic folder");
  const basic = (await api(avaApi, "POST", "/api/folders", { name: "Basic", parent_id: energy }))
    .id as string;
  step("deck uploaded");
  const deck = await upload(avaApi, "pptx/docling-sample-table-notes.pptx", basic);
  assert.deepEqual([deck.status, deck.pdf_copy_status], ["searchable", "made"], "the deck, read and copied");
  step("scan uploaded");
  const scan = await upload(avaApi, "pdf/scanned-zh-penalty-decision-ccitt.pdf", energy);
  assert.equal(scan.status, "not_indexed", "a scan without a text layer, under Basic");
  step("notes uploaded");
  const notes = await upload(benApi, "hostile/empty-zero-bytes.txt", null, "notes.txt");
  assert.equal(notes.status, "not_indexed", "an empty file");

  step("keys created");
  const research = await api(avaApi, "POST", "/api/keys", {
    name: "research",
    description: "Energy reports",
    can_read: { folders: [basic], documents: [] },
  });
  const helper = await api(benApi, "POST", "/api/keys", {
    name: "helper",
    description: "",
    can_read: { folders: [], documents: [notes.id] },
  });

  step("calls");
  const avaResults: number[] = [];
  for (const [i, search] of AVA_SEARCHES.entries()) {
    const result = await mcp(research.value, "search", { query: search.query }, search.endUser);
    assert.equal(result.isError, false, JSON.stringify(result));
    const groups = JSON.parse(result.content[0]!.text!) as Array<{ hits: unknown[] }>;
    avaResults.push(groups.flatMap((group) => group.hits).length);
    const found = await mcp(helper.value, "search", { query: BEN_SEARCHES[i]! }, null);
    assert.equal(found.isError, false, JSON.stringify(found));
  }
  step("read refused");
  // Ava's key asks for Ben's document: to her key it does not exist, and the refusal is audited.
  const refused = await mcp(research.value, "read_document", { document_id: notes.id }, null);
  assert.equal(refused.isError, true);
  step("page viewed");
  const viewed = await mcp(research.value, "view_page", { document_id: deck.id, page: 2 }, null);
  assert.equal(viewed.isError, false);
  assert.ok(viewed.content.some((part) => part.type === "image"), JSON.stringify(viewed.content[0]));

  step("rolled");
  const rolled = await api(avaApi, "POST", `/api/keys/${research.id}/roll`, { grace: "24h" });
  step("renamed");
  await api(avaApi, "PATCH", `/api/keys/${research.id}`, { name: "energy" });
  step("deleted");
  await api(benApi, "DELETE", `/api/keys/${helper.id}`);

  return {
    ava: { personId: ava.person_id, email: "ava@example.com", personalKey: avaApi },
    ben: { personId: ben.person_id, email: "ben@example.com", personalKey: benApi },
    folders: { energy, basic },
    documents: { deck: deck.id, scan: scan.id, notes: notes.id },
    research: {
      keyId: research.id,
      last4: research.value.slice(-4),
      rolledLast4: rolled.value.slice(-4),
      oldWorksUntil: rolled.old_value_works_until,
    },
    helper: { keyId: helper.id, last4: helper.value.slice(-4) },
    avaResults,
    times,
  };
}
