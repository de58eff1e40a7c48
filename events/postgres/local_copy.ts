/**
 * A replica's local copy of the shared log: a SQLite file with the same rows
 * as `sergo_events`, filled in position order from PostgreSQL, so that the
 * `EventStore` interface's synchronous reads never cross the
 * network. It is caught up by pulls (one at a time, 2,000 rows each, the
 * first at start-up checking that the copy is a prefix of the database's
 * log) and by the rows of this replica's own group commits, with the other
 * writers' rows their answers carried; each event is told to subscribers as
 * it reaches the copy, whoever wrote it. When to pull (notices, the poll, own
 * commits) is the store's to decide (store.ts).
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { LOG_SCHEMA } from "../_write_batch.ts";
import { GENESIS_HASH, type StoredRow } from "../hash_chain.ts";
import { parseStoredRow } from "../sqlite_store.ts";
import type { LogHead } from "../store.ts";
import type { RecordedEvent } from "../types.ts";
import { DatabaseUnavailableError } from "./errors.ts";
import type { CarriedRow, OwnRecord, PgRow, Sql } from "./group_commit_sql.ts";

/** A carried row as stored. */
function storedRow(row: CarriedRow): StoredRow {
  return {
    position: row[0],
    stream: row[1],
    stream_version: row[2],
    type: row[3],
    schema_version: row[4],
    data: row[5],
    metadata: row[6],
    prev_hash: row[7],
    hash: row[8],
  };
}

/**
 * The carried rows past the copy's head `local` up to `before`, with their
 * events, when they follow it without a gap and chain from its hash; null
 * otherwise (then they are pulled, and a pull also reports an event this
 * version cannot read).
 */
function carriedAfter(
  carried: CarriedRow[] | null,
  local: LogHead,
  before: number,
): { rows: StoredRow[]; events: RecordedEvent[] } | null {
  if (!carried) return null;
  const rows: StoredRow[] = [];
  let position = local.position;
  let hash = local.hash;
  for (const carriedRow of carried) {
    if (carriedRow[0] <= local.position) continue;
    const row = storedRow(carriedRow);
    if (row.position !== position + 1 || row.prev_hash !== hash) return null;
    rows.push(row);
    position = row.position;
    hash = row.hash;
  }
  if (position !== before) return null;
  try {
    return { rows, events: rows.map((row) => followedEvent(row)) };
  } catch {
    return null;
  }
}

/**
 * Another writer's event as subscribers are told it: parsed, but an MCP
 * call's data and metadata only when they are read. On the shared log no
 * projection reads them (the audit view reads the calls from the database,
 * events/postgres/audit_calls.ts), and parsing and checking every other
 * replica's call against its schema was about 5 µs of a replica's CPU per
 * call it followed (bench/README.md, "Replicas by CPU"). A call whose data
 * does not match its schema throws where it is read, as a read from the copy
 * (`readFrom`, which parses every row) does.
 */
function followedEvent(row: StoredRow): RecordedEvent {
  if (row.type !== "McpCalled") return parseStoredRow(row);
  let parsed: RecordedEvent | null = null;
  const parse = () => parsed ??= parseStoredRow(row);
  return {
    type: row.type,
    position: row.position,
    stream: row.stream,
    stream_version: row.stream_version,
    schema_version: row.schema_version,
    prev_hash: row.prev_hash,
    hash: row.hash,
    get data() {
      return parse().data;
    },
    get metadata() {
      return parse().metadata;
    },
  } as RecordedEvent;
}

/** The local copy of the log; see the module documentation. */
export class LocalCopy {
  /** The pool pulls read from. */
  readonly #sql: Sql;
  readonly #cache: DatabaseSync;
  /** The copy's statements, prepared once (preparing them per pull and per read was 4 % of a busy replica's time). */
  readonly #statements: Record<"insert" | "upsertStream" | "head" | "readFrom" | "readStream", StatementSync>;
  #pulling: Promise<void> = Promise.resolve();
  #pullAgain = false;
  /** Other writers' rows this copy took: by pulls (queries of their own), and carried by own commits' answers. */
  readonly #followed = { pulls: 0, pulledRows: 0, carriedRows: 0 };
  #listeners = new Set<(events: RecordedEvent[]) => void>();
  #stopped = false;
  /** Whether the copy was found to be a prefix of the database's log (see start()). */
  #checked = false;

  /** Wraps the copy's SQLite database `cache`, pulling from `sql`. */
  constructor(sql: Sql, cache: DatabaseSync) {
    this.#sql = sql;
    this.#cache = cache;
    cache.exec(LOG_SCHEMA);
    this.#statements = {
      // OR IGNORE: a CLI command sharing the data directory may have copied the same rows first.
      insert: cache.prepare(
        `INSERT OR IGNORE INTO events (position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      upsertStream: cache.prepare(
        "INSERT INTO streams (stream, version) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET version = max(version, excluded.version)",
      ),
      head: cache.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1"),
      readFrom: cache.prepare("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?"),
      readStream: cache.prepare("SELECT * FROM events WHERE stream = ? ORDER BY stream_version"),
    };
    // The copy need not reach the disk at each commit: PostgreSQL has every row, and what a crash takes from
    // the copy's end is pulled again at the next start (WAL mode stays consistent). A synchronous fsync here
    // blocked the event loop, and with it every request, once per group commit.
    cache.exec("PRAGMA synchronous = NORMAL");
  }

  /** Whether start() has found the copy to be a prefix of the database's log (nothing is copied before). */
  get checked(): boolean {
    return this.#checked;
  }

  /**
   * Checks that the copy is a prefix of the database's log and brings it up
   * to date, in one query when nothing is new: the first pull reads from the
   * copy's last event, whose hash must be the database's.
   */
  async start(): Promise<void> {
    const local = this.head();
    this.#pullAgain = true;
    const first = this.#pulling.then(async () => {
      await this.#pullOnce(local.position > 0 ? local : null);
      this.#checked = true;
      while (this.#pullAgain && !this.#stopped) {
        this.#pullAgain = false;
        await this.#pullOnce();
      }
    });
    this.#pulling = first.catch(() => {});
    await first;
  }

  /**
   * After an own commit: writes its rows into the local copy when they
   * follow the copy's head, with the other writers' rows the answer carried
   * before them (one transaction, one telling); pulls what it did not carry,
   * and pulls everything when the rows do not follow. Resolves whether the
   * own rows were written here (then subscribers were told with them).
   * `own` is null when they could not be computed here; `from` is the head
   * the commit locked, and `carried` the rows its answer carried.
   */
  afterCommit(
    own: readonly OwnRecord[] | null,
    commit: { from: number; carried: CarriedRow[] | null },
  ): Promise<boolean> {
    const next = this.#pulling.then(async () => {
      if (this.#stopped) return false;
      if (own === null) {
        await this.#pullOnce();
        return false;
      }
      // The own rows follow this position (or, when every append conflicted, the commit wrote none after it).
      const before = own.length > 0 ? own[0]!.position - 1 : commit.from;
      let local = this.head();
      let carried: { rows: StoredRow[]; events: RecordedEvent[] } | null = null;
      if (local.position < before) {
        carried = carriedAfter(commit.carried, local, before);
        if (carried === null) {
          await this.#pullOnce(null, before);
          local = this.head();
        }
      }
      const reached = carried && carried.rows.length > 0 ? carried.rows[carried.rows.length - 1]! : local;
      const first = own[0];
      if (!first || (reached.position === before && reached.hash === first.prev_hash)) {
        const rows = [...(carried?.rows ?? []), ...own.map((record) => record.row)];
        if (rows.length > 0) {
          this.#insertRows(rows);
          this.#followed.carriedRows += carried?.rows.length ?? 0;
          this.#tell([
            ...(carried?.events ?? []),
            ...own.map(({ row: _row, ...event }) => event as RecordedEvent),
          ]);
        }
        return true;
      }
      await this.#pullOnce();
      return false;
    });
    this.#pulling = next.then(() => {}, () => {});
    return next;
  }

  /** Brings the copy up to the database's committed head, telling subscribers about each new event. */
  sync(): Promise<void> {
    // One pull at a time; a request during a pull makes one more pull after it.
    this.#pullAgain = true;
    const next = this.#pulling.then(async () => {
      while (this.#pullAgain && !this.#stopped) {
        this.#pullAgain = false;
        await this.#pullOnce();
      }
    });
    this.#pulling = next.catch(() => {});
    return next;
  }

  /**
   * Copies what the database has past the copy's head, 2,000 rows at a time.
   * With `check` (the copy's head at start-up), the first read starts at that
   * event and refuses a copy whose last event the database has not, or has
   * with another hash. With `upTo`, it stops at that position.
   */
  async #pullOnce(check: LogHead | null = null, upTo: number | null = null): Promise<void> {
    for (;;) {
      const from = check ? check.position : this.head().position;
      if (upTo !== null && from >= upTo) return;
      const rows = await this.#sql<PgRow[]>`
        SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash
        FROM sergo_events WHERE position > ${check ? from - 1 : from}
        ${upTo === null ? this.#sql`` : this.#sql`AND position <= ${upTo}`} ORDER BY position
        LIMIT ${check ? 2001 : 2000}`;
      if (check) {
        const head = rows.shift();
        if (!head || Number(head.position) !== check.position || head.hash !== check.hash) {
          throw new DatabaseUnavailableError(
            `The local copy of the log (head ${check.position}) is not a prefix of the database's log; remove it to rebuild it`,
          );
        }
        check = null;
      }
      this.#followed.pulls++;
      this.#followed.pulledRows += rows.length;
      if (rows.length === 0 || this.#stopped) return;
      let expected = from + 1;
      for (const row of rows) {
        if (Number(row.position) !== expected) throw new Error(`the database's log has no event ${expected}`);
        expected++;
      }
      const stored = rows.map((row) => ({ ...row, position: Number(row.position) }));
      this.#insertRows(stored);
      // Told from the rows in hand, not read back from the copy: every other replica's audit entry comes this way.
      this.#tell(stored.map((row) => followedEvent(row)));
      if (rows.length < 2000) return;
    }
  }

  /** Writes rows that follow the copy's head into the copy, in one transaction. */
  #insertRows(rows: readonly StoredRow[]): void {
    const { insert, upsertStream } = this.#statements;
    const versions = new Map<string, number>();
    this.#cache.exec("BEGIN IMMEDIATE");
    try {
      for (const row of rows) {
        insert.run(
          row.position,
          row.stream,
          row.stream_version,
          row.type,
          row.schema_version,
          row.data,
          row.metadata,
          row.prev_hash,
          row.hash,
        );
        // Each stream once, at its last version (a busy key's audit entries are most of a batch's rows).
        versions.set(row.stream, row.stream_version);
      }
      for (const [stream, version] of versions) upsertStream.run(stream, version);
      this.#cache.exec("COMMIT");
    } catch (error) {
      this.#cache.exec("ROLLBACK");
      throw error;
    }
  }

  #tell(events: RecordedEvent[]): void {
    for (const listener of this.#listeners) {
      try {
        listener(events);
      } catch (error) {
        console.error("An event listener failed:", error);
      }
    }
  }

  /** The head of the copy (what it has read from the database). */
  head(): LogHead {
    const row = this.#statements.head.get() as
      | { position: number; hash: string }
      | undefined;
    return row ? { position: row.position, hash: row.hash } : { position: 0, hash: GENESIS_HASH };
  }

  /**
   * How the copy followed the database's log: its pulls (queries of their
   * own, each ahead of the copy), the rows they brought (other writers'; its
   * own only when its commit's rows could not be put in from memory), and
   * the other writers' rows its group commits' answers carried.
   */
  get followed(): { pulls: number; pulledRows: number; carriedRows: number } {
    return { ...this.#followed };
  }

  /** Up to `limit` events after `position`, from the copy. */
  readFrom(position: number, limit = 1000): RecordedEvent[] {
    const rows = this.#statements.readFrom.all(position, limit) as unknown as StoredRow[];
    return rows.map((row) => parseStoredRow(row));
  }

  /** A stream's events, from the copy. */
  readStream(stream: string): RecordedEvent[] {
    const rows = this.#statements.readStream.all(stream) as unknown as StoredRow[];
    return rows.map((row) => parseStoredRow(row));
  }

  /** Tells `listener` about every event as it reaches the copy; returns how to stop. */
  subscribe(listener: (events: RecordedEvent[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops pulling: waits for the pull under way, and starts no other. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#pulling;
  }

  /** Closes the copy's database (after stop()). */
  close(): void {
    this.#cache.close();
  }
}
