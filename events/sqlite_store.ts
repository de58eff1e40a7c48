/**
 * The embedded event store: SQLite through `node:sqlite`, WAL mode, hash
 * chained, with group commit of concurrent appends.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { type ChainVerdict, GENESIS_HASH, type StoredRow, verifyRows } from "./hash_chain.ts";
import {
  openLogDatabase,
  recordedEvents,
  writeBatch,
  type WriteItem,
  type WriteOutcome,
} from "./_write_batch.ts";
import type { WriterRequest, WriterResponse } from "./_writer_thread.ts";
import {
  type AppendOptions,
  type AppendResult,
  ConcurrencyError,
  type EventStore,
  type LogHead,
  StoredEventError,
  type TellSpan,
} from "./store.ts";
import { isEventType, type RecordedEvent, type SergoEvent, validateEvent } from "./types.ts";
import { EVENT_SCHEMAS } from "./types.ts";

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
  /**
   * Where commits run: `"inline"` (default; short-lived commands) or
   * `"thread"`, a writer thread, so a server keeps answering while each commit
   * waits for the disk.
   */
  writer?: "inline" | "thread";
  /**
   * How long an append waits for the writer thread's answer before it fails,
   * in ms. Default 30 s; a commit normally takes a few milliseconds.
   */
  writerTimeoutMs?: number;
}

/** How the log's writer is doing, for `/healthz`. */
export interface WriterStatus {
  /** False when a commit has waited longer than the store's stuck threshold, or the last one timed out. */
  ok: boolean;
  /** How long the oldest commit still waiting for the writer has waited, in ms (0 when none waits). */
  waitingMs: number;
  /** What is wrong, in one sentence, when not ok. */
  problem?: string;
}

/** How long a commit may wait for the writer thread before `/healthz` says the writer is stuck. */
export const WRITER_STUCK_MS = 10_000;

interface Waiting {
  since: number;
  timer: ReturnType<typeof setTimeout>;
  resolve(o: WriteOutcome[]): void;
  reject(e: Error): void;
}

/**
 * The writer thread, as the store talks to it. Every wait for it has a
 * deadline: a write it does not answer in time fails with an error (a
 * message the thread could not read is never answered), and so does closing.
 */
class WriterThread {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, Waiting>();
  readonly #timeoutMs: number;
  #next = 1;
  #closed: (() => void) | null = null;
  /** When the last write timed out, until the thread answers again. */
  timedOutAt: number | null = null;

  constructor(path: string, busyTimeoutMs: number, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#worker = new Worker(new URL("./_writer_thread.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = (message: MessageEvent<WriterResponse>) => {
      const response = message.data;
      if (response.kind === "written" || response.kind === "failed") {
        this.timedOutAt = null;
        const waiting = this.#waiting.get(response.id);
        if (!waiting) return; // it timed out; the log catches up from the file
        this.#waiting.delete(response.id);
        clearTimeout(waiting.timer);
        if (response.kind === "written") waiting.resolve(response.outcomes);
        else waiting.reject(new Error(`Cannot append: ${response.message}`));
      } else if (response.kind === "closed") {
        this.#closed?.();
      }
    };
    this.#worker.onerror = (event) => {
      event.preventDefault();
      for (const waiting of this.#waiting.values()) {
        clearTimeout(waiting.timer);
        waiting.reject(new Error(`Cannot append: ${event.message}`));
      }
      this.#waiting.clear();
    };
    this.#worker.postMessage({ kind: "open", path, busyTimeoutMs } satisfies WriterRequest);
  }

  write(items: WriteItem[]): Promise<WriteOutcome[]> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        this.timedOutAt = Date.now();
        reject(
          new Error(
            `Cannot append: the log's writer did not answer within ${formatMs(this.#timeoutMs)}`,
          ),
        );
      }, this.#timeoutMs);
      this.#waiting.set(id, { since: Date.now(), timer, resolve, reject });
      try {
        this.#worker.postMessage({ kind: "write", id, items } satisfies WriterRequest);
      } catch (error) {
        this.#waiting.delete(id);
        clearTimeout(timer);
        reject(error);
      }
    });
  }

  /** How long the oldest write still waiting has waited, in ms. */
  oldestWaitMs(now: number): number {
    for (const waiting of this.#waiting.values()) return now - waiting.since;
    return 0;
  }

  async close(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      timer = setTimeout(resolve, this.#timeoutMs);
      this.#worker.postMessage({ kind: "close" } satisfies WriterRequest);
    });
    clearTimeout(timer);
    this.#worker.terminate();
  }
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
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
  /** Group commits under way: one inline; with the writer thread, a second may queue behind the first. */
  #inFlight = new Set<Promise<void>>();
  #listeners = new Set<(events: RecordedEvent[]) => void>();
  #closed = false;
  #transactions = 0;
  readonly #writer: WriterThread | null;
  #readStatement: StatementSync | null = null;
  #headStatement: StatementSync | null = null;

  /** Opens the store; prefer {@linkcode openSqliteStore}. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
    this.#db = openLogDatabase(path, busyTimeoutMs);
    this.#writer = options.writer === "thread"
      ? new WriterThread(path, busyTimeoutMs, options.writerTimeoutMs ?? 30_000)
      : null;
  }

  /** Whether the writer thread answers: a commit waiting too long, or one that timed out, means it is stuck. */
  writerStatus(): WriterStatus {
    if (!this.#writer) return { ok: true, waitingMs: 0 };
    const now = Date.now();
    const waitingMs = this.#writer.oldestWaitMs(now);
    if (waitingMs > WRITER_STUCK_MS) {
      return {
        ok: false,
        waitingMs,
        problem: `A commit has waited ${formatMs(waitingMs)} for the log's writer.`,
      };
    }
    if (this.#writer.timedOutAt !== null) {
      return {
        ok: false,
        waitingMs,
        problem: `The log's writer has not answered since a commit timed out ${
          formatMs(now - this.#writer.timedOutAt)
        } ago.`,
      };
    }
    return { ok: true, waitingMs };
  }

  append(stream: string, events: SergoEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new Error("Cannot append: the event store is closed"));
    if (events.length === 0) {
      return Promise.reject(new Error(`Cannot append to "${stream}": no events given`));
    }
    if (options.takeToken) {
      // The embedded server counts its keys' calls in its own memory; nothing here may skip that check.
      return Promise.reject(new Error(`Cannot append to "${stream}": this log has no shared rate buckets`));
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
    const room = this.#writer ? 2 : 1;
    if (this.#flushScheduled || this.#inFlight.size >= room) return;
    this.#flushScheduled = true;
    // After the I/O already waiting in this turn of the event loop, so that appends
    // from requests that arrived together share one transaction (setTimeout(0) costs
    // a millisecond or more; setImmediate runs as soon as pending I/O is handled).
    setImmediate(() => {
      this.#flushScheduled = false;
      if (this.#pending.length === 0) return;
      // The writer thread answers in order, so batches resolve in log order.
      const flush: Promise<void> = this.#flush().finally(() => {
        this.#inFlight.delete(flush);
        // Appends that arrived during the write go in the next transaction.
        if (this.#pending.length > 0) this.#scheduleFlush();
      });
      this.#inFlight.add(flush);
    });
  }

  /**
   * Writes every pending batch in one transaction (a batch that conflicts
   * fails alone), inline or on the writer thread, then tells listeners.
   */
  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const items = batch.map((item) => ({
      stream: item.stream,
      events: item.events,
      expectedVersion: item.options.expectedVersion ?? "any",
    }));
    let outcomes: WriteOutcome[];
    try {
      outcomes = this.#writer ? await this.#writer.write(items) : writeBatch(this.#db, items);
      this.#transactions++;
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    const committed: RecordedEvent[] = [];
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        const events = recordedEvents(items[i]!, outcome.stamp, outcome.streamVersion);
        committed.push(...events);
        item.resolve({ events, streamVersion: outcome.streamVersion });
      } else if ("failure" in outcome) {
        item.reject(new Error(`Cannot append to "${outcome.stream}": ${outcome.failure}`));
      } else {
        item.reject(new ConcurrencyError(outcome.stream, outcome.expected, outcome.actual));
      }
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
    this.#headStatement ??= this.#db.prepare(
      "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1",
    );
    const row = this.#headStatement.get() as
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
    this.#readStatement ??= this.#db.prepare(
      "SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?",
    );
    const rows = this.#readStatement.all(position, limit) as unknown as Row[];
    return rows.map(parseStoredRow);
  }

  readStream(stream: string): RecordedEvent[] {
    const rows = this.#db
      .prepare("SELECT * FROM events WHERE stream = ? ORDER BY stream_version")
      .all(stream) as unknown as Row[];
    return rows.map(parseStoredRow);
  }

  /** Up to `limit` stored rows after `position`, as stored (the JSON text unparsed), for `sergo migrate`. */
  readRows(position: number, limit: number): StoredRow[] {
    return this.#db.prepare(
      "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events WHERE position > ? ORDER BY position LIMIT ?",
    ).all(position, limit) as unknown as StoredRow[];
  }

  /** Walks the whole chain from the first event; see {@linkcode verifyRows}. */
  verify(): ChainVerdict {
    const statement = this.#db.prepare(
      "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events ORDER BY position",
    );
    return verifyRows(statement.iterate() as Iterable<StoredRow>);
  }

  /** Calls `listener` with every batch this process appends (consecutive events: no span). */
  subscribe(listener: (events: RecordedEvent[], span?: TellSpan) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#flushScheduled || this.#inFlight.size > 0 || this.#pending.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.allSettled([...this.#inFlight]);
    }
    this.#closed = true;
    await this.#writer?.close();
    this.#db.close();
  }
}

/** Parses a stored row into a recorded event; throws {@linkcode StoredEventError} naming its position. */
export function parseStoredRow(row: StoredRow): RecordedEvent {
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
