/**
 * The audit view: one entry per MCP call and per change in the log, with its
 * time, actor, end user, action, details, and the event's position and hash.
 * Every entry belongs to one person (`person_id`), who sees only their own.
 *
 * Actions, lower case:
 * - MCP calls: `mcp search`, `mcp listing`, `mcp text read`, `mcp page viewed`
 *   (as recorded by the MCP endpoint; `mcp <tool>` for anything else).
 * - People: `person added`, `password set`, `signed in`, `signed out`.
 * - Folders: `folder created`, `folder renamed`, `folder moved`, `folder deleted`.
 * - Documents: `document uploaded`, `document moved`, `document deleted`,
 *   `processing requested`, `processing started`, `document processed`,
 *   `processing failed`, `pdf copy requested`, `pdf copy made`, `pdf copy failed`.
 * - Keys: `key created`, `key changed`, `key rolled`, `key deleted`,
 *   `personal key created`, `personal key deleted`.
 *
 * Details never hold secrets or their hashes (no password hash, no key hash).
 *
 * Where the MCP calls' entries are kept: on the embedded log, in this view's
 * tables like every other entry ({@linkcode auditView}); on the shared log in
 * PostgreSQL, in the log's database (`sergo_audit_calls`, events/postgres/
 * audit_calls.ts), so that no replica keeps an indexed copy of every
 * replica's calls ({@linkcode auditViewWithoutCalls}). Code that reads the
 * view reads it through the `…From` functions with the app's `auditCalls`
 * (null on the embedded log): they merge the local entries and the calls',
 * whose entries are made from their events by the same code as here.
 *
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { EventType, RecordedEvent } from "../events/types.ts";
import { canonicalJson, type StoredRow } from "../events/hash_chain.ts";
import type { AuditCallFilter, AuditCalls } from "../events/postgres/audit_calls.ts";
import { parseStoredRow } from "../events/sqlite_store.ts";
import type { Projection } from "./projection.ts";
import { checkpointOf } from "./projector.ts";
import { statement } from "./_statements.ts";
import { type ActorKind, describeEvent } from "./_audit_describe.ts";

export { maskedKey } from "./_audit_describe.ts";

export type { ActorKind } from "./_audit_describe.ts";

/** One entry of the audit view. */
export interface AuditEntry {
  /** The event's position in the log. */
  position: number;
  /** The event's hash in the chain. */
  hash: string;
  /** When it happened (the event's `metadata.time`, as recorded). */
  time: string;
  /** The person the entry belongs to. */
  person_id: string;
  /** Who did it, for people to read: a person's name, or a masked key with its name. */
  actor: string;
  /** What kind of actor it was. */
  actor_kind: ActorKind;
  /** The agent or personal key involved (the caller, or the key changed), if any. */
  key_id: string | null;
  /** That key's name at the time (agent keys). */
  key_name: string | null;
  /** That key's masked value at the time, such as `sgk_s_…a1B2`. */
  masked_key: string | null;
  /** The `X-Sergo-End-User` value, if one was sent. */
  end_user: string | null;
  /** What happened, such as `mcp search` or `key rolled`. */
  action: string;
  /** The details the action names (query, count, file, page, …). */
  details: Record<string, unknown>;
  /** The event type behind the entry. */
  type: EventType;
  /** The event's stream. */
  stream: string;
}

/** Filters of {@linkcode queryAudit}. */
export interface AuditFilters {
  /** Whose entries; required, a person sees only their own. */
  personId: string;
  /** Earliest time, inclusive (ISO 8601; a bare date means its start, UTC). */
  from?: string;
  /** Latest time, inclusive (ISO 8601; a bare date means the whole day, UTC). */
  to?: string;
  /** Only entries of this key. */
  keyId?: string;
  /** Only entries of the person's keys that have ever had this name. */
  keyName?: string;
  /** Only entries with this end user. */
  endUser?: string;
  /** Only entries with this action, such as `mcp search`. */
  action?: string;
  /** Leave out the system's own work (processing, PDF copies, lease renewals): people's and agents' actions only. */
  withoutSystem?: boolean;
  /** Page size. */
  limit: number;
  /** Position cursor: only entries before it (from `next_before` of the page before). */
  before?: number;
}

/** A page of entries, newest first. */
export interface AuditPage {
  entries: AuditEntry[];
  /** Pass it as `before` for the next page; absent on the last page. */
  next_before?: number;
}

const TABLES = [
  "audit_entries",
  "audit_people",
  "audit_folders",
  "audit_documents",
  "audit_keys",
  "audit_key_names",
  "audit_grants",
] as const;

const HANDLES: readonly EventType[] = [
  "PersonAdded",
  "PersonPasswordSet",
  "PersonMadeAdministrator",
  "PersonAdministratorRemoved",
  "PasswordLinkIssued",
  "PasswordLinkUsed",
  "FolderCreated",
  "FolderRenamed",
  "FolderMoved",
  "FolderDeleted",
  "DocumentUploaded",
  "DocumentMoved",
  "DocumentDeleted",
  "ProcessingRequested",
  "ProcessingStarted",
  "ProcessingLeaseRenewed",
  "DocumentProcessed",
  "TranscriptionProgressed",
  "ProcessingFailed",
  "PdfCopyRequested",
  "PdfCopyStarted",
  "PdfCopyLeaseRenewed",
  "PdfCopyMade",
  "PdfCopyFailed",
  "PassagesEmbedded",
  "AgentKeyCreated",
  "AgentKeyChanged",
  "AgentKeyRolled",
  "AgentKeyDeleted",
  "PersonalKeyCreated",
  "PersonalKeyDeleted",
  "LoginTokenIssued",
  "LoginTokenRevoked",
  "OAuthClientRegistered",
  "OAuthGranted",
  "OAuthTokensIssued",
  "OAuthGrantRevoked",
  "McpCalled",
  "ConsoleSearched",
];

const INIT_SQL = `
      CREATE TABLE IF NOT EXISTS audit_entries (
        position INTEGER PRIMARY KEY, hash TEXT NOT NULL, time TEXT NOT NULL, time_utc TEXT NOT NULL,
        person_id TEXT NOT NULL, actor TEXT NOT NULL, actor_kind TEXT NOT NULL, key_id TEXT, key_name TEXT,
        masked_key TEXT, end_user TEXT, action TEXT NOT NULL, details TEXT NOT NULL, type TEXT NOT NULL,
        stream TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS audit_entries_person ON audit_entries (person_id, position);
      CREATE INDEX IF NOT EXISTS audit_entries_key ON audit_entries (person_id, key_id, position);
      CREATE INDEX IF NOT EXISTS audit_entries_end_user ON audit_entries (person_id, end_user, position);
      CREATE INDEX IF NOT EXISTS audit_entries_action ON audit_entries (person_id, action, position);
      CREATE TABLE IF NOT EXISTS audit_people (person_id TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_grants (
        grant_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, key_id TEXT NOT NULL, client_name TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_folders (
        folder_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_documents (
        document_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, name TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_keys (
        key_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT, last4 TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_key_names (
        person_id TEXT NOT NULL, name TEXT NOT NULL, key_id TEXT NOT NULL, PRIMARY KEY (person_id, name, key_id)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS audit_calls_elsewhere (since INTEGER NOT NULL);
    `;

/** The stored row of an event's entry (and its UTC time), or null for an event that is nobody's. */
function entryRow(db: DatabaseSync, event: RecordedEvent): (AuditRow & { time_utc: string }) | null {
  const entry = describeEvent(db, event);
  if (entry.person_id === null) return null;
  return {
    position: event.position,
    hash: event.hash,
    time: event.metadata.time,
    time_utc: utcTime(event.metadata.time),
    person_id: entry.person_id,
    actor: entry.actor.label,
    actor_kind: entry.actor.kind,
    key_id: entry.key?.key_id ?? null,
    key_name: entry.key?.name ?? null,
    masked_key: entry.key?.masked ?? null,
    end_user: entry.end_user ?? event.metadata.end_user ?? null,
    action: entry.action,
    details: canonicalJson(entry.details),
    type: event.type,
    stream: event.stream,
  };
}

/** The insert of one entry, its values in the order of {@linkcode entryValues}. */
export const INSERT_ENTRY =
  `INSERT INTO audit_entries (position, hash, time, time_utc, person_id, actor, actor_kind,
       key_id, key_name, masked_key, end_user, action, details, type, stream)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * The values {@linkcode INSERT_ENTRY} stores for an event's entry, or null for
 * an event that is nobody's. For an `McpCalled` event they are made from the
 * event alone (`db` is not read), so another thread can store them
 * (`audit_calls_thread.ts`).
 */
export function entryValues(db: DatabaseSync, event: RecordedEvent): SQLInputValue[] | null {
  const row = entryRow(db, event);
  if (row === null) return null;
  return [
    row.position,
    row.hash,
    row.time,
    row.time_utc,
    row.person_id,
    row.actor,
    row.actor_kind,
    row.key_id,
    row.key_name,
    row.masked_key,
    row.end_user,
    row.action,
    row.details,
    row.type,
    row.stream,
  ];
}

function applyEntry(db: DatabaseSync, event: RecordedEvent): void {
  const values = entryValues(db, event);
  if (values !== null) statement(db, INSERT_ENTRY).run(...values);
}

/** The audit view projection, MCP calls included (the embedded log's). */
export const auditView: Projection = {
  name: "audit_view",
  handles: HANDLES,
  tables: TABLES,
  init(db: DatabaseSync): void {
    db.exec(INIT_SQL);
    // Built on the shared log before, without the calls: built again from the log, with them.
    if (statement(db, "SELECT 1 FROM audit_calls_elsewhere").get() !== undefined) {
      for (const table of TABLES) db.exec(`DELETE FROM ${table}`);
      db.exec("DELETE FROM audit_calls_elsewhere");
      statement(db, "DELETE FROM projection_checkpoints WHERE name = ?").run("audit_view");
    }
  },
  apply: applyEntry,
};

/**
 * The audit view on the shared log in PostgreSQL: the same entries but the
 * MCP calls', which are read from the log's database (events/postgres/
 * audit_calls.ts) by the `…From` reads below, so no replica keeps its own
 * indexed copy of every replica's calls. A view built before with the calls
 * (an older version, or the embedded log before `sergo migrate`) drops them.
 */
export const auditViewWithoutCalls: Projection = {
  name: "audit_view",
  handles: HANDLES.filter((type) => type !== "McpCalled"),
  tables: TABLES,
  init(db: DatabaseSync): void {
    db.exec(INIT_SQL);
    if (statement(db, "SELECT 1 FROM audit_calls_elsewhere").get() === undefined) {
      db.exec("DELETE FROM audit_entries WHERE type = 'McpCalled'");
      statement(db, "INSERT INTO audit_calls_elsewhere (since) VALUES (?)").run(Date.now());
    }
  },
  apply: applyEntry,
};

/** Normalises an ISO time to UTC `toISOString()` form, so times compare as text. */
const UTC_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function utcTime(time: string): string {
  if (UTC_ISO.test(time)) return time; // already what toISOString() gives
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString();
}

/**
 * Turns a filter bound into a UTC ISO time: a bare date `from` means its first
 * instant, a bare date `to` the last instant of that day.
 */
export function timeBound(value: string, side: "from" | "to"): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return side === "from" ? `${value}T00:00:00.000Z` : `${value}T23:59:59.999Z`;
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`Cannot read "${value}" as a time: expected ISO 8601`);
  return new Date(ms).toISOString();
}

/** The SQL condition and values of a set of filters (without the cursor and order). */
export function auditWhere(
  db: DatabaseSync,
  filters: Omit<AuditFilters, "limit" | "before">,
): { sql: string; values: SQLInputValue[] } {
  const parts = ["person_id = ?"];
  const values: SQLInputValue[] = [filters.personId];
  if (filters.from !== undefined) {
    parts.push("time_utc >= ?");
    values.push(timeBound(filters.from, "from"));
  }
  if (filters.to !== undefined) {
    parts.push("time_utc <= ?");
    values.push(timeBound(filters.to, "to"));
  }
  let keyIds: string[] | null = null;
  if (filters.keyName !== undefined) {
    const rows = statement(
      db,
      "SELECT key_id FROM audit_key_names WHERE person_id = ? AND name = ? ORDER BY key_id",
    )
      .all(filters.personId, filters.keyName) as Array<{ key_id: string }>;
    keyIds = rows.map((row) => row.key_id);
  }
  if (filters.keyId !== undefined) {
    keyIds = keyIds === null ? [filters.keyId] : keyIds.filter((id) => id === filters.keyId);
  }
  if (keyIds !== null) {
    if (keyIds.length === 0) keyIds.push("\u0000no such key");
    parts.push(`key_id IN (${keyIds.map(() => "?").join(", ")})`);
    values.push(...keyIds);
  }
  if (filters.endUser !== undefined) {
    parts.push("end_user = ?");
    values.push(filters.endUser);
  }
  if (filters.action !== undefined) {
    parts.push("action = ?");
    values.push(filters.action);
  }
  if (filters.withoutSystem) parts.push("actor_kind <> 'system'");
  return { sql: parts.join(" AND "), values };
}

/** A stored entry row as selected. */
export interface AuditRow extends Omit<AuditEntry, "details" | "type"> {
  details: string;
  type: string;
}

/** Turns a stored row into an entry. */
export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    position: row.position,
    hash: row.hash,
    time: row.time,
    person_id: row.person_id,
    actor: row.actor,
    actor_kind: row.actor_kind,
    key_id: row.key_id,
    key_name: row.key_name,
    masked_key: row.masked_key,
    end_user: row.end_user,
    action: row.action,
    details: JSON.parse(row.details),
    type: row.type as EventType,
    stream: row.stream,
  };
}

/** The columns of an entry, for `SELECT`. */
export const AUDIT_COLUMNS =
  "position, hash, time, person_id, actor, actor_kind, key_id, key_name, masked_key, end_user, action, details, type, stream";

/** The view's own entries that match the filters, newest first (before `filters.before`), at most `count`. */
function localRows(db: DatabaseSync, filters: AuditFilters, count: number): AuditRow[] {
  const where = auditWhere(db, filters);
  let sql = `SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE ${where.sql}`;
  const values = [...where.values];
  if (filters.before !== undefined) {
    sql += " AND position < ?";
    values.push(filters.before);
  }
  sql += " ORDER BY position DESC LIMIT ?";
  values.push(count);
  return statement(db, sql).all(...values) as unknown as AuditRow[];
}

/**
 * A person's audit entries, newest first, one page at a time.
 *
 * @example
 * ```ts
 * const first = queryAudit(db, { personId, action: "mcp search", limit: 50 });
 * const second = queryAudit(db, { personId, action: "mcp search", limit: 50, before: first.next_before });
 * ```
 */
export function queryAudit(db: DatabaseSync, filters: AuditFilters): AuditPage {
  const limit = Math.max(1, Math.min(Math.trunc(filters.limit), 1000));
  const rows = localRows(db, filters, limit + 1);
  const entries = rows.slice(0, limit).map(toAuditEntry);
  const last = entries[entries.length - 1];
  return rows.length > limit && last ? { entries, next_before: last.position } : { entries };
}

/**
 * The position up to which the audit view has applied the log (0 before any),
 * with the checkpoint its projector holds ahead of the stored one.
 */
export function auditViewPosition(db: DatabaseSync): number {
  return checkpointOf(db, auditView.name);
}

// ---------------------------------------------------------------------------
// Reads the console and the export ask for: kept here so the audit view stays
// the only code that queries its tables.

/** The names a person's agent keys had in the audit (a renamed key under each of its names), sorted. */
export function auditKeyNames(db: DatabaseSync, personId: string): string[] {
  const rows = statement(db, "SELECT DISTINCT name FROM audit_key_names WHERE person_id = ? ORDER BY name")
    .all(personId) as Array<{ name: string }>;
  return rows.map((row) => row.name);
}

/** The actions of a person's audit entries (`mcp search`, `document uploaded`, …), sorted. */
export function auditActions(db: DatabaseSync, personId: string): string[] {
  const rows = statement(db, "SELECT DISTINCT action FROM audit_entries WHERE person_id = ? ORDER BY action")
    .all(personId) as Array<{ action: string }>;
  return rows.map((row) => row.action);
}

/** How much an agent key was used: its MCP calls in the audit. */
export interface AgentKeyUsage {
  /** The time of its last call, or null when it made none. */
  lastUsed: string | null;
  /** Calls in the last 24 hours and the last 30 days. */
  day: number;
  month: number;
  /** The end users its calls named in the last 30 days, most calls first (at most 6). */
  endUsers: Array<{ end_user: string; calls: number }>;
}

const DAY_MS = 24 * 3600_000;

/** How much an agent key of a person was used, as of `now`. */
export function agentKeyUsage(
  db: DatabaseSync,
  key: { person_id: string; key_id: string },
  now: Date,
): AgentKeyUsage {
  const since = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const count = (from: string) =>
    (statement(
      db,
      `SELECT count(*) AS n FROM audit_entries
       WHERE person_id = ? AND key_id = ? AND actor_kind = 'agent_key' AND time_utc >= ?`,
    ).get(key.person_id, key.key_id, from) as { n: number }).n;
  const last = statement(
    db,
    `SELECT time FROM audit_entries WHERE person_id = ? AND key_id = ? AND actor_kind = 'agent_key'
     ORDER BY position DESC LIMIT 1`,
  ).get(key.person_id, key.key_id) as { time: string } | undefined;
  const endUsers = statement(
    db,
    `SELECT end_user, count(*) AS calls FROM audit_entries
     WHERE person_id = ? AND key_id = ? AND actor_kind = 'agent_key' AND end_user IS NOT NULL AND time_utc >= ?
     GROUP BY end_user ORDER BY calls DESC, end_user LIMIT 6`,
  ).all(key.person_id, key.key_id, since(30 * DAY_MS)) as unknown as Array<
    { end_user: string; calls: number }
  >;
  return {
    lastUsed: last?.time ?? null,
    day: count(since(DAY_MS)),
    month: count(since(30 * DAY_MS)),
    endUsers,
  };
}

/** A person's entries the filters select, up to a position: how many, and a page at a time oldest first. */
export interface AuditRange {
  /** How many entries the range holds. */
  total: number;
  /** At most `limit` entries after position `after`, oldest first, as stored rows (with their hash inputs). */
  rowsAfter(after: number, limit: number): AuditRow[];
}

/**
 * The entries of a person the filters select, up to and including position
 * `upTo`. The filters are resolved once (a key name to its key ids), so every
 * page reads the same selection the total counted.
 */
export function auditRange(
  db: DatabaseSync,
  filters: Omit<AuditFilters, "limit" | "before">,
  upTo: number,
): AuditRange {
  const where = auditWhere(db, filters);
  const total = (statement(db, `SELECT COUNT(*) AS n FROM audit_entries WHERE ${where.sql} AND position <= ?`)
    .get(...where.values, upTo) as { n: number }).n;
  const page = statement(
    db,
    `SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE ${where.sql} AND position > ? AND position <= ?
     ORDER BY position LIMIT ?`,
  );
  return {
    total,
    rowsAfter: (after, limit) => page.all(...where.values, after, upTo, limit) as unknown as AuditRow[],
  };
}

// ---------------------------------------------------------------------------
// The same reads on the shared log, whose MCP calls' entries are read from its
// database (`calls`; null on the embedded log, whose view holds them): each
// read takes what the local view holds and what the calls hold, in the order
// one table would give them.

/** Orders strings as SQLite's BINARY collation does (by UTF-8 bytes, that is by code points). */
function binaryCompare(a: string, b: string): number {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** The key ids a key name and key id filter come to (null: any key). */
function filteredKeyIds(db: DatabaseSync, filters: Omit<AuditFilters, "limit" | "before">): string[] | null {
  let keyIds: string[] | null = null;
  if (filters.keyName !== undefined) {
    const rows = statement(
      db,
      "SELECT key_id FROM audit_key_names WHERE person_id = ? AND name = ? ORDER BY key_id",
    ).all(filters.personId, filters.keyName) as Array<{ key_id: string }>;
    keyIds = rows.map((row) => row.key_id);
  }
  if (filters.keyId !== undefined) {
    keyIds = keyIds === null ? [filters.keyId] : keyIds.filter((id) => id === filters.keyId);
  }
  return keyIds;
}

/** The filter of the calls' entries (an MCP call's entry is an agent key's, never the system's). */
function callFilter(db: DatabaseSync, filters: Omit<AuditFilters, "limit" | "before">): AuditCallFilter {
  const keyIds = filteredKeyIds(db, filters);
  return {
    personId: filters.personId,
    ...(keyIds === null ? {} : { keyIds }),
    ...(filters.endUser === undefined ? {} : { endUser: filters.endUser }),
    ...(filters.action === undefined ? {} : { action: filters.action }),
    ...(filters.from === undefined ? {} : { from: timeBound(filters.from, "from") }),
    ...(filters.to === undefined ? {} : { to: timeBound(filters.to, "to") }),
  };
}

/** The entry rows of calls' events, made as the local view makes them. */
function callRows(db: DatabaseSync, rows: readonly StoredRow[]): AuditRow[] {
  return rows.map((row) => {
    const { time_utc: _, ...entry } = entryRow(db, parseStoredRow(row))!;
    return entry;
  });
}

/** Two lists of rows ordered by position, one way, merged. */
function merged(a: readonly AuditRow[], b: readonly AuditRow[], newestFirst: boolean): AuditRow[] {
  const out: AuditRow[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length ||
      (i < a.length && (newestFirst ? a[i]!.position > b[j]!.position : a[i]!.position < b[j]!.position));
    out.push(takeA ? a[i++]! : b[j++]!);
  }
  return out;
}

/** {@linkcode queryAudit}, with the calls' entries. */
export async function queryAuditFrom(
  db: DatabaseSync,
  calls: AuditCalls | null,
  filters: AuditFilters,
): Promise<AuditPage> {
  if (calls === null) return queryAudit(db, filters);
  const limit = Math.max(1, Math.min(Math.trunc(filters.limit), 1000));
  const local = localRows(db, filters, limit + 1);
  const remote = callRows(
    db,
    await calls.events(callFilter(db, filters), {
      ...(filters.before === undefined ? {} : { before: filters.before }),
      limit: limit + 1,
    }),
  );
  const rows = merged(local, remote, true);
  const entries = rows.slice(0, limit).map(toAuditEntry);
  const last = entries[entries.length - 1];
  return rows.length > limit && last ? { entries, next_before: last.position } : { entries };
}

/** {@linkcode auditActions}, with the calls' actions. */
export async function auditActionsFrom(
  db: DatabaseSync,
  calls: AuditCalls | null,
  personId: string,
): Promise<string[]> {
  const local = auditActions(db, personId);
  if (calls === null) return local;
  return [...new Set([...local, ...await calls.actions(personId)])].sort(binaryCompare);
}

/** {@linkcode agentKeyUsage}, with the key's calls. */
export async function agentKeyUsageFrom(
  db: DatabaseSync,
  calls: AuditCalls | null,
  key: { person_id: string; key_id: string },
  now: Date,
): Promise<AgentKeyUsage> {
  const local = agentKeyUsage(db, key, now);
  if (calls === null) return local;
  const since = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const remote = await calls.keyUsage(key.person_id, key.key_id, {
    day: since(DAY_MS),
    month: since(30 * DAY_MS),
  });
  let lastUsed = local.lastUsed;
  if (remote.last !== null) {
    const localLast = statement(
      db,
      `SELECT position FROM audit_entries WHERE person_id = ? AND key_id = ? AND actor_kind = 'agent_key'
       ORDER BY position DESC LIMIT 1`,
    ).get(key.person_id, key.key_id) as { position: number } | undefined;
    if (localLast === undefined || remote.last.position > localLast.position) lastUsed = remote.last.time;
  }
  // Every end user's calls, from both: the local view's six are not enough to merge.
  const counts = new Map<string, number>();
  const localEndUsers = statement(
    db,
    `SELECT end_user, count(*) AS calls FROM audit_entries
     WHERE person_id = ? AND key_id = ? AND actor_kind = 'agent_key' AND end_user IS NOT NULL AND time_utc >= ?
     GROUP BY end_user`,
  ).all(key.person_id, key.key_id, since(30 * DAY_MS)) as unknown as Array<
    { end_user: string; calls: number }
  >;
  for (const { end_user, calls: n } of [...localEndUsers, ...remote.endUsers]) {
    counts.set(end_user, (counts.get(end_user) ?? 0) + n);
  }
  const endUsers = [...counts].map(([end_user, calls]) => ({ end_user, calls }))
    .sort((a, b) => b.calls - a.calls || binaryCompare(a.end_user, b.end_user)).slice(0, 6);
  return { lastUsed, day: local.day + remote.day, month: local.month + remote.month, endUsers };
}

/** {@linkcode AuditRange}, read a page at a time from the local view and the calls. */
export interface AuditRangeFrom {
  total: number;
  rowsAfter(after: number, limit: number): Promise<AuditRow[]>;
}

/** {@linkcode auditRange}, with the calls' entries. */
export async function auditRangeFrom(
  db: DatabaseSync,
  calls: AuditCalls | null,
  filters: Omit<AuditFilters, "limit" | "before">,
  upTo: number,
): Promise<AuditRangeFrom> {
  const local = auditRange(db, filters, upTo);
  if (calls === null) {
    return {
      total: local.total,
      rowsAfter: (after, limit) => Promise.resolve(local.rowsAfter(after, limit)),
    };
  }
  const filter = callFilter(db, filters);
  const total = local.total + await calls.count(filter, upTo);
  return {
    total,
    async rowsAfter(after, limit) {
      const remote = callRows(db, await calls.events(filter, { after, upTo, limit }));
      return merged(local.rowsAfter(after, limit), remote, false).slice(0, limit);
    },
  };
}
