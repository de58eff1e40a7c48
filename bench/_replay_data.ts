/**
 * The replay data set: an event log of `pages` pages' processing results
 * (documents uploaded, started and processed, with page texts taken from the
 * corpus and varied) interleaved with `audits` MCP calls, written once into
 * `bench/data/replay-<pages>/events.db` through the real event store.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "../events/sqlite_store.ts";
import type { ProcessedPage, SergoEvent } from "../events/types.ts";
import { type CorpusFile, loadCorpus } from "./_corpus_text.ts";

/** The person who owns every document of the data set. */
export const BENCH_PERSON = {
  person_id: "pBenchAva0001",
  name: "Ava Bennett",
  email: "ava@example.com",
} as const;

/** Top-level folders of the data set; each has the year folders below inside it. */
export const BENCH_FOLDERS = ["Reports", "Decks", "Papers", "Notes"] as const;
const YEARS = ["2021", "2022", "2023", "2024"] as const;

/** A built data set. */
export interface ReplayData {
  /** The data directory (`events.db` inside). */
  dir: string;
  eventsPath: string;
  pages: number;
  documents: number;
  audits: number;
  /** Every event in the log. */
  events: number;
  /** Seconds it took to write the log (0 when it was there already). */
  build_seconds: number;
}

const DATA_ROOT = new URL("./data/", import.meta.url).pathname;

/** The data directory of a data set size. */
export function replayDataDir(pages: number): string {
  return `${DATA_ROOT}replay-${pages}`;
}

/** Writes the data set unless it is there already, and describes it. */
export async function ensureReplayData(pages: number, audits: number): Promise<ReplayData> {
  const dir = replayDataDir(pages);
  const eventsPath = `${dir}/events.db`;
  const marker = `${dir}/dataset.json`;
  try {
    const known = JSON.parse(await Deno.readTextFile(marker)) as ReplayData;
    if (known.audits === audits) return { ...known, dir, eventsPath, build_seconds: 0 };
  } catch {
    // Not built yet.
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const started = performance.now();
  const corpus = (await loadCorpus()).filter((file) => file.pages.some((page) => page.trim().length > 40));
  const store = openSqliteStore(eventsPath);
  const clock = new Clock(Date.parse("2024-01-08T09:00:00Z"));
  const pending: Array<Promise<unknown>> = [];
  const flush = async (force = false) => {
    if (pending.length < 400 && !force) return;
    await Promise.all(pending.splice(0));
  };
  const append = (stream: string, events: SergoEvent[]) => pending.push(store.append(stream, events));

  const actor = `person-${BENCH_PERSON.person_id}`;
  append(`person-${BENCH_PERSON.person_id}`, [{
    type: "PersonAdded",
    data: { ...BENCH_PERSON },
    metadata: { time: clock.next(), actor: "cli" },
  }]);
  const folderIds: string[] = [];
  for (const [t, top] of BENCH_FOLDERS.entries()) {
    const topId = `fBench${t}`;
    append(`folder-${topId}`, [{
      type: "FolderCreated",
      data: { folder_id: topId, person_id: BENCH_PERSON.person_id, parent_id: null, name: top },
      metadata: { time: clock.next(), actor },
    }]);
    for (const [y, year] of YEARS.entries()) {
      const id = `fBench${t}y${y}`;
      folderIds.push(id);
      append(`folder-${id}`, [{
        type: "FolderCreated",
        data: { folder_id: id, person_id: BENCH_PERSON.person_id, parent_id: topId, name: year },
        metadata: { time: clock.next(), actor },
      }]);
    }
  }
  append("key-kBenchAgent01", [{
    type: "AgentKeyCreated",
    data: {
      key_id: "kBenchAgent01",
      person_id: BENCH_PERSON.person_id,
      name: "bench-agent",
      description: "The benchmark's agent: its value is not kept, only its MCP calls are in the log",
      key_hash: createHash("sha256").update("bench-agent").digest("hex"),
      last4: "Q7xZ",
      can_read: { folders: BENCH_FOLDERS.map((_, t) => `fBench${t}`), documents: [] },
    },
    metadata: { time: clock.next(), actor },
  }]);
  await flush(true);

  const audit = new AuditMaker(corpus);
  let written = 0;
  let documents = 0;
  let auditsWritten = 0;
  for (let i = 0; written < pages; i++) {
    const source = corpus[i % corpus.length]!;
    const round = Math.floor(i / corpus.length);
    const count = Math.min(source.pages.length, 60, pages - written);
    const documentId = `d${i.toString(36).padStart(7, "0")}`;
    const kind = source.file.split("/")[0]!;
    const type = kind === "pdf" ? "pdf" : kind === "pptx" ? "pptx" : kind === "docx" ? "docx" : "txt";
    const processed = variedPages(source, round, count, type === "docx");
    const estimated = type === "docx" || type === "txt";
    const name = round === 0
      ? baseName(source.file)
      : baseName(source.file).replace(/(\.\w+)$/, ` (${round})$1`);
    append(`document-${documentId}`, [
      {
        type: "DocumentUploaded",
        data: {
          document_id: documentId,
          person_id: BENCH_PERSON.person_id,
          folder_id: folderIds[i % folderIds.length]!,
          name,
          type,
          size: processed.reduce((sum, page) => sum + page.text.length, 0) + 4096,
          sha256: createHash("sha256").update(documentId).digest("hex"),
          preset: "basic",
        },
        metadata: { time: clock.next(), actor },
      },
      {
        type: "ProcessingStarted",
        data: {
          document_id: documentId,
          preset: "basic",
          worker: "serve",
          lease_until: new Date(clock.now + 600_000).toISOString(),
        },
        metadata: { time: clock.next(), actor: "system" },
      },
      {
        type: "DocumentProcessed",
        data: {
          document_id: documentId,
          preset: "basic",
          page_count: count,
          pages_estimated: estimated,
          pages: processed,
        },
        metadata: { time: clock.next(), actor: "system" },
      },
    ]);
    written += count;
    documents++;
    // The MCP calls keep pace with the pages, so they are spread through the log.
    const due = Math.round((written / pages) * audits) - auditsWritten;
    for (let k = 0; k < due; k++) {
      append("key-kBenchAgent01", [audit.next(clock.next(), documentId, name, count)]);
    }
    auditsWritten += due;
    await flush();
  }
  await flush(true);
  const events = store.head().position;
  await store.close();
  const data: ReplayData = {
    dir,
    eventsPath,
    pages: written,
    documents,
    audits: auditsWritten,
    events,
    build_seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  await Deno.writeTextFile(marker, JSON.stringify(data));
  return data;
}

/** The position of each document's `DocumentProcessed` event, read straight from the log. */
export function processedPositions(eventsPath: string): Map<string, number> {
  const db = new DatabaseSync(eventsPath, { readOnly: true });
  try {
    const rows = db.prepare(
      "SELECT position, json_extract(data, '$.document_id') AS id FROM events WHERE type = 'DocumentProcessed'",
    ).all() as Array<{ position: number; id: string }>;
    return new Map(rows.map((row) => [row.id, row.position]));
  } finally {
    db.close();
  }
}

class Clock {
  constructor(public now: number) {}
  next(): string {
    this.now += 1000 + (this.now % 7) * 100;
    return new Date(this.now).toISOString();
  }
}

function baseName(file: string): string {
  return file.slice(file.lastIndexOf("/") + 1);
}

/** The pages of one document: the source's pages with their lines rotated and a line of their own. */
function variedPages(source: CorpusFile, round: number, count: number, chunked: boolean): ProcessedPage[] {
  const out: ProcessedPage[] = [];
  for (let p = 0; p < count; p++) {
    const original = source.pages[p] ?? "";
    const lines = original.split("\n");
    const shift = lines.length > 1 ? (round * 7 + p) % lines.length : 0;
    const rotated = round === 0 ? original : [...lines.slice(shift), ...lines.slice(0, shift)].join("\n");
    const text = rotated.trim() === "" ? "" : `${rotated}\nRevision ${round}.${p + 1}`;
    const marked = text.length < 200;
    const page: ProcessedPage = { page: p + 1, text, marked, image_only: marked && text === "" };
    if (chunked && text !== "") {
      const heading = text.split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 120) ?? null;
      page.chunks = [{ section: heading, text }];
    }
    out.push(page);
  }
  return out;
}

const TOOLS = ["search", "search", "search", "list_documents", "read_document", "view_page"] as const;

/** Makes plausible `McpCalled` events: mostly searches, with words taken from the corpus. */
class AuditMaker {
  #n = 0;
  readonly #words: string[];

  constructor(corpus: CorpusFile[]) {
    const words = new Set<string>();
    for (const file of corpus) {
      for (const page of file.pages.slice(0, 5)) {
        for (const word of page.match(/\p{L}{4,}/gu) ?? []) {
          if (words.size < 5000) words.add(word.toLowerCase());
        }
      }
    }
    this.#words = [...words];
  }

  next(time: string, documentId: string, file: string, pages: number): SergoEvent {
    const n = this.#n++;
    const tool = TOOLS[n % TOOLS.length]!;
    const word = (k: number) => this.#words[(n * 31 + k * 17) % this.#words.length]!;
    let args: Record<string, unknown>;
    let details: Record<string, unknown>;
    let action: string;
    switch (tool) {
      case "search": {
        const query = Array.from({ length: 2 + (n % 5) }, (_, k) => word(k)).join(" ");
        args = { query };
        details = { query, result_count: n % 11, offset: 0 };
        action = "mcp search";
        break;
      }
      case "list_documents":
        args = {};
        details = { folders: "whole scope", count: 20 };
        action = "mcp listing";
        break;
      case "read_document":
        args = { document_id: documentId };
        details = { file, pages: `pages 1-${Math.min(pages, 5)} of ${pages}` };
        action = "mcp text read";
        break;
      case "view_page":
        args = { document_id: documentId, page: 1 + (n % pages) };
        details = { file, page: 1 + (n % pages), format: "image" };
        action = "mcp page viewed";
        break;
    }
    const endUser = n % 3 === 0 ? null : `user${n % 17}@example.com`;
    return {
      type: "McpCalled",
      data: {
        key_id: "kBenchAgent01",
        person_id: BENCH_PERSON.person_id,
        key_name: "bench-agent",
        masked_key: "sgk_s_…Q7xZ",
        end_user: endUser,
        tool,
        arguments: args,
        action,
        details,
        is_error: n % 97 === 0,
        duration_ms: 1 + (n % 40) / 4,
      },
      metadata: { time, actor: "key-kBenchAgent01", ...(endUser === null ? {} : { end_user: endUser }) },
    };
  }
}
