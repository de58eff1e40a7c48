/**
 * The embedded event store: SQLite through `node:sqlite`, WAL mode, hash
 * chained, with group commit of concurrent appends.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { type ChainVerdict, eventHash, GENESIS_HASH, type StoredRow, verifyRows } from "./hash_chain.ts";
import {
  type AppendOptions,
  type AppendResult,
  ConcurrencyError,
  type EventStore,
  type LogHead,
  StoredEventError,
} from "./store.ts";
import { EVENT_VERSIONS, isEventType, type RecordedEvent, type SergoEvent, validateEvent } from "./types.ts";
import { EVENT_SCHEMAS } from "./types.ts";

const SCHEMA = `
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

interface Pending {
  stream: string;
  events: SergoEvent[];
  options: AppendOptions;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

interface Row {
  position: number;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
  prev_hash: string;
  hash: string;
}

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** How long to wait for another process's write lock, in ms. Default 10 s. */
  busyTimeoutMs?: number;
}

/** Opens (creating if needed) the SQLite event store at `path`. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteEventStore {
  return new SqliteEventStore(path, options);
}

/** The SQLite event store. */
export class SqliteEventStore implements EventStore {
  readonly #db: DatabaseSync;
  #pending: Pending[] = [];
  #flushScheduled = false;
  #flushing: Promise<void> | null = null;
  #listeners = new Set<(events: RecordedEvent[]) => void>();
  #closed = false;
  #transactions = 0;

  /** Opens the store; prefer {@linkcode openSqliteStore}. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    this.#db.exec("PRAGMA journal_mode = WAL");
    this.#db.exec("PRAGMA synchronous = FULL");
    this.#db.exec(SCHEMA);
  }

  append(stream: string, events: SergoEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new Error("Cannot append: the event store is closed"));
    if (events.length === 0) {
      return Promise.reject(new Error(`Cannot append to "${stream}": no events given`));
    }
    let validated: SergoEvent[];
    try {
      validated = events.map((event) => validateEvent(event));
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ stream, events: validated, options, resolve, reject });
      this.#scheduleFlush();
    });
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // After the I/O already waiting in this turn of the event loop, so that appends
    // from requests that arrived together share one transaction (setTimeout(0) costs
    // a millisecond or more; setImmediate runs as soon as pending I/O is handled).
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flushing = Promise.resolve().then(() => this.#flush());
    });
  }

  /** Writes every pending batch in one transaction; a batch that conflicts fails alone. */
  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }> = [];
    const committed: RecordedEvent[] = [];
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      const head = this.#headRow();
      let position = head.position;
      let prevHash = head.hash;
      const getVersion = this.#db.prepare("SELECT version FROM streams WHERE stream = ?");
      const insertStream = this.#db.prepare("INSERT INTO streams (stream, version) VALUES (?, ?)");
      const updateStream = this.#db.prepare(
        "UPDATE streams SET version = ? WHERE stream = ? AND version = ?",
      );
      const insertEvent = this.#db.prepare(
        `INSERT INTO events (position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const item of batch) {
        const current = (getVersion.get(item.stream) as { version: number } | undefined)?.version ?? null;
        const expected = item.options.expectedVersion ?? "any";
        const ok = expected === "any" ||
          (expected === "no_stream" && current === null) ||
          (expected === "stream_exists" && current !== null) ||
          (typeof expected === "number" && current === expected);
        if (!ok) {
          outcomes.push({ ok: false, error: new ConcurrencyError(item.stream, expected, current) });
          continue;
        }
        const from = current ?? 0;
        const to = from + item.events.length;
        // The version check is enforced by SQL too, not only by the read above.
        if (current === null) insertStream.run(item.stream, to);
        else if (updateStream.run(to, item.stream, from).changes !== 1) {
          outcomes.push({ ok: false, error: new ConcurrencyError(item.stream, expected, current) });
          continue;
        }
        const recorded: RecordedEvent[] = [];
        item.events.forEach((event, i) => {
          position++;
          const fields = {
            position,
            stream: item.stream,
            stream_version: from + i + 1,
            type: event.type,
            schema_version: EVENT_VERSIONS[event.type],
            data: event.data,
            metadata: event.metadata,
          };
          const hash = eventHash(prevHash, fields);
          insertEvent.run(
            position,
            fields.stream,
            fields.stream_version,
            fields.type,
            fields.schema_version,
            JSON.stringify(fields.data),
            JSON.stringify(fields.metadata),
            prevHash,
            hash,
          );
          recorded.push({ ...event, ...fields, prev_hash: prevHash, hash } as RecordedEvent);
          prevHash = hash;
        });
        committed.push(...recorded);
        outcomes.push({ ok: true, result: { events: recorded, streamVersion: to } });
      }
      this.#db.exec("COMMIT");
      this.#transactions++;
    } catch (error) {
      try {
        this.#db.exec("ROLLBACK");
      } catch { /* the transaction may not have started */ }
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.result);
      else item.reject(outcome.error);
    });
    if (committed.length > 0) {
      for (const listener of this.#listeners) {
        try {
          listener(committed);
        } catch (error) {
          console.error("An event listener failed:", error);
        }
      }
    }
  }

  #headRow(): LogHead {
    const row = this.#db.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").get() as
      | { position: number; hash: string }
      | undefined;
    return row ? { position: row.position, hash: row.hash } : { position: 0, hash: GENESIS_HASH };
  }

  head(): LogHead {
    return this.#headRow();
  }

  /** How many append transactions this store has committed (group commit makes it fewer than appends). */
  get transactions(): number {
    return this.#transactions;
  }

  readFrom(position: number, limit = 1000): RecordedEvent[] {
    const rows = this.#db
      .prepare("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?")
      .all(position, limit) as unknown as Row[];
    return rows.map(parseRow);
  }

  readStream(stream: string): RecordedEvent[] {
    const rows = this.#db
      .prepare("SELECT * FROM events WHERE stream = ? ORDER BY stream_version")
      .all(stream) as unknown as Row[];
    return rows.map(parseRow);
  }

  /** Walks the whole chain from the first event; see {@linkcode verifyRows}. */
  verify(): ChainVerdict {
    const statement = this.#db.prepare(
      "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events ORDER BY position",
    );
    return verifyRows(statement.iterate() as Iterable<StoredRow>);
  }

  subscribe(listener: (events: RecordedEvent[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#flushScheduled || this.#flushing || this.#pending.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (this.#flushing) {
        await this.#flushing;
        this.#flushing = null;
      }
    }
    this.#closed = true;
    this.#db.close();
  }
}

function parseRow(row: Row): RecordedEvent {
  if (!isEventType(row.type)) throw new StoredEventError(row.position, `unknown event type "${row.type}"`);
  let data: unknown, metadata: unknown;
  try {
    data = JSON.parse(row.data);
    metadata = JSON.parse(row.metadata);
  } catch {
    throw new StoredEventError(row.position, "its data is not JSON");
  }
  const parsed = EVENT_SCHEMAS[row.type].safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StoredEventError(
      row.position,
      `"${row.type}" data does not match its schema: ${issue?.path.join(".") || "data"}: ${issue?.message}`,
    );
  }
  return {
    type: row.type,
    data: parsed.data,
    metadata: metadata as RecordedEvent["metadata"],
    position: row.position,
    stream: row.stream,
    stream_version: row.stream_version,
    schema_version: row.schema_version,
    prev_hash: row.prev_hash,
    hash: row.hash,
  } as RecordedEvent;
}
