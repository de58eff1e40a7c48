/**
 * The MCP calls of the shared log, indexed in PostgreSQL for the audit view:
 * one row of `sergo_audit_calls` per `McpCalled` event, with the columns the
 * audit view filters on (person, key, end user, action, UTC time), written by
 * a trigger on `sergo_events` in the transaction that writes the event. So
 * the index holds exactly the log's calls whichever way they were written
 * (`sergo_group_commit`, the client-side transaction, `sergo migrate`'s
 * import), a call is in it as soon as its event is durable (before the call
 * is answered), and there is nothing to rebuild: a log that had calls before
 * the table existed is indexed when the table is made.
 *
 * Why: with several replicas, each one kept its own indexed copy of every
 * other replica's calls in its audit view, and that per-row work (about 30 µs
 * a call, bench/README.md "Replicas by CPU") grew with every replica added.
 * A replica on PostgreSQL now reads the audit view's MCP entries from here
 * (projections/audit_view.ts merges them with its local entries); the entry
 * itself is still made from the event, by the same code as the local view.
 *
 * @module
 */
import type postgres from "postgres";
import type { StoredRow } from "../hash_chain.ts";
import type { SergoEvent } from "../types.ts";

/** The store's pool (as group_commit_sql.ts's `Sql`, which imports this file's schema). */
type Sql = postgres.Sql<Record<string, never>>;

/**
 * The table, its indexes (the audit view's own four), the trigger and the
 * filling of a log that had calls before the table. The columns are what
 * projections/audit_view.ts writes for an `McpCalled` entry: the action
 * `mcp <tool>` unless the event names one starting with `mcp `, the end user
 * of the data or else of the metadata, and the time in `toISOString()` form
 * (an MCP call's time is written so; one that is not, and that PostgreSQL
 * reads as a time, is put in that form, and one it cannot read stays as
 * written, as the local view keeps what `Date.parse` cannot read). The action
 * and the end user are kept as JSON strings, as the event's text has them
 * (`JSON.stringify`'s): a query or tool name may hold `\u0000`, which
 * PostgreSQL's text cannot, and reading such a string out of the JSON would
 * fail the call's append. For the same reason the event is read as `json`,
 * not `jsonb`, which refuses `\u0000` anywhere in it.
 */
/** The setting a statement that indexes its own calls turns on for its transaction (see the trigger). */
export const INDEXED_SETTING = "sergo.calls_indexed";

export const AUDIT_CALLS_SCHEMA = `
CREATE TABLE IF NOT EXISTS sergo_audit_calls (
  position bigint PRIMARY KEY,
  person_id text NOT NULL,
  key_id text,
  end_user_json text,
  action_json text NOT NULL,
  time_utc text COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS sergo_audit_calls_person ON sergo_audit_calls (person_id, position);
CREATE INDEX IF NOT EXISTS sergo_audit_calls_key ON sergo_audit_calls (person_id, key_id, position);
CREATE INDEX IF NOT EXISTS sergo_audit_calls_end_user ON sergo_audit_calls (person_id, end_user_json, position);
CREATE INDEX IF NOT EXISTS sergo_audit_calls_action ON sergo_audit_calls (person_id, action_json, position);
CREATE OR REPLACE FUNCTION sergo_index_audit_call(p bigint, data text, metadata text) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  d json;
  m json;
  t text;
  action text;
  end_user text;
BEGIN
  -- A \\u escape (JSON.stringify writes one for a control character or a lone surrogate) is read as \\/u: reading
  -- \\u0000 or a lone surrogate out of JSON fails, and must not fail the call's append. JSON.stringify never
  -- writes \\/, so the strings kept as JSON get their \\u back below.
  IF strpos(data, '\\u') > 0 THEN
    data := regexp_replace(data, '(?<!\\\\)((?:\\\\\\\\)*)\\\\u', '\\1\\\\/u', 'g');
  END IF;
  IF strpos(metadata, '\\u') > 0 THEN
    metadata := regexp_replace(metadata, '(?<!\\\\)((?:\\\\\\\\)*)\\\\u', '\\1\\\\/u', 'g');
  END IF;
  d := data::json;
  m := metadata::json;
  t := m->>'time';
  IF t IS NOT NULL AND t !~ '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' THEN
    BEGIN
      t := to_char(t::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
    EXCEPTION WHEN others THEN
      t := m->>'time';
    END;
  END IF;
  action := CASE WHEN starts_with((d->'action')::text, '"mcp ') THEN (d->'action')::text
                 ELSE '"mcp ' || substr((d->'tool')::text, 2) END;
  end_user := CASE WHEN json_typeof(d->'end_user') = 'string' THEN (d->'end_user')::text
                   WHEN json_typeof(m->'end_user') = 'string' THEN (m->'end_user')::text END;
  IF strpos(action, '\\/') > 0 THEN
    action := regexp_replace(action, '(?<!\\\\)((?:\\\\\\\\)*)\\\\/', '\\1\\\\', 'g');
  END IF;
  IF strpos(end_user, '\\/') > 0 THEN
    end_user := regexp_replace(end_user, '(?<!\\\\)((?:\\\\\\\\)*)\\\\/', '\\1\\\\', 'g');
  END IF;
  INSERT INTO sergo_audit_calls (position, person_id, key_id, end_user_json, action_json, time_utc)
  VALUES (p, d->>'person_id', d->>'key_id', end_user, action, coalesce(t, ''))
  ON CONFLICT (position) DO NOTHING;
END
$fn$;
CREATE OR REPLACE FUNCTION sergo_audit_call() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM sergo_index_audit_call(NEW.position, NEW.data, NEW.metadata);
  RETURN NULL;
END
$fn$;
DO $do$
DECLARE
  fresh boolean := NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'sergo_audit_call' AND NOT tgisinternal);
BEGIN
  -- A statement that indexes its calls itself says so (${INDEXED_SETTING}, for its transaction): the trigger
  -- is for the writers that do not (the client-side transaction, migrate's import, a replica of the version
  -- before), and its condition costs no function call.
  DROP TRIGGER IF EXISTS sergo_audit_call ON sergo_events;
  CREATE TRIGGER sergo_audit_call AFTER INSERT ON sergo_events FOR EACH ROW
    WHEN (NEW.type = 'McpCalled' AND current_setting('${INDEXED_SETTING}', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION sergo_audit_call();
  IF fresh THEN
    -- The calls logged before the table (the trigger's lock on sergo_events holds off new ones until commit).
    PERFORM sergo_index_audit_call(position, data, metadata) FROM sergo_events WHERE type = 'McpCalled';
  END IF;
END
$do$;
`;

/**
 * The columns of a call's row, `[person_id, key_id, end_user_json,
 * action_json, time_utc]`, computed where the event is written: what
 * `sergo_index_audit_call` reads out of the stored JSON, without reading it.
 * `sergo_group_commit` writes them with the event (`audit` beside its data),
 * so the database does not parse every call's JSON in the chain head's lock
 * (one replica, PostgreSQL's CPU per call: with the trigger 0.110 ms against
 * 0.058 ms before the index, in runs taken in turn; this way 0.087 against
 * 0.062 ms; the rest is the row and its five indexes: bench/README.md,
 * "Replicas by CPU"). The time is put in `toISOString()` form as the local view puts it
 * (projections/audit_view.ts).
 */
export function auditCallColumns(event: SergoEvent): AuditCallColumns | null {
  if (event.type !== "McpCalled") return null;
  const { data, metadata } = event;
  const endUser = typeof data.end_user === "string"
    ? data.end_user
    : typeof metadata.end_user === "string"
    ? metadata.end_user
    : null;
  const action = data.action.startsWith("mcp ") ? data.action : `mcp ${data.tool}`;
  return [
    data.person_id,
    data.key_id,
    endUser === null ? null : JSON.stringify(endUser),
    JSON.stringify(action),
    utcTime(metadata.time),
  ];
}

/** See {@linkcode auditCallColumns}. */
export type AuditCallColumns = [string, string, string | null, string, string];

const UTC_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An ISO time in UTC `toISOString()` form, as projections/audit_view.ts's `utcTime` gives it. */
function utcTime(time: string): string {
  if (UTC_ISO.test(time)) return time;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString();
}

/** What the audit view filters a person's MCP calls by (times as UTC `toISOString()` text, inclusive). */
export interface AuditCallFilter {
  personId: string;
  /** Only these keys' calls (none: no call). */
  keyIds?: readonly string[];
  endUser?: string;
  action?: string;
  from?: string;
  to?: string;
}

/** The audit view's MCP calls in PostgreSQL; see the module documentation. */
export class AuditCalls {
  readonly #sql: Sql;

  /** Queries through `sql` (the store's pool). */
  constructor(sql: Sql) {
    this.#sql = sql;
  }

  #where(filter: AuditCallFilter) {
    const sql = this.#sql;
    return sql`c.person_id = ${filter.personId}
      ${filter.keyIds === undefined ? sql`` : sql`AND c.key_id IN ${sql(filter.keyIds as string[])}`}
      ${filter.endUser === undefined ? sql`` : sql`AND c.end_user_json = ${JSON.stringify(filter.endUser)}`}
      ${filter.action === undefined ? sql`` : sql`AND c.action_json = ${JSON.stringify(filter.action)}`}
      ${filter.from === undefined ? sql`` : sql`AND c.time_utc >= ${filter.from}`}
      ${filter.to === undefined ? sql`` : sql`AND c.time_utc <= ${filter.to}`}`;
  }

  /**
   * The events of the calls the filter selects, by position: newest first
   * before `before` (all when absent), or oldest first after `after`; never
   * past `upTo`; at most `limit`.
   */
  async events(
    filter: AuditCallFilter,
    range: { before?: number; after?: number; upTo?: number; limit: number },
  ): Promise<StoredRow[]> {
    if (filter.keyIds?.length === 0) return [];
    const sql = this.#sql;
    const rows = await sql<(Omit<StoredRow, "position"> & { position: bigint })[]>`
      SELECT e.position, e.stream, e.stream_version, e.type, e.schema_version, e.data, e.metadata, e.prev_hash, e.hash
      FROM sergo_audit_calls c JOIN sergo_events e ON e.position = c.position
      WHERE ${this.#where(filter)}
        ${range.before === undefined ? sql`` : sql`AND c.position < ${range.before}`}
        ${range.after === undefined ? sql`` : sql`AND c.position > ${range.after}`}
        ${range.upTo === undefined ? sql`` : sql`AND c.position <= ${range.upTo}`}
      ORDER BY c.position ${range.after === undefined ? sql`DESC` : sql`ASC`} LIMIT ${range.limit}`;
    return rows.map((row) => ({ ...row, position: Number(row.position) }));
  }

  /** How many calls the filter selects up to position `upTo`. */
  async count(filter: AuditCallFilter, upTo?: number): Promise<number> {
    if (filter.keyIds?.length === 0) return 0;
    const sql = this.#sql;
    const [row] = await sql<{ n: bigint }[]>`
      SELECT count(*) AS n FROM sergo_audit_calls c
      WHERE ${this.#where(filter)} ${upTo === undefined ? sql`` : sql`AND c.position <= ${upTo}`}`;
    return Number(row!.n);
  }

  /** The actions of a person's calls (`mcp search`, …). */
  async actions(personId: string): Promise<string[]> {
    const rows = await this.#sql<{ action_json: string }[]>`
      SELECT DISTINCT action_json FROM sergo_audit_calls WHERE person_id = ${personId}`;
    return rows.map((row) => JSON.parse(row.action_json) as string);
  }

  /**
   * A key's calls: its last one (position and time as recorded), how many
   * since `day` and since `month`, and its end users' calls since `month`.
   */
  async keyUsage(
    personId: string,
    keyId: string,
    since: { day: string; month: string },
  ): Promise<{
    last: { position: number; time: string } | null;
    day: number;
    month: number;
    endUsers: { end_user: string; calls: number }[];
  }> {
    const sql = this.#sql;
    const [counts, last, endUsers] = await Promise.all([
      sql<{ day: bigint; month: bigint }[]>`
        SELECT count(*) FILTER (WHERE time_utc >= ${since.day}) AS day, count(*) AS month
        FROM sergo_audit_calls WHERE person_id = ${personId} AND key_id = ${keyId} AND time_utc >= ${since.month}`,
      sql<{ position: bigint; time: string }[]>`
        SELECT c.position, e.metadata::jsonb->>'time' AS time
        FROM sergo_audit_calls c JOIN sergo_events e ON e.position = c.position
        WHERE c.person_id = ${personId} AND c.key_id = ${keyId} ORDER BY c.position DESC LIMIT 1`,
      sql<{ end_user_json: string; calls: bigint }[]>`
        SELECT end_user_json, count(*) AS calls FROM sergo_audit_calls
        WHERE person_id = ${personId} AND key_id = ${keyId} AND end_user_json IS NOT NULL
          AND time_utc >= ${since.month}
        GROUP BY end_user_json`,
    ]);
    const found = last[0];
    return {
      last: found ? { position: Number(found.position), time: found.time } : null,
      day: Number(counts[0]!.day),
      month: Number(counts[0]!.month),
      endUsers: endUsers.map((row) => ({
        end_user: JSON.parse(row.end_user_json) as string,
        calls: Number(row.calls),
      })),
    };
  }
}
