/**
 * The log's tables in PostgreSQL and the two ways a group commit is written
 * into them: the `sergo_group_commit` function, one statement that locks the
 * chain head, checks each append's expected version, takes its rate token
 * and inserts its rows with their hashes (the hash text put together in SQL
 * as events/hash_chain.ts puts it together: test/events/postgres/
 * group_commit_sql_test.ts holds the two to the same chain); and the
 * client-side transaction it replaced, for a batch too big for one JSON
 * parameter and as the benchmark's baseline.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type postgres from "postgres";
import { canonicalJson } from "../_canonical_json.ts";
import { eventHash, GENESIS_HASH, hashInputOf, type StoredRow } from "../hash_chain.ts";
import { ConcurrencyError, type ExpectedVersion, type TokenTake } from "../store.ts";
import { EVENT_VERSIONS, type RecordedEvent, type SergoEvent } from "../types.ts";
import { reason } from "./errors.ts";
import { AUDIT_CALLS_SCHEMA, auditCallColumns, INDEXED_SETTING } from "./audit_calls.ts";
import type { SchemaPart } from "./schema.ts";

/** A connection pool as the PostgreSQL parts open it (bigint columns as `bigint`). */
export type Sql = postgres.Sql<Record<string, never>>;

/** The notification channel appends announce their new head on. */
export const CHANNEL = "sergo_events";

/** Most rows a group commit's answer carries; a replica further behind pulls them. */
export const CARRIED_ROWS = 500;

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
 * other writers committed between that head and this commit's own, but for
 * their MCP calls, which no replica copies (local_copy.ts), and the position
 * they follow (`seen`) (`rows`:
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
  -- This statement indexes its MCP calls itself (events/postgres/audit_calls.ts): the trigger leaves them.
  PERFORM set_config('${INDEXED_SETTING}', 'on', true);
  SELECT position, hash INTO from_position, from_hash FROM sergo_log_head WHERE id = 1 FOR UPDATE;
  -- The rows between what the caller has and this commit's own: this session's last commit's rows, and the rows
  -- it carried, count as had (the next commit on a connection is sent before the answer of the one before).
  seen := greatest(known, nullif(current_setting('sergo.seen', true), '')::bigint);
  IF seen IS NOT NULL AND seen < from_position THEN
    -- An empty list, not null, when every row between is a call: the caller then knows there is nothing to copy.
    SELECT coalesce(json_agg(json_build_array(e.position, e.stream, e.stream_version, e.type, e.schema_version,
                                              e.data, e.metadata, e.prev_hash, e.hash) ORDER BY e.position),
                    '[]'::json) INTO carried
    FROM (SELECT * FROM sergo_events WHERE position > seen AND position <= from_position AND type <> 'McpCalled'
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
      IF ev ? 'audit' THEN
        INSERT INTO sergo_audit_calls (position, person_id, key_id, end_user_json, action_json, time_utc)
        VALUES (pos + n, ev->'audit'->>0, ev->'audit'->>1, ev->'audit'->>2, ev->'audit'->>3, ev->'audit'->>4);
      ELSIF ev->>'type' = 'McpCalled' THEN
        PERFORM sergo_index_audit_call(pos + n, ev->>'data', ev->>'metadata');
      END IF;
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
                           'results', results, 'rows', carried, 'seen', seen);
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
${AUDIT_CALLS_SCHEMA}
`;

/** The log's part of the schema (the rate limits share its advisory lock). */
export const LOG_SCHEMA_PART: SchemaPart = {
  ddl: PG_SCHEMA,
  lock: 8317401,
  tables: ["sergo_events", "sergo_streams", "sergo_log_head", "sergo_rate_buckets", "sergo_audit_calls"],
  functions: [
    "sergo_group_commit(jsonb, text, bigint)",
    "sergo_group_commit(jsonb, text)",
    "sergo_append(jsonb)",
    "sergo_index_audit_call(bigint, text, text)",
    "sergo_audit_call()",
  ],
};

/** What `sergo_group_commit` answers: the head it locked, the head it left, and each append's outcome in order. */
export interface AppendAnswer {
  from: number;
  from_hash: string;
  head: number;
  hash: string;
  results: (
    | { first: number; version: number; tokens?: number }
    | { conflict: true; actual: number | null }
    | { refused: true; wait: number; tokens: number }
  )[];
  /**
   * Other writers' rows after `seen` up to `from` (or the first
   * {@linkcode CARRIED_ROWS} of them), but for their MCP calls: a replica's
   * copy keeps no other writer's call (local_copy.ts).
   */
  rows: CarriedRow[] | null;
  /** The position the rows follow: the head the statement was told this copy has, or its session's last commit's. */
  seen?: number | string | null;
}

/** A row as `sergo_group_commit` carries it: the columns of `sergo_events` in {@linkcode EVENT_COLUMNS}' order. */
export type CarriedRow = [number, string, number, string, number, string, string, string, string];

/** One append of a group commit. */
export interface CommitItem {
  stream: string;
  events: SergoEvent[];
  expectedVersion: ExpectedVersion;
  takeToken?: TokenTake;
}

/** An event as sent to `sergo_group_commit`: its data and metadata in canonical JSON (the text the hash covers). */
export interface EncodedEvent {
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
}

/** An append as sent to `sergo_group_commit`. */
export interface EncodedAppend<T extends CommitItem = CommitItem> {
  item: T;
  events: EncodedEvent[];
}

/** The columns of `sergo_events`, in the order both insert paths (the old transaction, migrate's import) write them. */
export const EVENT_COLUMNS = [
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

/** A row of `sergo_events` as the driver reads it (its position a `bigint`). */
export interface PgRow {
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

/** An event written by an own group commit: the recorded event, and its row as stored. */
export type OwnRecord = RecordedEvent & { row: StoredRow };

/** An append's events in canonical JSON; throws for one that cannot be encoded (a non-finite number). */
export function encodeEvents(events: readonly SergoEvent[]): EncodedEvent[] {
  return events.map((event) => ({
    type: event.type,
    schema_version: EVENT_VERSIONS[event.type],
    data: canonicalJson(event.data),
    metadata: canonicalJson(event.metadata),
  }));
}

/** The `items` parameter of `sergo_group_commit` for a batch, as JSON text. */
export function groupCommitPayload(batch: readonly EncodedAppend[]): string {
  return JSON.stringify(batch.map(({ item, events }) => ({
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
    events: events.map((event, i) => {
      // An MCP call's row of sergo_audit_calls, written with it (see auditCallColumns).
      const audit = auditCallColumns(item.events[i]!);
      return { ...event, type_json: JSON.stringify(event.type), ...(audit ? { audit } : {}) };
    }),
  })));
}

/**
 * Sends one group commit through `sergo_group_commit` (one round trip), as
 * `writer`, telling it the head `known` of the caller's copy.
 */
export async function commitInOneStatement(
  commits: Sql,
  payload: string,
  options: { writer: string; known: number },
): Promise<AppendAnswer> {
  const [row] = await commits<{ answer: AppendAnswer }[]>`
    SELECT sergo_group_commit(${payload}::text::jsonb, ${options.writer}, ${options.known}) AS answer`;
  return row!.answer;
}

/**
 * The recorded events and stored rows of this batch, as `sergo_group_commit`
 * wrote them after `answer.from`, their hashes computed here; null when they
 * do not end at the head the statement left (then they are pulled instead).
 */
export function ownRecords(batch: readonly EncodedAppend[], answer: AppendAnswer): OwnRecord[] | null {
  const records: OwnRecord[] = [];
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
        { ...event, ...fields, prev_hash: prev, hash, row } as OwnRecord,
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

/** What became of one append of a client-side transaction. */
export type TransactionOutcome =
  | { ok: true; first: number; streamVersion: number }
  | { ok: false; error: Error };

/**
 * The client-side transaction: lock the head, read the streams, write
 * (pipelined), commit; `writer` names the store in the notification. An
 * append whose version does not match, or whose events cannot be encoded,
 * fails alone; any other error rolls it all back. (A `sql.begin`: see the
 * driver's stray error in src/postgres_blob_store.ts.)
 */
export function commitInTransaction(
  sql: Sql,
  batch: readonly CommitItem[],
  options: { writer: string },
): Promise<TransactionOutcome[]> {
  const { writer } = options;
  return sql.begin(async (tx) => {
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
    const results: TransactionOutcome[] = [];
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
        tx`SELECT pg_notify(${CHANNEL}, ${`${position} ${writer}`})`.then(() => {}),
      );
    }
    const settled = await Promise.allSettled(writes);
    const failed = settled.find((outcome) => outcome.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return results;
  });
}
