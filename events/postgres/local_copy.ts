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
 * The copy keeps no MCP call another writer made (nor one it pulled): on the
 * shared log no projection takes `McpCalled` (the audit view reads the calls
 * from `sergo_audit_calls`), and copying, carrying and telling every other
 * replica's call cost each replica CPU per call of any replica, so that two
 * replicas served well under twice one's calls per CPU second (issue 32;
 * bench/README.md, "Replicas by CPU"). Group commits' answers and pulls bring
 * every row but those calls; the positions between that they leave out are
 * kept as runs (`absent_calls`: first, last, and the last one's hash), so the
 * copy's head and the chain's continuity stay known. Subscribers are told
 * each batch with the span of positions it covers, so the projections pass
 * over the runs. A reader that needs every event (the audit export, an own
 * append whose rows were pulled) calls {@linkcode LocalCopy.complete} first,
 * which fetches the runs' rows from PostgreSQL into the copy.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { LOG_SCHEMA } from "../_write_batch.ts";
import { GENESIS_HASH, type StoredRow } from "../hash_chain.ts";
import { parseStoredRow } from "../sqlite_store.ts";
import type { LogHead, TellSpan } from "../store.ts";
import type { RecordedEvent } from "../types.ts";
import { DatabaseUnavailableError } from "./errors.ts";
import { CARRIED_ROWS, type CarriedRow, type OwnRecord, type PgRow, type Sql } from "./group_commit_sql.ts";

/** A run of positions whose events are MCP calls the copy leaves out; `hash` is the last one's. */
interface AbsentRun {
  first: number;
  last: number;
  hash: string;
}

/** The runs of left-out calls, beside the copy's events (a copy of the version before has none). */
const ABSENT_SCHEMA = `
CREATE TABLE IF NOT EXISTS absent_calls (
  first INTEGER PRIMARY KEY,
  last INTEGER NOT NULL,
  hash TEXT NOT NULL
);
`;

/** Rows to copy that follow `after`, with the runs of left-out calls between them and up to `through`. */
interface Following {
  rows: StoredRow[];
  absent: AbsentRun[];
  events: RecordedEvent[];
  span: TellSpan;
}

/**
 * The rows that follow the head `after` up to `through`, with the runs of
 * positions they leave out (other writers' MCP calls, left out by the
 * database's query); null when they do not follow it (a row at or before
 * the one before it, or whose prev_hash is not the hash before it) or do not
 * end at `through` with its hash. A run's hash is the prev_hash of the row
 * after it, or `through`'s. With `parse`, the rows' events too (null if one
 * cannot be read).
 */
function following(
  after: LogHead,
  rows: readonly StoredRow[],
  through: LogHead,
  parse = true,
): Following | null {
  const absent: AbsentRun[] = [];
  let position = after.position;
  let hash = after.hash;
  for (const row of rows) {
    if (row.position <= position) return null;
    if (row.position > position + 1) {
      absent.push({ first: position + 1, last: row.position - 1, hash: row.prev_hash });
    } else if (row.prev_hash !== hash) return null;
    position = row.position;
    hash = row.hash;
  }
  if (through.position > position) {
    absent.push({ first: position + 1, last: through.position, hash: through.hash });
  } else if (through.position < position || through.hash !== hash) {
    return null;
  }
  const span = { after: after.position, through: through.position };
  if (!parse) return { rows: [...rows], absent, events: [], span };
  try {
    return { rows: [...rows], absent, events: rows.map((row) => parseStoredRow(row)), span };
  } catch {
    return null;
  }
}

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
 * The carried rows past the copy's head `local` up to `before` (whose hash
 * is `beforeHash`), with the runs of calls they leave out; null when the
 * answer carried none, left some out past its limit, started after `local`,
 * or its rows do not follow (then they are pulled, and a pull also reports an
 * event this version cannot read).
 */
function carriedAfter(
  carried: CarriedRow[] | null,
  seen: number | null,
  local: LogHead,
  before: LogHead,
): Following | null {
  if (!carried || seen === null || seen > local.position || carried.length >= CARRIED_ROWS) return null;
  const rows: StoredRow[] = [];
  for (const carriedRow of carried) {
    if (carriedRow[0] > local.position) rows.push(storedRow(carriedRow));
  }
  return following(local, rows, before);
}

/** The local copy of the log; see the module documentation. */
export class LocalCopy {
  /** The pool pulls read from. */
  readonly #sql: Sql;
  readonly #cache: DatabaseSync;
  /** The copy's statements, prepared once (preparing them per pull and per read was 4 % of a busy replica's time). */
  readonly #statements: Record<
    | "insert"
    | "upsertStream"
    | "head"
    | "readFrom"
    | "readStream"
    | "lastAbsent"
    | "insertAbsent"
    | "extendAbsent"
    | "absentBetween"
    | "deleteAbsent",
    StatementSync
  >;
  #pulling: Promise<void> = Promise.resolve();
  #pullAgain = false;
  /** Other writers' rows this copy took: by pulls (queries of their own), and carried by own commits' answers. */
  readonly #followed = { pulls: 0, pulledRows: 0, carriedRows: 0 };
  #listeners = new Set<(events: RecordedEvent[], span: TellSpan) => void>();
  #stopped = false;
  /** Whether the copy was found to be a prefix of the database's log (see start()). */
  #checked = false;

  /** Wraps the copy's SQLite database `cache`, pulling from `sql`. */
  constructor(sql: Sql, cache: DatabaseSync) {
    this.#sql = sql;
    this.#cache = cache;
    cache.exec(LOG_SCHEMA);
    cache.exec(ABSENT_SCHEMA);
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
      lastAbsent: cache.prepare("SELECT first, last, hash FROM absent_calls ORDER BY first DESC LIMIT 1"),
      // A CLI command sharing the data directory may have noted a shorter run from the same position first.
      insertAbsent: cache.prepare(
        `INSERT INTO absent_calls (first, last, hash) VALUES (?, ?, ?)
         ON CONFLICT (first) DO UPDATE SET last = excluded.last, hash = excluded.hash WHERE excluded.last > last`,
      ),
      extendAbsent: cache.prepare("UPDATE absent_calls SET last = ?, hash = ? WHERE first = ?"),
      // The first run that reaches `from` or lies after it, up to `upTo` (runs do not overlap: the one
      // holding `from` is the last to start at or before it, found by the key, not by scanning the older ones).
      absentBetween: cache.prepare(
        `SELECT first, last, hash FROM absent_calls
         WHERE first >= (SELECT coalesce(max(first), 0) FROM absent_calls WHERE first <= ?1)
           AND first <= ?2 AND last >= ?1
         ORDER BY first LIMIT 1`,
      ),
      deleteAbsent: cache.prepare("DELETE FROM absent_calls WHERE first = ?"),
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
   * `own` is null when they could not be computed here; `from` and
   * `fromHash` are the head the commit locked, `carried` the rows its answer
   * carried (other writers' but their calls) and `seen` the position they
   * follow.
   */
  afterCommit(
    own: readonly OwnRecord[] | null,
    commit: { from: number; fromHash: string; seen: number | null; carried: CarriedRow[] | null },
  ): Promise<boolean> {
    const next = this.#pulling.then(async () => {
      if (this.#stopped) return false;
      if (own === null) {
        await this.#pullOnce();
        return false;
      }
      // The own rows follow this position (or, when every append conflicted, the commit wrote none after it).
      const before = { position: commit.from, hash: commit.fromHash };
      let local = this.head();
      let carried: Following | null = null;
      if (local.position < before.position) {
        carried = carriedAfter(commit.carried, commit.seen, local, before);
        if (carried === null) {
          await this.#pullOnce(null, before);
          local = this.head();
        }
      }
      const first = own[0];
      const reached = carried ? before : local;
      if (
        reached.position === before.position && reached.hash === before.hash &&
        (!first || first.prev_hash === before.hash)
      ) {
        const rows = [...(carried?.rows ?? []), ...own.map((record) => record.row)];
        const absent = carried?.absent ?? [];
        if (rows.length > 0 || absent.length > 0) {
          this.#insertRows(rows, absent);
          this.#followed.carriedRows += carried?.rows.length ?? 0;
          const through = own.length > 0 ? own[own.length - 1]!.position : before.position;
          this.#tell([
            ...(carried?.events ?? []),
            ...own.map(({ row: _row, ...event }) => event as RecordedEvent),
          ], { after: carried ? carried.span.after : before.position, through });
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
   * Copies what the database has past the copy's head, 2,000 rows at a time,
   * but for its MCP calls (kept as runs, see the module documentation). With
   * `check` (the copy's head at start-up), the first read starts at that
   * event and refuses a copy whose last event the database has not, or has
   * with another hash. With `upTo` (a head the database had), it stops there.
   */
  async #pullOnce(check: LogHead | null = null, upTo: LogHead | null = null): Promise<void> {
    for (;;) {
      const local = this.head();
      const from = check ? check.position : local.position;
      if (upTo !== null && from >= upTo.position) return;
      // The head in the same statement (one snapshot): the runs of calls left out end at it.
      const read = await this.#sql<(PgRow & { head: string; head_hash: string })[]>`
        SELECT h.position AS head, h.hash AS head_hash, e.position, e.stream, e.stream_version, e.type,
               e.schema_version, e.data, e.metadata, e.prev_hash, e.hash
        FROM sergo_log_head h LEFT JOIN LATERAL (
          SELECT * FROM sergo_events WHERE position > ${check ? from - 1 : from} AND position <= h.position
          ${upTo === null ? this.#sql`` : this.#sql`AND position <= ${upTo.position}`}
          AND (type <> 'McpCalled' OR position = ${check ? check.position : -1})
          ORDER BY position LIMIT ${check ? 2001 : 2000}) e ON true
        WHERE h.id = 1`;
      const databaseHead = { position: Number(read[0]!.head), hash: read[0]!.head_hash };
      const rows = read[0]!.position === null ? [] : read;
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
      if (this.#stopped) return;
      const stored: StoredRow[] = rows.map((row) => ({
        position: Number(row.position),
        stream: row.stream,
        stream_version: row.stream_version,
        type: row.type,
        schema_version: row.schema_version,
        data: row.data,
        metadata: row.metadata,
        prev_hash: row.prev_hash,
        hash: row.hash,
      }));
      // A full read ends at its last row; otherwise at `upTo`, or at the head it read.
      const end = rows.length >= 2000 ? stored[stored.length - 1]! : upTo ?? databaseHead;
      if (end.position <= local.position) return;
      const follows = following(local, stored, end, false);
      if (follows === null) {
        throw new Error(`the database's log does not follow the copy's head (event ${from})`);
      }
      this.#insertRows(follows.rows, follows.absent);
      // Told from the rows in hand, not read back from the copy (an event this version cannot read throws here,
      // after the copy took it: the projector then stops before it, and /healthz says so).
      this.#tell(follows.rows.map((row) => parseStoredRow(row)), follows.span);
      if (rows.length < 2000) return;
    }
  }

  /** Writes rows that follow the copy's head, and the runs of calls left out between them, in one transaction. */
  #insertRows(rows: readonly StoredRow[], absent: readonly AbsentRun[] = []): void {
    const { insert, upsertStream, lastAbsent, insertAbsent, extendAbsent } = this.#statements;
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
      if (absent.length > 0) {
        // A run right after the last one (no row between) extends it: one row per run of calls, not per call.
        const last = lastAbsent.get() as AbsentRun | undefined;
        const eventsHead = this.#eventsHead();
        let i = 0;
        if (last && absent[0]!.first === last.last + 1 && eventsHead.position < absent[0]!.first) {
          extendAbsent.run(absent[0]!.last, absent[0]!.hash, last.first);
          i = 1;
        }
        for (; i < absent.length; i++) insertAbsent.run(absent[i]!.first, absent[i]!.last, absent[i]!.hash);
      }
      this.#cache.exec("COMMIT");
    } catch (error) {
      this.#cache.exec("ROLLBACK");
      throw error;
    }
  }

  #tell(events: RecordedEvent[], span: TellSpan): void {
    for (const listener of this.#listeners) {
      try {
        listener(events, span);
      } catch (error) {
        console.error("An event listener failed:", error);
      }
    }
  }

  /** The head of the copy (what it has read from the database): its last event, or the last run of calls it left out. */
  head(): LogHead {
    const events = this.#eventsHead();
    const absent = this.#statements.lastAbsent.get() as AbsentRun | undefined;
    return absent && absent.last > events.position ? { position: absent.last, hash: absent.hash } : events;
  }

  #eventsHead(): LogHead {
    const row = this.#statements.head.get() as
      | { position: number; hash: string }
      | undefined;
    return row ? { position: row.position, hash: row.hash } : { position: 0, hash: GENESIS_HASH };
  }

  /**
   * Fetches the MCP calls the copy left out at positions `from` to `upTo`
   * (default: all), from the database into the copy, so that reads see every
   * event there; each run's part is checked (every position there, each
   * row's prev_hash the hash before it when the copy has that, the run's last
   * hash when it reaches the run's end) and written in one transaction, with
   * the run cut to what remains of it before and after. Queued with the
   * pulls, so no run grows meanwhile.
   *
   * An own commit whose rows were pulled needs only its own positions: it
   * once fetched every run from the first, so one pull that read a commit's
   * own rows before its answer was handled (1 to 5 times in 10 s with two
   * replicas on one hot key) put all the other replica's calls since the
   * start into the copy (hundreds of runs, thousands of rows).
   */
  complete(upTo = Number.MAX_SAFE_INTEGER, from = 1): Promise<void> {
    const next = this.#pulling.then(async () => {
      const { absentBetween, deleteAbsent, insertAbsent, insert } = this.#statements;
      for (;;) {
        if (this.#stopped) return;
        const run = absentBetween.get(from, upTo) as AbsentRun | undefined;
        if (!run) return;
        const start = Math.max(run.first, from);
        // 2,000 at a time: a replica that copied a long log at its first start left out one long run.
        const last = Math.min(run.last, start + 1999, upTo);
        const rows = await this.#sql<PgRow[]>`
          SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash
          FROM sergo_events WHERE position >= ${start} AND position <= ${last} ORDER BY position`;
        // Inside a run the copy has no hash before `start`: the rows' own chain is checked, and the run's end.
        let hash = start > run.first ? null : run.first === 1 ? GENESIS_HASH : this.#hashAt(run.first - 1);
        const unfit = () => new Error(`the database's events ${start}-${last} do not fit the copy`);
        rows.forEach((row, i) => {
          if (Number(row.position) !== start + i || (hash !== null && row.prev_hash !== hash)) {
            throw unfit();
          }
          hash = row.hash;
        });
        if (rows.length !== last - start + 1 || (last === run.last && hash !== run.hash)) throw unfit();
        this.#cache.exec("BEGIN IMMEDIATE");
        try {
          for (const row of rows) {
            insert.run(
              Number(row.position),
              row.stream,
              row.stream_version,
              row.type,
              row.schema_version,
              row.data,
              row.metadata,
              row.prev_hash,
              row.hash,
            );
          }
          deleteAbsent.run(run.first);
          if (start > run.first) insertAbsent.run(run.first, start - 1, rows[0]!.prev_hash);
          if (last < run.last) insertAbsent.run(last + 1, run.last, run.hash);
          this.#cache.exec("COMMIT");
        } catch (error) {
          this.#cache.exec("ROLLBACK");
          throw error;
        }
        from = last + 1;
      }
    });
    this.#pulling = next.catch(() => {});
    return next;
  }

  /** The hash of the event at `position` in the copy (an event, or the last of a run); null if the copy has neither. */
  #hashAt(position: number): string | null {
    const row = this.#cache.prepare(
      "SELECT hash FROM events WHERE position = ?1 UNION ALL SELECT hash FROM absent_calls WHERE last = ?1",
    ).get(position) as { hash: string } | undefined;
    return row?.hash ?? null;
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
  subscribe(listener: (events: RecordedEvent[], span: TellSpan) => void): () => void {
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
