/**
 * Replay benchmark: events/s of rebuilding every projection from a log of
 * 100,000 pages' processing results and 200,000 MCP calls (10× fewer with
 * `--quick`), beside the physical limit of writing the same rows: the rows the
 * replay produced, inserted straight into the same tables of a fresh database
 * with prepared statements, one transaction per batch of the same 2,000
 * events. The baseline's digest must equal the replay's, which proves it wrote
 * the same rows.
 *
 * @module
 */
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { openSqliteStore } from "../events/sqlite_store.ts";
import type { EventStore } from "../events/store.ts";
import type { RecordedEvent } from "../events/types.ts";
import { ALL_PROJECTIONS } from "../projections/all.ts";
import { auditView } from "../projections/audit_view.ts";
import { projectionDigest } from "../projections/digest.ts";
import type { Projection } from "../projections/projection.ts";
import { openProjector } from "../projections/projector.ts";
import { removeDatabase, replayInto } from "../projections/replay.ts";
import { searchIndexProjection } from "../projections/search_index.ts";
import { analysisVersion, ftsColumns } from "../projections/search_index.ts";
import { passageScopeTokens } from "../src/analysis/scope.ts";
import { openProjectionTables, rawReplay } from "./_replay_baseline.ts";
import { ensureReplayData, processedPositions, type ReplayData } from "./_replay_data.ts";
import { printRow, ratioRow, round } from "./_table.ts";

/** Events per transaction, as `replayInto` uses. */
const BATCH = 2000;

/** The projections the bench replays: every projection, with the search index and audit view even if `all.ts` lacks them. */
export function benchProjections(): { projections: readonly Projection[]; added: string[] } {
  const names = new Set(ALL_PROJECTIONS.map((projection) => projection.name));
  const added = [searchIndexProjection, auditView].filter((projection) => !names.has(projection.name));
  return { projections: [...ALL_PROJECTIONS, ...added], added: added.map((projection) => projection.name) };
}

/** Sizes of the replay data set. */
export function replaySizes(quick: boolean): { pages: number; audits: number } {
  return quick ? { pages: 10_000, audits: 20_000 } : { pages: 100_000, audits: 200_000 };
}

/** Builds the data set (once) with its projections, and returns it; start-up uses it too. */
export async function ensureReplayedData(quick: boolean): Promise<ReplayData> {
  const { pages, audits } = replaySizes(quick);
  const data = await ensureReplayData(pages, audits);
  const target = `${data.dir}/projections.db`;
  try {
    await Deno.stat(target);
  } catch {
    await timedReplay(data, target);
    return data;
  }
  if (!indexIsCurrent(target)) {
    // Built by code with another search analysis: a server started on it would rebuild the index first.
    await removeDatabase(target);
    await timedReplay(data, target);
  }
  return data;
}

/** Whether a cached projections file's search index is of this code's analysis version. */
function indexIsCurrent(path: string): boolean {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const row = db.prepare("SELECT version FROM search_analysis WHERE id = 1").get() as
      | { version: string }
      | undefined;
    return row?.version === analysisVersion();
  } catch {
    return false;
  } finally {
    db.close();
  }
}

interface ReplayTiming {
  digest: string;
  events: number;
  /** From opening the projector to the last batch applied. */
  apply_ms: number;
  /** Of which reading and parsing the log. */
  read_ms: number;
  /** The whole `replayInto`, with the digest and the swap. */
  total_ms: number;
  via: string;
}

/** Replays the log into `target` the way `deno task replay` does, timing the parts. */
async function timedReplay(data: ReplayData, target: string): Promise<ReplayTiming> {
  const { projections, added } = benchProjections();
  const store = openSqliteStore(data.eventsPath);
  let readMs = 0;
  const timedStore: EventStore = {
    append: (stream, events, options) => store.append(stream, events, options),
    readFrom(position: number, limit?: number): RecordedEvent[] {
      const started = performance.now();
      const events = store.readFrom(position, limit);
      readMs += performance.now() - started;
      return events;
    },
    readStream: (stream) => store.readStream(stream),
    head: () => store.head(),
    subscribe: (listener) => store.subscribe(listener),
    close: () => store.close(),
  };
  const started = performance.now();
  let lastBatch = started;
  const onProgress = () => (lastBatch = performance.now());
  try {
    if (added.length === 0) {
      const result = await replayInto(timedStore, target, { onProgress });
      const total = performance.now() - started;
      return {
        ...result,
        apply_ms: lastBatch - started,
        read_ms: readMs,
        total_ms: total,
        via: "replayInto(ALL_PROJECTIONS)",
      };
    }
    // ALL_PROJECTIONS lacks some: the same steps as replayInto, with them added.
    await removeDatabase(target);
    const projector = openProjector(target, projections, { onProgress, batchSize: BATCH });
    const events = projector.catchUp(timedStore);
    const applyMs = lastBatch - started;
    const digest = projectionDigest(projector.db, projections);
    projector.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    projector.close();
    return {
      digest,
      events,
      apply_ms: applyMs,
      read_ms: readMs,
      total_ms: performance.now() - started,
      via: `replayInto's steps with ${added.join(", ")} added (not in ALL_PROJECTIONS yet)`,
    };
  } finally {
    await store.close();
  }
}

interface TableRows {
  table: string;
  columns: string[];
  /** Rows by batch index. */
  batches: Map<number, SQLInputValue[][]>;
}

/**
 * Reads back every row the replay wrote (the search index's contentless FTS
 * rows are rebuilt from its passages the way it writes them), each filed
 * under the batch of the event that made it final.
 */
function collectRows(replayed: string, data: ReplayData): TableRows[] {
  const processed = processedPositions(data.eventsPath);
  const db = new DatabaseSync(replayed, { readOnly: true });
  const batchOf = (position: number) => Math.floor((position - 1) / BATCH);
  try {
    const tables = (db.prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         AND name <> 'projection_checkpoints' ORDER BY rowid`,
    ).all() as Array<{ name: string; sql: string }>)
      .filter((table) => !/^CREATE VIRTUAL/i.test(table.sql))
      .filter((table) =>
        !/_(data|idx|docsize|config|content)$/.test(table.name) || !isShadow(db, table.name)
      );
    const out: TableRows[] = [];
    for (const { name } of tables) {
      const columns =
        (db.prepare("SELECT name FROM pragma_table_info(?)").all(name) as Array<{ name: string }>)
          .map((column) => column.name);
      const batches = new Map<number, SQLInputValue[][]>();
      // Text goes through a blob: node:sqlite cuts text read back at a NUL character, and some pages have one.
      const select = columns.map((c, i) =>
        `CASE typeof("${c}") WHEN 'text' THEN CAST("${c}" AS BLOB) ELSE "${c}" END AS c${i}`
      );
      const statement = db.prepare(`SELECT ${select.join(", ")} FROM "${name}"`);
      for (const raw of statement.iterate() as Iterable<Record<string, SQLInputValue>>) {
        const row: Record<string, SQLInputValue> = {};
        columns.forEach((column, i) => {
          const value = raw[`c${i}`] ?? null;
          row[column] = value instanceof Uint8Array ? decoder.decode(value) : value;
        });
        const position = typeof row.position === "number"
          ? row.position
          : typeof row.document_id === "string"
          ? processed.get(row.document_id) ?? 1
          : 1;
        const batch = batchOf(position);
        let list = batches.get(batch);
        if (!list) batches.set(batch, list = []);
        list.push(columns.map((column) => row[column] ?? null));
      }
      out.push({ table: name, columns, batches });
    }
    const passages = out.find((rows) => rows.table === "search_passages");
    const documents = out.find((rows) => rows.table === "search_documents");
    if (passages && documents && hasTable(db, "search_fts")) out.push(ftsRows(passages, documents));
    return out;
  } finally {
    db.close();
  }
}

const decoder = new TextDecoder();

function hasTable(db: DatabaseSync, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
}

/** Whether a table is an FTS5 shadow table (its virtual table exists). */
function isShadow(db: DatabaseSync, name: string): boolean {
  return hasTable(db, name.replace(/_(data|idx|docsize|config|content)$/, ""));
}

/** The FTS rows of the search index, written as `projections/search_index.ts` writes them. */
function ftsRows(passages: TableRows, documents: TableRows): TableRows {
  const at = (column: string) => passages.columns.indexOf(column);
  const [id, doc, person, folder, section, text, notes] = [
    "passage_id",
    "document_id",
    "person_id",
    "folder_id",
    "section",
    "text",
    "notes",
  ].map(at) as [number, number, number, number, number, number, number];
  const [docId, docName, docType] = ["document_id", "name", "type"].map((column) =>
    documents.columns.indexOf(column)
  ) as [number, number, number];
  const named = new Map<string, { name: string; type: string }>();
  for (const rows of documents.batches.values()) {
    for (const row of rows) {
      named.set(row[docId] as string, { name: row[docName] as string, type: row[docType] as string });
    }
  }
  const batches = new Map<number, SQLInputValue[][]>();
  for (const [batch, rows] of passages.batches) {
    batches.set(
      batch,
      rows.map((row) => {
        const tokens = passageScopeTokens(
          row[doc] as string,
          row[folder] as string | null,
          row[person] as string,
        );
        const columns = ftsColumns(
          {
            text: row[text] as string,
            section: row[section] as string | null,
            notes: row[notes] as string | null,
          },
          named.get(row[doc] as string)!,
        );
        return [row[id]!, columns.body, columns.heading, columns.notes, columns.name, tokens];
      }),
    );
  }
  return { table: "search_fts", columns: ["rowid", "body", "heading", "notes", "name", "scope"], batches };
}

/** Inserts the rows into a fresh database, one transaction per batch; returns the ms it took. */
function insertRows(path: string, rows: TableRows[], projections: readonly Projection[]): number {
  const started = performance.now();
  const db = openProjectionTables(path, projections);
  // A table the projections' init already filled (the search index's version row) is not copied again.
  rows = rows.filter((table) =>
    table.table === "search_fts" ||
    (db.prepare(`SELECT count(*) AS n FROM "${table.table}"`).get() as { n: number }).n === 0
  );
  const statements = rows.map((table) =>
    db.prepare(
      `INSERT INTO "${table.table}" (${table.columns.map((c) => `"${c}"`).join(", ")}) VALUES (${
        table.columns.map(() => "?").join(", ")
      })`,
    )
  );
  const last = Math.max(0, ...rows.flatMap((table) => [...table.batches.keys()]));
  for (let batch = 0; batch <= last; batch++) {
    db.exec("BEGIN IMMEDIATE");
    rows.forEach((table, t) => {
      for (const row of table.batches.get(batch) ?? []) statements[t]!.run(...row);
    });
    db.exec("COMMIT");
  }
  const ms = performance.now() - started;
  db.close();
  return ms;
}

/** Runs the replay benchmark, prints its row and returns its figures. */
export async function benchReplay(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const { pages, audits } = replaySizes(opts.quick);
  const data = await ensureReplayData(pages, audits);
  const { projections } = benchProjections();
  const target = `${data.dir}/projections.db`;

  const sergo = await timedReplay(data, target);

  // The baseline: the same log, the same rows, written by hand.
  const rawPath = `${data.dir}/raw.db`;
  await removeDatabase(rawPath);
  const store = openSqliteStore(data.eventsPath);
  const rawStarted = performance.now();
  rawReplay(store, rawPath, projections, BATCH);
  const rawMs = performance.now() - rawStarted;
  await store.close();
  const rawSame = digestOf(rawPath, projections) === sergo.digest;
  if (!Deno.env.get("BENCH_KEEP")) await removeDatabase(rawPath);

  // The floor: only the inserts, of rows computed beforehand.
  const rows = collectRows(target, data);
  const insertPath = `${data.dir}/insert_only.db`;
  await removeDatabase(insertPath);
  const insertMs = insertRows(insertPath, rows, projections);
  const insertSame = digestOf(insertPath, projections) === sergo.digest;
  if (!Deno.env.get("BENCH_KEEP")) await removeDatabase(insertPath);

  const perSecond = (ms: number) => Math.round(sergo.events / (ms / 1000));
  const result = {
    pages: data.pages,
    documents: data.documents,
    audit_events: data.audits,
    events: sergo.events,
    projections: projections.map((projection) => projection.name),
    via: sergo.via,
    sergo_events_per_s: perSecond(sergo.apply_ms),
    baseline_events_per_s: perSecond(rawMs),
    ratio: round(rawMs / sergo.apply_ms, 3),
    insert_only_events_per_s: perSecond(insertMs),
    ratio_to_insert_only: round(insertMs / sergo.apply_ms, 3),
    sergo_apply_s: round(sergo.apply_ms / 1000, 2),
    sergo_read_log_s: round(sergo.read_ms / 1000, 2),
    sergo_replay_total_s: round(sergo.total_ms / 1000, 2),
    baseline_s: round(rawMs / 1000, 2),
    insert_only_s: round(insertMs / 1000, 2),
    baseline_same_rows: rawSame,
    insert_only_same_rows: insertSame,
    data_build_s: data.build_seconds,
  };
  const notes = [
    ...(rawSame ? [] : ["the baseline's rows differ from the replay's"]),
    ...(insertSame ? [] : ["the insert-only rows differ from the replay's"]),
    `inserts alone (rows computed beforehand): ${result.insert_only_events_per_s} ev/s, ratio ${result.ratio_to_insert_only}`,
  ];
  const row = ratioRow({
    figure: `replay events/s (${data.pages} pages + ${data.audits} audit events)`,
    sergo: `${result.sergo_events_per_s} ev/s`,
    baseline: `${result.baseline_events_per_s} ev/s`,
    ratio: result.ratio,
    budget: { op: ">=", value: 0.7 },
    note: notes.join("; "),
  });
  printRow(row);
  return { ...result, rows: [row] };
}

function digestOf(path: string, projections: readonly Projection[]): string {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return projectionDigest(db, projections);
  } finally {
    db.close();
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchReplay({ quick: Deno.args.includes("--quick") }), null, 2));
}
