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
 * wrote it, so each replica's projections follow the shared log. PostgreSQL
 * stays the authority: concurrency checks run there, and an append against
 * a stale copy fails with {@linkcode ConcurrencyError} as it should.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import postgres from "postgres";
import { LOG_SCHEMA, openLogDatabase } from "../_write_batch.ts";
import { createHash } from "node:crypto";
import { canonicalJson } from "../_canonical_json.ts";
import {
  type ChainVerdict,
  eventHash,
  GENESIS_HASH,
  hashInputOf,
  type StoredRow,
  verifyRowsAsync,
} from "../hash_chain.ts";
import {
  type AppendOptions,
  type AppendResult,
  ConcurrencyError,
  type EventStore,
  type ExpectedVersion,
  type LogHead,
  RateRefusedError,
  type TokenTake,
} from "../store.ts";
import { parseStoredRow } from "../sqlite_store.ts";
import { ensureSchema, type SchemaPart } from "./schema.ts";
import { EVENT_VERSIONS, type RecordedEvent, type SergoEvent, validateEvent } from "../types.ts";

type Sql = postgres.Sql<Record<string, never>>;

/** The notification channel appends announce their new head on. */
const CHANNEL = "sergo_events";

/** Most rows a group commit's answer carries; a replica further behind pulls them. */
const CARRIED_ROWS = 500;

/**
 * One group commit in one statement (one round trip): lock the chain head,
 * take each append's rate-limit token (if it asks for one), check its
 * expected version, insert its rows with their positions and hashes, move the
 * streams, the buckets and the head, and notify the other replicas.
 * `items` is `[{stream, stream_json, expected, take?: {key, per_second,
 * burst}, events: [{type, type_json, schema_version, data, metadata}]}]`
 * and `writer` names the store that sends it in the notification (`head
 * writer`), so that store knows the rows are its own,
 * with `data` and `metadata` as their canonical JSON (the text the hash
 * covers, which is also what is stored), so the hash input
 * `{"data":…,"metadata":…,"position":…,…}` (hash_chain.ts) is put together
 * here from the head it locked. An append whose version does not match fails
 * alone (`{"conflict": true, "actual": version}`), as does one whose key's
 * bucket is empty (`{"refused": true, "wait": seconds}`: nothing written, no
 * token taken); any other error rolls the whole statement back, tokens
 * included.
 *
 * The buckets (`sergo_rate_buckets`, shared with `sergo_take_tokens` in
 * src/mcp/shared_rate_limit.ts) are refilled once per statement on the
 * database's clock and locked in key order, as `sergo_take_tokens` locks
 * them, so the two never wait on each other in a circle. Each stream's and
 * bucket's row is read once and written once per statement, however many of
 * the batch's appends go to it (a busy key's audit entries all do).
 *
 * With `known` (the caller's copy's head), the answer also carries the rows
 * other writers committed between that head and this commit's own (`rows`:
 * `[position, stream, stream_version, type, schema_version, data, metadata,
 * prev_hash, hash]` each, at most {@linkcode CARRIED_ROWS}), read under the
 * head's lock, so a busy replica follows the others without a pull of its
 * own: with two replicas nearly every commit follows one of the other's, and
 * pulling those rows first cost a round trip per commit, and pulls started
 * on the other's notices read this replica's own rows back as well. The
 * session remembers the head its last commit left (`sergo.seen`): the next
 * commit on the connection is sent before the answer of the one before
 * comes back, and would otherwise carry that one's rows again.
 *
 * Its name is new with the takes: a replica of the version before would
 * create `sergo_append` again with its own body, which knows no takes and
 * would write a refused call's audit entry; `sergo_append` stays as that
 * older name of this function, and the two-argument form (a replica of the
 * version before `known`) answers as before, without rows.
 */
const APPEND_FUNCTION = `
CREATE OR REPLACE FUNCTION sergo_group_commit(items jsonb, writer text, known bigint) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  seen bigint;
  carried json;
  from_position bigint;
  from_hash text;
  pos bigint;
  prev text;
  item jsonb;
  ev jsonb;
  expected jsonb;
  take jsonb;
  stream_name text;
  bucket_key text;
  have double precision;
  current_version integer;
  base integer;
  n integer;
  body text;
  now_at timestamptz := clock_timestamp();
  versions jsonb := '{}'::jsonb;
  moved jsonb := '{}'::jsonb;
  buckets jsonb := '{}'::jsonb;
  results jsonb := '[]'::jsonb;
BEGIN
  SELECT position, hash INTO from_position, from_hash FROM sergo_log_head WHERE id = 1 FOR UPDATE;
  -- The rows between what the caller has and this commit's own: this session's last commit's rows, and the rows
  -- it carried, count as had (the next commit on a connection is sent before the answer of the one before).
  seen := greatest(known, nullif(current_setting('sergo.seen', true), '')::bigint);
  IF seen IS NOT NULL AND seen < from_position THEN
    SELECT json_agg(json_build_array(e.position, e.stream, e.stream_version, e.type, e.schema_version, e.data,
                                     e.metadata, e.prev_hash, e.hash) ORDER BY e.position) INTO carried
    FROM (SELECT * FROM sergo_events WHERE position > seen AND position <= from_position
          ORDER BY position LIMIT ${CARRIED_ROWS}) e;
  END IF;
  FOR bucket_key, take IN
    SELECT DISTINCT ON (value->'take'->>'key') value->'take'->>'key', value->'take'
    FROM jsonb_array_elements(items) WHERE value ? 'take' ORDER BY value->'take'->>'key'
  LOOP
    INSERT INTO sergo_rate_buckets AS b (key_id, tokens, at)
    VALUES (bucket_key, (take->>'burst')::double precision, now_at)
    ON CONFLICT (key_id) DO UPDATE SET
      tokens = least(excluded.tokens,
                     b.tokens + greatest(0, extract(epoch FROM now_at - b.at)) * (take->>'per_second')::double precision),
      at = greatest(b.at, now_at)
    RETURNING b.tokens INTO have;
    buckets := buckets || jsonb_build_object(bucket_key, have);
  END LOOP;
  pos := from_position;
  prev := from_hash;
  FOR item IN SELECT value FROM jsonb_array_elements(items) LOOP
    stream_name := item->>'stream';
    IF versions ? stream_name THEN
      current_version := (versions->>stream_name)::integer;
    ELSE
      SELECT version INTO current_version FROM sergo_streams WHERE stream = stream_name;
      versions := versions || jsonb_build_object(stream_name, current_version);
    END IF;
    expected := item->'expected';
    IF NOT (expected = '"any"'::jsonb
        OR (expected = '"no_stream"'::jsonb AND current_version IS NULL)
        OR (expected = '"stream_exists"'::jsonb AND current_version IS NOT NULL)
        OR (jsonb_typeof(expected) = 'number' AND current_version = (expected #>> '{}')::integer)) THEN
      results := results || jsonb_build_array(jsonb_build_object('conflict', true, 'actual', current_version));
      CONTINUE;
    END IF;
    take := item->'take';
    IF take IS NOT NULL THEN
      have := (buckets->>(take->>'key'))::double precision;
      IF have < 1 THEN
        results := results || jsonb_build_array(jsonb_build_object(
          'refused', true, 'wait', (1 - have) / (take->>'per_second')::double precision, 'tokens', have));
        CONTINUE;
      END IF;
      have := have - 1;
      buckets := buckets || jsonb_build_object(take->>'key', have);
    END IF;
    base := coalesce(current_version, 0);
    n := 0;
    FOR ev IN SELECT value FROM jsonb_array_elements(item->'events') LOOP
      n := n + 1;
      body := '{"data":' || (ev->>'data') || ',"metadata":' || (ev->>'metadata') || ',"position":' || (pos + n)
        || ',"schema_version":' || (ev->>'schema_version') || ',"stream":' || (item->>'stream_json')
        || ',"stream_version":' || (base + n) || ',"type":' || (ev->>'type_json') || '}';
      INSERT INTO sergo_events (position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash)
      VALUES (pos + n, stream_name, base + n, ev->>'type', (ev->>'schema_version')::integer, ev->>'data',
              ev->>'metadata', prev, encode(sha256(convert_to(prev || body, 'UTF8')), 'hex'))
      RETURNING hash INTO prev;
    END LOOP;
    versions := versions || jsonb_build_object(stream_name, base + n);
    moved := moved || jsonb_build_object(stream_name, base + n);
    results := results || jsonb_build_array(CASE WHEN take IS NULL
      THEN jsonb_build_object('first', pos + 1, 'version', base + n)
      ELSE jsonb_build_object('first', pos + 1, 'version', base + n, 'tokens', have) END);
    pos := pos + n;
  END LOOP;
  IF pos > from_position THEN
    -- Every writer holds the head's lock, so nobody moved these streams since they were read.
    INSERT INTO sergo_streams (stream, version)
    SELECT m.key, m.value::integer FROM jsonb_each_text(moved) m
    ON CONFLICT (stream) DO UPDATE SET version = excluded.version;
    UPDATE sergo_log_head SET position = pos, hash = prev WHERE id = 1;
    PERFORM pg_notify('${CHANNEL}', pos || ' ' || writer);
  END IF;
  UPDATE sergo_rate_buckets r SET tokens = b.value::double precision
  FROM jsonb_each_text(buckets) b WHERE r.key_id = b.key;
  IF known IS NOT NULL THEN
    PERFORM set_config('sergo.seen', pos::text, false);
  END IF;
  RETURN json_build_object('from', from_position, 'from_hash', from_hash, 'head', pos, 'hash', prev,
                           'results', results, 'rows', carried);
END
$fn$;
CREATE OR REPLACE FUNCTION sergo_group_commit(items jsonb, writer text) RETURNS jsonb LANGUAGE sql AS $fn$
  SELECT sergo_group_commit(items, writer, NULL)::jsonb - 'rows'
$fn$;
CREATE OR REPLACE FUNCTION sergo_append(items jsonb) RETURNS jsonb LANGUAGE sql AS $fn$
  SELECT sergo_group_commit(items, '')
$fn$;
`;

/** The tables of the log in PostgreSQL. */
const PG_SCHEMA = `
CREATE TABLE IF NOT EXISTS sergo_events (
  position bigint PRIMARY KEY,
  stream text NOT NULL,
  stream_version integer NOT NULL,
  type text NOT NULL,
  schema_version integer NOT NULL,
  data text NOT NULL,
  metadata text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  UNIQUE (stream, stream_version)
);
CREATE TABLE IF NOT EXISTS sergo_streams (
  stream text PRIMARY KEY,
  version integer NOT NULL CHECK (version > 0)
);
CREATE TABLE IF NOT EXISTS sergo_log_head (
  id integer PRIMARY KEY CHECK (id = 1),
  position bigint NOT NULL,
  hash text NOT NULL
);
INSERT INTO sergo_log_head (id, position, hash) VALUES (1, 0, '${GENESIS_HASH}') ON CONFLICT DO NOTHING;
-- Each key's shared rate bucket (src/mcp/shared_rate_limit.ts): unlogged, worth nothing after a crash.
CREATE UNLOGGED TABLE IF NOT EXISTS sergo_rate_buckets (
  key_id text PRIMARY KEY,
  tokens double precision NOT NULL,
  at timestamptz NOT NULL
);
${APPEND_FUNCTION}
`;

/** The log's part of the schema (the rate limits share its advisory lock). */
export const LOG_SCHEMA_PART: SchemaPart = {
  ddl: PG_SCHEMA,
  lock: 8317401,
  tables: ["sergo_events", "sergo_streams", "sergo_log_head", "sergo_rate_buckets"],
  functions: [
    "sergo_group_commit(jsonb, text, bigint)",
    "sergo_group_commit(jsonb, text)",
    "sergo_append(jsonb)",
  ],
};

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

/** What `sergo_group_commit` answers: the head it locked, the head it left, and each append's outcome in order. */
interface AppendAnswer {
  from: number;
  from_hash: string;
  head: number;
  hash: string;
  results: (
    | { first: number; version: number; tokens?: number }
    | { conflict: true; actual: number | null }
    | { refused: true; wait: number; tokens: number }
  )[];
  /** Other writers' rows after the head the statement was told this copy has, up to `from` (or the first of them). */
  rows: CarriedRow[] | null;
}

/** A row as `sergo_group_commit` carries it: the columns of `sergo_events` in {@linkcode EVENT_COLUMNS}' order. */
type CarriedRow = [number, string, number, string, number, string, string, string, string];

/** An append as sent to `sergo_group_commit`: its events' data and metadata in canonical JSON. */
interface EncodedAppend {
  item: Pending;
  events: { type: string; schema_version: number; data: string; metadata: string }[];
}

interface Pending {
  stream: string;
  events: SergoEvent[];
  expectedVersion: ExpectedVersion;
  takeToken?: TokenTake;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** The columns of `sergo_events`, in the order both insert paths (the old transaction, migrate's import) write them. */
const EVENT_COLUMNS = [
  "position",
  "stream",
  "stream_version",
  "type",
  "schema_version",
  "data",
  "metadata",
  "prev_hash",
  "hash",
] as const;

interface PgRow {
  position: string;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
  prev_hash: string;
  hash: string;
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
    return { rows, events: rows.map((row) => parseStoredRow(row)) };
  } catch {
    return null;
  }
}

/** The error raised when the database cannot be reached or opened, in one sentence. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
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

function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
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
  readonly #cache: DatabaseSync;
  /** The copy's statements, prepared once (preparing them per pull and per read was 4 % of a busy replica's time). */
  readonly #statements: Record<"insert" | "upsertStream" | "head" | "readFrom" | "readStream", StatementSync>;
  readonly #pollMs: number;
  readonly #appendBy: "statement" | "transaction";
  #pending: Pending[] = [];
  #flushScheduled = false;
  /** Group commits sent and not handled yet (at most {@linkcode PIPELINE}). */
  readonly #flushes = new Set<Promise<void>>();
  /** This store's name in its notifications: rows it wrote itself it puts into its copy itself. */
  readonly #writer = crypto.randomUUID().slice(0, 8);
  #pulling: Promise<void> = Promise.resolve();
  #pullAgain = false;
  /** Other writers' rows this store copied: by pulls (queries of their own), and carried by its commits' answers. */
  readonly #followed = { pulls: 0, pulledRows: 0, carriedRows: 0 };
  /** The highest head another writer announced while an own group commit was in flight (0: none since). */
  #noticed = 0;
  #listeners = new Set<(events: RecordedEvent[]) => void>();
  #closed = false;
  #transactions = 0;
  #poll: ReturnType<typeof setInterval> | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  #lastFailure: { at: number; message: string } | null = null;
  /** Whether the local copy was found to be a prefix of the database's log (see start()). */
  #checked = false;

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
    this.#cache = cache;
    this.#pollMs = options.pollMs ?? 500;
    this.#appendBy = options.appendBy ?? "statement";
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

  /** Listens for other replicas' appends (before the first pull, so none falls between the two). */
  async listen(): Promise<void> {
    // The notice of an append this store wrote needs no pull: the append puts its rows into the copy itself
    // (or pulls), and a pull started on its notice, which often comes before the append's answer, made the
    // append wait a round trip for that pull and then pull once more.
    const listener = await this.#sql.listen(CHANNEL, (notice) => {
      // Nothing is copied before start() has checked the copy against the database; its pull reads this too.
      if (!this.#checked) return;
      const [head, writer] = notice.split(" ");
      if (writer === this.#writer) return;
      if (Number(head) <= this.#localHead().position) return;
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
   * it up to date, in one query when nothing is new: the first pull reads
   * from the copy's last event, whose hash must be the database's; then
   * polls as a fallback for lost notices.
   */
  async start(): Promise<void> {
    const local = this.#localHead();
    this.#pullAgain = true;
    const first = this.#pulling.then(async () => {
      await this.#pullOnce(local.position > 0 ? local : null);
      this.#checked = true;
      while (this.#pullAgain && !this.#closed) {
        this.#pullAgain = false;
        await this.#pullOnce();
      }
    });
    this.#pulling = first.catch(() => {});
    await first;
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
  #encode(batch: Pending[]): EncodedAppend[] {
    const encoded: EncodedAppend[] = [];
    for (const item of batch) {
      try {
        const events = item.events.map((event) => ({
          type: event.type,
          schema_version: EVENT_VERSIONS[event.type],
          data: canonicalJson(event.data),
          metadata: canonicalJson(event.metadata),
        }));
        encoded.push({ item, events });
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
  async #flushInOneStatement(batch: EncodedAppend[]): Promise<void> {
    if (batch.length === 0) return;
    const payload = JSON.stringify(batch.map(({ item, events }) => ({
      stream: item.stream,
      stream_json: JSON.stringify(item.stream),
      expected: item.expectedVersion,
      ...(item.takeToken
        ? {
          take: {
            key: item.takeToken.keyId,
            per_second: item.takeToken.perSecond,
            burst: item.takeToken.burst,
          },
        }
        : {}),
      events: events.map((event) => ({ ...event, type_json: JSON.stringify(event.type) })),
    })));
    let answer: AppendAnswer;
    const sentAt = performance.now();
    const commits = this.#commits;
    const known = this.#localHead().position;
    try {
      const [row] = await commits<{ answer: AppendAnswer }[]>`
        SELECT sergo_group_commit(${payload}::text::jsonb, ${this.#writer}, ${known}) AS answer`;
      answer = row!.answer;
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
    const own = this.#ownRecords(batch, answer);
    let written = false;
    try {
      written = await this.#afterCommit(own, answer);
    } catch (error) {
      console.error("Cannot bring the local copy of the log up to date:", error);
    }
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

  /** The recorded events and stored rows of this batch, as `sergo_group_commit` wrote them after `answer.from`. */
  #ownRecords(batch: EncodedAppend[], answer: AppendAnswer): (RecordedEvent & { row: StoredRow })[] | null {
    const records: (RecordedEvent & { row: StoredRow })[] = [];
    let prev = answer.from_hash;
    let position = Number(answer.from);
    batch.forEach(({ item, events }, i) => {
      const outcome = answer.results[i]!;
      if (!("first" in outcome)) return; // a conflict or an empty bucket: nothing written
      const base = outcome.version - events.length;
      events.forEach((encoded, j) => {
        const fields = {
          position: ++position,
          stream: item.stream,
          stream_version: base + j + 1,
          type: encoded.type,
          schema_version: encoded.schema_version,
        };
        const hash = createHash("sha256").update(prev).update(
          hashInputOf({ ...fields, data: encoded.data, metadata: encoded.metadata }),
        ).digest("hex");
        const event = item.events[j]!;
        const row: StoredRow = {
          ...fields,
          data: encoded.data,
          metadata: encoded.metadata,
          prev_hash: prev,
          hash,
        };
        records.push(
          { ...event, ...fields, prev_hash: prev, hash, row } as RecordedEvent & { row: StoredRow },
        );
        prev = hash;
      });
    });
    if (position !== Number(answer.head) || prev !== answer.hash) {
      console.error(
        `The log's head after an append (event ${answer.head}) is not the one computed here; pulling it instead`,
      );
      return null;
    }
    return records;
  }

  /**
   * After an own commit: writes its rows into the local copy when they
   * follow the copy's head, with the other writers' rows the answer carried
   * before them (one transaction, one telling); pulls what it did not carry,
   * and pulls everything when the rows do not follow. Resolves whether the
   * own rows were written here (then subscribers were told with them).
   */
  #afterCommit(own: (RecordedEvent & { row: StoredRow })[] | null, answer: AppendAnswer): Promise<boolean> {
    const next = this.#pulling.then(async () => {
      if (this.#closed) return false;
      if (own === null) {
        await this.#pullOnce();
        return false;
      }
      // The own rows follow this position (or, when every append conflicted, the commit wrote none after it).
      const before = own.length > 0 ? own[0]!.position - 1 : Number(answer.from);
      let local = this.#localHead();
      let carried: { rows: StoredRow[]; events: RecordedEvent[] } | null = null;
      if (local.position < before) {
        carried = carriedAfter(answer.rows, local, before);
        if (carried === null) {
          await this.#pullOnce(null, before);
          local = this.#localHead();
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

  /** The client-side transaction: lock the head, read the streams, write (pipelined), commit; then pull. */
  async #flushInTransaction(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    type Outcome =
      | { ok: true; first: number; streamVersion: number }
      | { ok: false; error: Error };
    let outcomes: Outcome[];
    try {
      outcomes = await this.#sql.begin(async (tx) => {
        // Lock the chain head first, then read the batch's streams in a statement of their own: under READ
        // COMMITTED each statement sees what was committed before it began, and only a statement that starts
        // after the lock is granted sees the last writer's versions (one query with both would not).
        const names = [...new Set(batch.map((item) => item.stream))];
        const [head] = await tx<{ position: bigint; hash: string }[]>`
          SELECT position, hash FROM sergo_log_head WHERE id = 1 FOR UPDATE`;
        const [read] = await tx<{ streams: Record<string, number> | null }[]>`
          SELECT jsonb_object_agg(stream, version) AS streams FROM sergo_streams
          WHERE stream IN (SELECT jsonb_array_elements_text(${JSON.stringify(names)}::text::jsonb))`;
        let position = Number(head!.position);
        let prevHash = head!.hash;
        const results: Outcome[] = [];
        const rows: Record<string, string | number>[] = [];
        const versions = new Map<string, number | null>(names.map((name) => [name, null]));
        for (const [stream, version] of Object.entries(read!.streams ?? {})) versions.set(stream, version);
        /** Each stream's version before the batch and after it, for the writes below. */
        const changes = new Map<string, { from: number | null; to: number }>();
        for (const item of batch) {
          const current = versions.get(item.stream) ?? null;
          const expected = item.expectedVersion;
          const ok = expected === "any" ||
            (expected === "no_stream" && current === null) ||
            (expected === "stream_exists" && current !== null) ||
            (typeof expected === "number" && current === expected);
          if (!ok) {
            results.push({ ok: false, error: new ConcurrencyError(item.stream, expected, current) });
            continue;
          }
          const from = current ?? 0;
          let encoded: Record<string, string | number>[];
          try {
            let prev = prevHash;
            encoded = item.events.map((event, i) => {
              const fields = {
                position: position + i + 1,
                stream: item.stream,
                stream_version: from + i + 1,
                type: event.type,
                schema_version: EVENT_VERSIONS[event.type],
                data: event.data,
                metadata: event.metadata,
              };
              const hash = eventHash(prev, fields);
              const row = {
                ...fields,
                data: JSON.stringify(fields.data),
                metadata: JSON.stringify(fields.metadata),
                prev_hash: prev,
                hash,
              };
              prev = hash;
              return row;
            });
          } catch (error) {
            results.push({
              ok: false,
              error: new Error(`Cannot append to "${item.stream}": ${reason(error)}`),
            });
            continue;
          }
          const to = from + item.events.length;
          versions.set(item.stream, to);
          const change = changes.get(item.stream);
          changes.set(item.stream, { from: change ? change.from : current, to });
          rows.push(...encoded);
          results.push({ ok: true, first: position + 1, streamVersion: to });
          position += encoded.length;
          prevHash = encoded[encoded.length - 1]!.hash as string;
        }
        // The versions are enforced by SQL too: an existing stream moves only from the version read, a new
        // one is only created, and (stream, stream_version) is unique in sergo_events.
        const moved = [...changes].filter(([, c]) => c.from !== null).map(([stream, c]) => ({
          stream,
          ...c,
        }));
        const created = [...changes].filter(([, c]) => c.from === null).map(([stream, c]) => ({
          stream,
          ...c,
        }));
        // The writes go out together (pipelined on the transaction's connection): one round trip.
        const writes: Promise<unknown>[] = [];
        if (moved.length > 0) {
          writes.push(
            tx`
              UPDATE sergo_streams s SET version = u."to"
              FROM jsonb_to_recordset(${JSON.stringify(moved)}::text::jsonb)
                AS u(stream text, "from" integer, "to" integer)
              WHERE s.stream = u.stream AND s.version = u."from"`.then((updated) => {
              if (updated.count !== moved.length) {
                throw new Error("a stream's version changed during the append");
              }
            }),
          );
        }
        if (created.length > 0) {
          writes.push(
            tx`
              INSERT INTO sergo_streams (stream, version)
              SELECT stream, "to" FROM jsonb_to_recordset(${JSON.stringify(created)}::text::jsonb)
                AS u(stream text, "to" integer)
              ON CONFLICT DO NOTHING`.then((inserted) => {
              if (inserted.count !== created.length) {
                throw new Error("a stream was created during the append");
              }
            }),
          );
        }
        if (rows.length > 0) {
          for (let i = 0; i < rows.length; i += 1000) {
            writes.push(
              tx`INSERT INTO sergo_events ${tx(rows.slice(i, i + 1000), [...EVENT_COLUMNS])}`.then(() => {}),
            );
          }
          writes.push(
            tx`UPDATE sergo_log_head SET position = ${position}, hash = ${prevHash} WHERE id = 1`.then(
              () => {},
            ),
            tx`SELECT pg_notify(${CHANNEL}, ${`${position} ${this.#writer}`})`.then(() => {}),
          );
        }
        const settled = await Promise.allSettled(writes);
        const failed = settled.find((outcome) => outcome.status === "rejected");
        if (failed) throw (failed as PromiseRejectedResult).reason;
        return results;
      });
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

  /** Pulls what other writers announced during own group commits, if those did not carry it. */
  #pullNoticed(): void {
    const noticed = this.#noticed;
    this.#noticed = 0;
    if (noticed > this.#localHead().position) this.#requestPull();
  }

  #requestPull(): void {
    if (this.#closed) return;
    this.sync().catch((error) => {
      if (!this.#closed) console.error("Cannot follow the shared log:", reason(error));
    });
  }

  /** Brings the local copy up to the database's committed head, telling subscribers about each new event. */
  sync(): Promise<void> {
    // One pull at a time; a request during a pull makes one more pull after it.
    this.#pullAgain = true;
    const next = this.#pulling.then(async () => {
      while (this.#pullAgain && !this.#closed) {
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
      const from = check ? check.position : this.#localHead().position;
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
      if (rows.length === 0 || this.#closed) return;
      let expected = from + 1;
      for (const row of rows) {
        if (Number(row.position) !== expected) throw new Error(`the database's log has no event ${expected}`);
        expected++;
      }
      const stored = rows.map((row) => ({ ...row, position: Number(row.position) }));
      this.#insertRows(stored);
      // Told from the rows in hand, not read back from the copy: every other replica's audit entry comes this way.
      this.#tell(stored.map((row) => parseStoredRow(row)));
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

  #localHead(): LogHead {
    const row = this.#statements.head.get() as
      | { position: number; hash: string }
      | undefined;
    return row ? { position: row.position, hash: row.hash } : { position: 0, hash: GENESIS_HASH };
  }

  /** The head of this replica's copy of the log (what it has read from the database). */
  head(): LogHead {
    return this.#localHead();
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
    return { ...this.#followed };
  }

  /** How many append transactions this store has committed (group commit makes it fewer than appends). */
  get transactions(): number {
    return this.#transactions;
  }

  readFrom(position: number, limit = 1000): RecordedEvent[] {
    const rows = this.#statements.readFrom.all(position, limit) as unknown as StoredRow[];
    return rows.map((row) => parseStoredRow(row));
  }

  readStream(stream: string): RecordedEvent[] {
    const rows = this.#statements.readStream.all(stream) as unknown as StoredRow[];
    return rows.map((row) => parseStoredRow(row));
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
   * interrupted copy resumes and a copy onto another log is refused.
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

  subscribe(listener: (events: RecordedEvent[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#flushScheduled || this.#flushes.size > 0 || this.#pending.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.allSettled(this.#flushes);
    }
    this.#closed = true;
    if (this.#poll !== null) clearInterval(this.#poll);
    await this.#pulling;
    await this.#unlisten?.().catch(() => {});
    await this.#sql.end({ timeout: 5 });
    if (this.#commits !== this.#sql) await this.#commits.end({ timeout: 5 });
    this.#cache.close();
  }
}
