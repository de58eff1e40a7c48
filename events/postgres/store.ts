/**
 * The shared event store: the log in PostgreSQL, for several `serve`
 * replicas on one database. The same events, hash chain and per-stream
 * optimistic concurrency as the SQLite store, enforced in SQL, with group
 * commit of this process's concurrent appends.
 *
 * Ordering. Every append transaction first locks the one chain-head row
 * (`sergo_log_head … FOR UPDATE`), so appends from all replicas are
 * serialized: a transaction takes its positions from the head it locked and
 * commits before the next one can lock it, so positions become visible in
 * order and a reader asking for `position > N` can never see N+2 while N+1 is
 * still in flight. The hash chain needs this anyway: each event's hash covers
 * the one before it, so the writer of N+1 must know N's hash, which only a
 * serialized writer does. Stamping rows with `xid8` and reading below
 * `pg_snapshot_xmin(pg_current_snapshot())` (as Emmett, Marten and
 * message-db do for a sequence-numbered log) allows parallel writers but
 * needs a sequencer to extend the chain afterwards; with group commit, one
 * transaction per replica per turn carries every pending append, so the lock
 * is held for one round trip and the simpler scheme is enough.
 *
 * Reads. The {@linkcode EventStore} interface reads synchronously (the
 * projector, the audit export and the workers call it in the middle of
 * synchronous work), so each replica keeps a local copy of the log: a
 * SQLite file with the same rows, filled in position order from PostgreSQL
 * after each own commit, on `LISTEN sergo_events` notifications from other
 * replicas, and by a poll as a fallback. Reads never cross the network;
 * subscribers are told about every event as it reaches the copy, whoever
 * wrote it, so each replica's projections follow the shared log (but for
 * other replicas' MCP calls, which the copy leaves out: local_copy.ts). PostgreSQL
 * stays the authority: concurrency checks run there, and an append against
 * a stale copy fails with {@linkcode ConcurrencyError} as it should.
 *
 * The parts, one job each: `group_commit_sql.ts` has the log's tables and
 * the two ways a group commit is written into them (the `sergo_group_commit`
 * statement, and the client-side transaction); `local_copy.ts` the copy and
 * its catching up; `schema.ts` makes the tables only when the database lacks
 * them. This file composes them: it gathers appends into group commits,
 * decides when the copy pulls (notices, the poll, own commits), and answers
 * the `EventStore` interface.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import postgres from "postgres";
import { openLogDatabase } from "../_write_batch.ts";
import { type ChainVerdict, type StoredRow, verifyRowsAsync } from "../hash_chain.ts";
import {
  type AppendOptions,
  type AppendResult,
  ConcurrencyError,
  type EventStore,
  type LogHead,
  RateRefusedError,
  type TellSpan,
} from "../store.ts";
import { type RecordedEvent, type SergoEvent, validateEvent } from "../types.ts";
import { AuditCalls } from "./audit_calls.ts";
import { DatabaseUnavailableError, reason } from "./errors.ts";
import {
  type AppendAnswer,
  CHANNEL,
  commitInOneStatement,
  commitInTransaction,
  type CommitItem,
  type EncodedAppend,
  encodeEvents,
  EVENT_COLUMNS,
  groupCommitPayload,
  LOG_SCHEMA_PART,
  ownRecords,
  type PgRow,
  type Sql,
  type TransactionOutcome,
} from "./group_commit_sql.ts";
import { LocalCopy } from "./local_copy.ts";
import { ensureSchema } from "./schema.ts";

/** Options of the PostgreSQL store. */
export interface PostgresStoreOptions {
  /** The local copy of the log (a SQLite file); default in memory, rebuilt from the database at each open. */
  cachePath?: string;
  /** How often to look for other replicas' events when no notification came, in ms. Default 500. */
  pollMs?: number;
  /** How long to wait for a connection, in seconds. Default 10. */
  connectTimeoutSeconds?: number;
  /**
   * Whether to copy the log locally and follow it (default true). False for a
   * command that only walks the chain in the database (`log verify`): reads
   * then see nothing, appends still work.
   */
  follow?: boolean;
  /**
   * How a group commit is written: `"statement"` (default) in one round trip
   * through the `sergo_group_commit` function; `"transaction"`, the client-side
   * transaction of several round trips it replaced, kept as the benchmark's
   * baseline and for a batch too big for one JSON parameter.
   */
  appendBy?: "statement" | "transaction";
}

/**
 * How many group commits may be in flight at once. They go down one
 * connection, so PostgreSQL runs them in the order sent (the log's order is
 * this process's order of appends, as before): the second starts as soon as
 * the first is committed, instead of after the first's answer came back
 * here, was handled, and the next statement was sent. Each answer is handled
 * in turn; one that finds the copy's head moved pulls instead.
 */
const PIPELINE = 2;

/** A batch whose events add up to more than this goes through the client-side transaction (jsonb's limit is 255 MB). */
const STATEMENT_LIMIT_CHARS = 64 * 1024 * 1024;

interface Pending extends CommitItem {
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Says which server a URL names, without its password. */
function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`;
  } catch {
    return "the database";
  }
}

/** Opens the PostgreSQL event store at `url`, creating its tables if needed, and brings the local copy up to date. */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresEventStore> {
  const pool = (max: number) =>
    postgres(url, {
      max,
      onnotice: () => {},
      connect_timeout: options.connectTimeoutSeconds ?? 10,
      // Reconnect within half a second: the driver's default waits up to 20 s after a few failures, so calls
      // made while the server was down hung instead of failing with 503, and went on hanging after it returned.
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
      types: { bigint: postgres.BigInt },
    }) as unknown as Sql;
  const sql = pool(4);
  const follow = options.follow !== false;
  let store: PostgresEventStore;
  try {
    store = new PostgresEventStore(
      sql,
      openLogDatabase(options.cachePath ?? ":memory:", 10_000),
      options,
      pool(1),
      () => pool(1),
    );
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
  // The LISTEN connection opens while the schema is checked (one query when it is current).
  const [listening, schema] = await Promise.allSettled([
    follow ? store.listen() : Promise.resolve(),
    ensureSchema(sql, LOG_SCHEMA_PART),
  ]);
  try {
    if (schema.status === "rejected") {
      throw new DatabaseUnavailableError(
        `Cannot open the log at ${describeServer(url)}: ${reason(schema.reason)}`,
      );
    }
    if (listening.status === "rejected") {
      throw new DatabaseUnavailableError(
        `Cannot open the log at ${describeServer(url)}: ${reason(listening.reason)}`,
      );
    }
    if (follow) await store.start();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}

/** The PostgreSQL event store; see the module documentation. */
export class PostgresEventStore implements EventStore {
  readonly #sql: Sql;
  /** The one connection group commits go through, one after the other (see {@linkcode PIPELINE}). */
  #commits: Sql;
  /** Opens another commit connection, for one the driver left unable to connect (see #flushInOneStatement). */
  readonly #reopenCommits: (() => Sql) | null;
  readonly #copy: LocalCopy;
  /** The log's MCP calls as the audit view reads them. */
  readonly auditCalls: AuditCalls;
  readonly #pollMs: number;
  readonly #appendBy: "statement" | "transaction";
  #pending: Pending[] = [];
  #flushScheduled = false;
  /** Group commits sent and not handled yet (at most {@linkcode PIPELINE}). */
  readonly #flushes = new Set<Promise<void>>();
  /** This store's name in its notifications: rows it wrote itself it puts into its copy itself. */
  readonly #writer = crypto.randomUUID().slice(0, 8);
  /** The highest head another writer announced while an own group commit was in flight (0: none since). */
  #noticed = 0;
  #closed = false;
  #transactions = 0;
  #poll: ReturnType<typeof setInterval> | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  #lastFailure: { at: number; message: string } | null = null;

  /** Wraps an open connection pool and local copy; prefer {@linkcode openPostgresStore}. */
  constructor(
    sql: Sql,
    cache: DatabaseSync,
    options: PostgresStoreOptions,
    commits: Sql = sql,
    reopenCommits: (() => Sql) | null = null,
  ) {
    this.#reopenCommits = reopenCommits;
    this.#sql = sql;
    this.#commits = commits;
    this.#copy = new LocalCopy(sql, cache);
    this.auditCalls = new AuditCalls(sql);
    this.#pollMs = options.pollMs ?? 500;
    this.#appendBy = options.appendBy ?? "statement";
  }

  /** Listens for other replicas' appends (before the first pull, so none falls between the two). */
  async listen(): Promise<void> {
    // The notice of an append this store wrote needs no pull: the append puts its rows into the copy itself
    // (or pulls), and a pull started on its notice, which often comes before the append's answer, made the
    // append wait a round trip for that pull and then pull once more.
    const listener = await this.#sql.listen(CHANNEL, (notice) => {
      // Nothing is copied before start() has checked the copy against the database; its pull reads this too.
      if (!this.#copy.checked) return;
      const [head, writer] = notice.split(" ");
      if (writer === this.#writer) return;
      if (Number(head) <= this.#copy.head().position) return;
      // An own group commit in flight carries the other writers' rows before its own: a pull now would only
      // read them twice (and this replica's own rows too, once committed). Pulled after the last one if not.
      if (this.#flushes.size > 0 || this.#flushScheduled) {
        this.#noticed = Math.max(this.#noticed, Number(head));
        return;
      }
      this.#requestPull();
    });
    this.#unlisten = () => listener.unlisten();
  }

  /**
   * Checks that the local copy is a prefix of the database's log and brings
   * it up to date, in one query when nothing is new (see
   * {@linkcode LocalCopy.start}); then polls as a fallback for lost notices.
   */
  async start(): Promise<void> {
    await this.#copy.start();
    // The poll is for notices that never came; while an own group commit is in flight it would only hold it up,
    // and the commit finds what others wrote before it anyway.
    this.#poll = setInterval(() => {
      if (this.#flushes.size === 0) this.#requestPull();
    }, this.#pollMs);
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
      this.#pending.push({
        stream,
        events: validated,
        expectedVersion: options.expectedVersion ?? "any",
        ...(options.takeToken ? { takeToken: options.takeToken } : {}),
        resolve,
        reject,
      });
      this.#scheduleFlush();
    });
  }

  #scheduleFlush(): void {
    // The client-side transactions go through the pool's connections, in no set order: one at a time.
    const most = this.#appendBy === "transaction" ? 1 : PIPELINE;
    if (this.#flushScheduled || this.#flushes.size >= most) return;
    this.#flushScheduled = true;
    // As in the SQLite store: appends that arrive in one turn of the event loop share one transaction.
    setImmediate(() => {
      this.#flushScheduled = false;
      if (this.#pending.length === 0 && this.#flushes.size === 0) this.#pullNoticed();
      if (this.#pending.length === 0 || this.#flushes.size >= most) return;
      const batch = this.#pending;
      this.#pending = [];
      const flush: Promise<void> = this.#flush(batch).catch((error) => {
        // Each path settles its appends itself; this is for what it did not foresee (a second settle is a no-op).
        for (const item of batch) item.reject(error);
      }).finally(() => {
        this.#flushes.delete(flush);
        if (this.#pending.length > 0) this.#scheduleFlush();
        else if (this.#flushes.size === 0) this.#pullNoticed();
      });
      this.#flushes.add(flush);
    });
  }

  /** Writes every pending append in one transaction (a conflicting one fails alone), then catches the copy up. */
  async #flush(batch: Pending[]): Promise<void> {
    // Only sergo_group_commit takes rate tokens: appends that take one go in a statement whichever way the rest go.
    const taking = batch.filter((item) => item.takeToken);
    if (this.#appendBy === "transaction") {
      await this.#flushInTransaction(batch.filter((item) => !item.takeToken));
      return this.#flushInOneStatement(this.#encode(taking));
    }
    const encoded = this.#encode(batch);
    let chars = 0;
    for (const { item, events } of encoded) {
      if (!item.takeToken) { for (const event of events) chars += event.data.length + event.metadata.length; }
    }
    if (chars > STATEMENT_LIMIT_CHARS) {
      // Those that could not be encoded were refused already.
      await this.#flushInTransaction(encoded.filter(({ item }) => !item.takeToken).map(({ item }) => item));
      return this.#flushInOneStatement(encoded.filter(({ item }) => item.takeToken));
    }
    return this.#flushInOneStatement(encoded);
  }

  /** The appends' events in canonical JSON; one that cannot be encoded is refused alone. */
  #encode(batch: Pending[]): EncodedAppend<Pending>[] {
    const encoded: EncodedAppend<Pending>[] = [];
    for (const item of batch) {
      try {
        encoded.push({ item, events: encodeEvents(item.events) });
      } catch (error) {
        item.reject(new Error(`Cannot append to "${item.stream}": ${reason(error)}`));
      }
    }
    return encoded;
  }

  /**
   * One round trip: `sergo_group_commit` does the whole group commit, rate
   * tokens included. When the head
   * it locked is this copy's head (nothing came between), the rows go straight
   * into the local copy, their hashes computed here and checked against the
   * head it left; otherwise the copy pulls them.
   */
  async #flushInOneStatement(batch: EncodedAppend<Pending>[]): Promise<void> {
    if (batch.length === 0) return;
    const payload = groupCommitPayload(batch);
    let answer: AppendAnswer;
    const sentAt = performance.now();
    const commits = this.#commits;
    const known = this.#copy.head().position;
    try {
      answer = await commitInOneStatement(commits, payload, { writer: this.#writer, known });
      this.#transactions++;
      this.#lastFailure = null;
    } catch (error) {
      const failure = new DatabaseUnavailableError(`Cannot append: ${reason(error)}`);
      this.#lastFailure = { at: Date.now(), message: failure.message };
      for (const { item } of batch) item.reject(failure);
      // The driver (postgres 3.4.9) can leave a connection that closed with a write queued unable to ever
      // connect again: each try sends nothing and ends in CONNECT_TIMEOUT (the stale write timer of
      // porsager/postgres#1208). The one commit connection would refuse every append until a restart, so
      // it is replaced by a new one (once per failing connection: a pipelined commit may fail with it).
      if (
        (error as { code?: unknown }).code === "CONNECT_TIMEOUT" && this.#reopenCommits &&
        this.#commits === commits && !this.#closed
      ) {
        this.#commits = this.#reopenCommits();
        commits.end({ timeout: 0 }).catch(() => {});
        console.error("The commit connection to the database could not connect again; it was replaced");
      }
      return;
    }
    batch.forEach(({ item }, i) => {
      const outcome = answer.results[i]!;
      if (item.takeToken && "tokens" in outcome) item.takeToken.told?.(outcome.tokens!, sentAt);
    });
    const own = ownRecords(batch, answer);
    let written = false;
    try {
      written = await this.#copy.afterCommit(own, {
        from: Number(answer.from),
        fromHash: answer.from_hash,
        seen: answer.seen === null || answer.seen === undefined ? null : Number(answer.seen),
        carried: answer.rows,
      });
    } catch (error) {
      console.error("Cannot bring the local copy of the log up to date:", error);
    }
    // Rows pulled instead of put in from memory leave calls out of the copy: this commit's are fetched for the
    // answers (only its own positions: the other writers' calls stay out).
    if (!written) await this.#copy.complete(Number(answer.head), Number(answer.from) + 1).catch(() => {});
    batch.forEach(({ item }, i) => {
      const outcome = answer.results[i]!;
      if ("conflict" in outcome) {
        item.reject(new ConcurrencyError(item.stream, item.expectedVersion, outcome.actual));
        return;
      }
      if ("refused" in outcome) {
        item.reject(new RateRefusedError(item.takeToken!.keyId, outcome.wait));
        return;
      }
      const at = outcome.first - Number(answer.from) - 1;
      const events = written
        ? own!.slice(at, at + item.events.length).map(({ row: _row, ...event }) => event as RecordedEvent)
        : this.readFrom(outcome.first - 1, item.events.length);
      item.resolve({ events, streamVersion: outcome.version });
    });
  }

  /** The client-side transaction (see {@linkcode commitInTransaction}); then pull. */
  async #flushInTransaction(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    let outcomes: TransactionOutcome[];
    try {
      outcomes = await commitInTransaction(this.#sql, batch, { writer: this.#writer });
      this.#transactions++;
      this.#lastFailure = null;
    } catch (error) {
      const failure = new DatabaseUnavailableError(`Cannot append: ${reason(error)}`);
      this.#lastFailure = { at: Date.now(), message: failure.message };
      for (const item of batch) item.reject(failure);
      return;
    }
    // Read-your-writes: the appended events are in the local copy (and told to subscribers) before the
    // appenders continue. The pull after another replica's events, or after our own when nothing came
    // between, is one round trip.
    try {
      await this.sync();
      let first = Infinity, last = 0;
      outcomes.forEach((outcome, i) => {
        if (!outcome.ok) return;
        first = Math.min(first, outcome.first);
        last = Math.max(last, outcome.first + batch[i]!.events.length - 1);
      });
      // Only this transaction's own positions (the other writers' calls stay out).
      if (last > 0) await this.#copy.complete(last, first);
    } catch (error) {
      console.error("Cannot bring the local copy of the log up to date:", error);
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) {
        item.reject(outcome.error);
        return;
      }
      const events = this.readFrom(outcome.first - 1, item.events.length);
      item.resolve({ events, streamVersion: outcome.streamVersion });
    });
  }

  /**
   * Makes every event from `from` (default: the first) up to `upTo`
   * (default: the head) readable from the copy: the MCP calls it left out
   * there are fetched from the database (see events/postgres/local_copy.ts).
   * The audit export calls it first.
   */
  complete(upTo?: number, from?: number): Promise<void> {
    return this.#copy.complete(upTo, from);
  }

  /** Pulls what other writers announced during own group commits, if those did not carry it. */
  #pullNoticed(): void {
    const noticed = this.#noticed;
    this.#noticed = 0;
    if (noticed > this.#copy.head().position) this.#requestPull();
  }

  #requestPull(): void {
    if (this.#closed) return;
    this.sync().catch((error) => {
      if (!this.#closed) console.error("Cannot follow the shared log:", reason(error));
    });
  }

  /** Brings the local copy up to the database's committed head, telling subscribers about each new event. */
  sync(): Promise<void> {
    return this.#copy.sync();
  }

  /** The head of this replica's copy of the log (what it has read from the database). */
  head(): LogHead {
    return this.#copy.head();
  }

  /** Whether the last append reached the database, for `/healthz` (the SQLite store's writer status). */
  writerStatus(): { ok: boolean; waitingMs: number; problem?: string } {
    if (this.#lastFailure === null) return { ok: true, waitingMs: 0 };
    return { ok: false, waitingMs: 0, problem: this.#lastFailure.message };
  }

  /**
   * How this store followed the database's log: its pulls (queries of their
   * own, each ahead of the copy), the rows they brought (other writers'; its
   * own only when its commit's rows could not be put in from memory), and
   * the other writers' rows its group commits' answers carried.
   */
  get followed(): { pulls: number; pulledRows: number; carriedRows: number } {
    return this.#copy.followed;
  }

  /** How many append transactions this store has committed (group commit makes it fewer than appends). */
  get transactions(): number {
    return this.#transactions;
  }

  readFrom(position: number, limit = 1000): RecordedEvent[] {
    return this.#copy.readFrom(position, limit);
  }

  readStream(stream: string): RecordedEvent[] {
    return this.#copy.readStream(stream);
  }

  /** The head of the log in the database (not the local copy). */
  async databaseHead(): Promise<LogHead> {
    const [row] = await this.#sql<{ position: bigint; hash: string }[]>`
      SELECT position, hash FROM sergo_log_head WHERE id = 1`;
    return { position: Number(row!.position), hash: row!.hash };
  }

  /**
   * Appends stored rows as they are (positions, hashes and the exact JSON
   * text kept), for `sergo migrate`: in one transaction, only if the first row
   * follows the database's head (its position and its prev_hash), so an
   * interrupted copy resumes and a copy onto another log is refused. (A
   * `sql.begin`: a connection lost in it can end in the driver's stray
   * error, see src/postgres_blob_store.ts.)
   */
  async importRows(rows: readonly StoredRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#sql.begin(async (tx) => {
      const [head] = await tx<{ position: bigint; hash: string }[]>`
        SELECT position, hash FROM sergo_log_head WHERE id = 1 FOR UPDATE`;
      const first = rows[0]!;
      if (Number(head!.position) !== first.position - 1 || head!.hash !== first.prev_hash) {
        throw new Error(
          `event ${first.position} does not follow the database's head (event ${head!.position})`,
        );
      }
      for (let i = 0; i < rows.length; i += 1000) {
        const slice = rows.slice(i, i + 1000).map((row) => ({ ...row }));
        await tx`INSERT INTO sergo_events ${tx(slice, EVENT_COLUMNS)}`;
      }
      const versions = new Map<string, number>();
      for (const row of rows) versions.set(row.stream, row.stream_version);
      for (const [stream, version] of versions) {
        await tx`INSERT INTO sergo_streams (stream, version) VALUES (${stream}, ${version})
                 ON CONFLICT (stream) DO UPDATE SET version = excluded.version`;
      }
      const last = rows[rows.length - 1]!;
      await tx`UPDATE sergo_log_head SET position = ${last.position}, hash = ${last.hash} WHERE id = 1`;
      await tx`SELECT pg_notify(${CHANNEL}, ${String(last.position)})`;
    });
  }

  /** Walks the whole chain in the database (not the local copy) from the first event. */
  verify(): Promise<ChainVerdict> {
    const sql = this.#sql;
    async function* rows(): AsyncIterable<StoredRow> {
      let after = 0;
      for (;;) {
        const batch = await sql<PgRow[]>`
          SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash
          FROM sergo_events WHERE position > ${after} ORDER BY position LIMIT 5000`;
        for (const row of batch) yield { ...row, position: Number(row.position) };
        if (batch.length < 5000) return;
        after = Number(batch[batch.length - 1]!.position);
      }
    }
    return verifyRowsAsync(rows());
  }

  subscribe(listener: (events: RecordedEvent[], span?: TellSpan) => void): () => void {
    return this.#copy.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#flushScheduled || this.#flushes.size > 0 || this.#pending.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.allSettled(this.#flushes);
    }
    this.#closed = true;
    if (this.#poll !== null) clearInterval(this.#poll);
    await this.#copy.stop();
    await this.#unlisten?.().catch(() => {});
    await this.#sql.end({ timeout: 5 });
    if (this.#commits !== this.#sql) await this.#commits.end({ timeout: 5 });
    this.#copy.close();
  }
}
