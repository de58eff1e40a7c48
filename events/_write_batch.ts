/**
 * One group-commit transaction of the SQLite log: every item's concurrency
 * check and its events, hash chained, written in one `BEGIN IMMEDIATE` …
 * `COMMIT`. Shared by the inline store and its writer thread, so both write
 * exactly the same rows.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { eventHash, GENESIS_HASH } from "./hash_chain.ts";
import type { ExpectedVersion } from "./store.ts";
import { EVENT_VERSIONS, type RecordedEvent, type SergoEvent } from "./types.ts";

/** The tables of the log. */
export const LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY,
  stream TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  UNIQUE (stream, stream_version)
);
CREATE TABLE IF NOT EXISTS streams (
  stream TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Opens the log's database with its settings: WAL, fsync at every commit, a busy timeout. */
export function openLogDatabase(path: string, busyTimeoutMs: number): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec(LOG_SCHEMA);
  return db;
}

/** One append in a group commit. */
export interface WriteItem {
  stream: string;
  events: SergoEvent[];
  expectedVersion: ExpectedVersion;
}

/**
 * Where an append's events landed: the first one's position and the hash
 * before it, then every event's hash (64 hex characters each, in order).
 * Positions and stream versions follow one another.
 */
export interface AppendStamp {
  firstPosition: number;
  prevHash: string;
  hashes: string;
}

/**
 * What became of one append: where its events landed, or the conflict that
 * refused it. Only the stamp comes back (not the events), so the writer
 * thread does not send every event's data back to the thread that has it.
 */
export type WriteOutcome =
  | { ok: true; stamp: AppendStamp; streamVersion: number }
  | { ok: false; stream: string; expected: ExpectedVersion; actual: number | null }
  | { ok: false; stream: string; failure: string };

const HASH_CHARS = 64;

/** The recorded events of an append that was written: its events with their stamp. */
export function recordedEvents(item: WriteItem, stamp: AppendStamp, streamVersion: number): RecordedEvent[] {
  const firstVersion = streamVersion - item.events.length + 1;
  let prevHash = stamp.prevHash;
  return item.events.map((event, i) => {
    const hash = stamp.hashes.slice(i * HASH_CHARS, (i + 1) * HASH_CHARS);
    const recorded = {
      ...event,
      position: stamp.firstPosition + i,
      stream: item.stream,
      stream_version: firstVersion + i,
      type: event.type,
      schema_version: EVENT_VERSIONS[event.type],
      data: event.data,
      metadata: event.metadata,
      prev_hash: prevHash,
      hash,
    } as RecordedEvent;
    prevHash = hash;
    return recorded;
  });
}

const prepared = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** A statement prepared once per connection: a group commit runs five of them. */
function cached(db: DatabaseSync, sql: string): StatementSync {
  let statements = prepared.get(db);
  if (!statements) prepared.set(db, statements = new Map());
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, statement = db.prepare(sql));
  return statement;
}

/** One event's row, encoded and hashed, ready to insert. */
interface EncodedRow {
  position: number;
  streamVersion: number;
  type: string;
  schemaVersion: number;
  data: string;
  metadata: string;
  prevHash: string;
  hash: string;
}

/** Encodes and hashes an item's events from where the log and its stream stand; throws on data it cannot encode. */
function encodeItem(item: WriteItem, from: number, position: number, prevHash: string): EncodedRow[] {
  return item.events.map((event, i) => {
    const fields = {
      position: position + i + 1,
      stream: item.stream,
      stream_version: from + i + 1,
      type: event.type,
      schema_version: EVENT_VERSIONS[event.type],
      data: event.data,
      metadata: event.metadata,
    };
    const hash = eventHash(prevHash, fields);
    const row = {
      position: fields.position,
      streamVersion: fields.stream_version,
      type: fields.type,
      schemaVersion: fields.schema_version,
      data: JSON.stringify(fields.data),
      metadata: JSON.stringify(fields.metadata),
      prevHash,
      hash,
    };
    prevHash = hash;
    return row;
  });
}

/**
 * Writes the items in one transaction; throws (after rolling back) when SQLite
 * fails. An item whose events cannot be encoded (hashed and serialised) fails
 * alone, before anything of it is written: the others commit.
 */
export function writeBatch(db: DatabaseSync, items: readonly WriteItem[]): WriteOutcome[] {
  const outcomes: WriteOutcome[] = [];
  db.exec("BEGIN IMMEDIATE");
  try {
    const head = cached(db, "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").get() as
      | { position: number; hash: string }
      | undefined;
    let position = head?.position ?? 0;
    let prevHash = head?.hash ?? GENESIS_HASH;
    const getVersion = cached(db, "SELECT version FROM streams WHERE stream = ?");
    const insertStream = cached(db, "INSERT INTO streams (stream, version) VALUES (?, ?)");
    const updateStream = cached(db, "UPDATE streams SET version = ? WHERE stream = ? AND version = ?");
    const insertEvent = cached(
      db,
      `INSERT INTO events (position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const item of items) {
      const current = (getVersion.get(item.stream) as { version: number } | undefined)?.version ?? null;
      const expected = item.expectedVersion;
      const ok = expected === "any" ||
        (expected === "no_stream" && current === null) ||
        (expected === "stream_exists" && current !== null) ||
        (typeof expected === "number" && current === expected);
      if (!ok) {
        outcomes.push({ ok: false, stream: item.stream, expected, actual: current });
        continue;
      }
      const from = current ?? 0;
      const to = from + item.events.length;
      let rows: EncodedRow[];
      try {
        rows = encodeItem(item, from, position, prevHash);
      } catch (error) {
        const failure = error instanceof Error ? error.message : String(error);
        outcomes.push({ ok: false, stream: item.stream, failure });
        continue;
      }
      // The version check is enforced by SQL too, not only by the read above.
      if (current === null) insertStream.run(item.stream, to);
      else if (updateStream.run(to, item.stream, from).changes !== 1) {
        outcomes.push({ ok: false, stream: item.stream, expected, actual: current });
        continue;
      }
      const stamp: AppendStamp = { firstPosition: position + 1, prevHash, hashes: "" };
      for (const row of rows) {
        insertEvent.run(
          row.position,
          item.stream,
          row.streamVersion,
          row.type,
          row.schemaVersion,
          row.data,
          row.metadata,
          row.prevHash,
          row.hash,
        );
        stamp.hashes += row.hash;
        position = row.position;
        prevHash = row.hash;
      }
      outcomes.push({ ok: true, stamp, streamVersion: to });
    }
    db.exec("COMMIT");
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch { /* the transaction may not have started */ }
    throw error;
  }
  return outcomes;
}
