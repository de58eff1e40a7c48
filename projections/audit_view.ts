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
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { CanRead, EventType, RecordedEvent } from "../events/types.ts";
import { canonicalJson } from "../events/hash_chain.ts";
import type { Projection } from "./projection.ts";
import { statement } from "./_statements.ts";

/** Who did what an entry records. */
export type ActorKind = "person" | "agent_key" | "personal_key" | "system" | "cli" | "unknown";

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

/** The audit view projection. */
export const auditView: Projection = {
  name: "audit_view",
  handles: HANDLES,
  tables: TABLES,
  init(db: DatabaseSync): void {
    db.exec(`
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
    `);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    const entry = describeEvent(db, event);
    if (entry.person_id === null) return;
    statement(
      db,
      `INSERT INTO audit_entries (position, hash, time, time_utc, person_id, actor, actor_kind, key_id, key_name,
         masked_key, end_user, action, details, type, stream)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      event.position,
      event.hash,
      event.metadata.time,
      utcTime(event.metadata.time),
      entry.person_id,
      entry.actor.label,
      entry.actor.kind,
      entry.key?.key_id ?? null,
      entry.key?.name ?? null,
      entry.key?.masked ?? null,
      entry.end_user ?? event.metadata.end_user ?? null,
      entry.action,
      canonicalJson(entry.details),
      event.type,
      event.stream,
    );
  },
};

/** The masked form of a key value: `sgk_s_…` or `sgk_p_…` and its last 4 characters. */
export function maskedKey(kind: "agent" | "personal", last4: string): string {
  return `${kind === "agent" ? "sgk_s_" : "sgk_p_"}…${last4}`;
}

interface KeyRow {
  key_id: string;
  person_id: string;
  kind: string;
  name: string | null;
  last4: string;
}

interface KeyRef {
  key_id: string;
  name: string | null;
  masked: string;
}

interface Described {
  person_id: string | null;
  action: string;
  details: Record<string, unknown>;
  actor: { label: string; kind: ActorKind };
  key?: KeyRef;
  end_user?: string | null;
}

/** Updates the look-up tables for one event and describes it as an entry. */
function describeEvent(db: DatabaseSync, event: RecordedEvent): Described {
  const owner = (table: "audit_folders" | "audit_documents", column: string, id: string) =>
    (statement(db, `SELECT person_id FROM ${table} WHERE ${column} = ?`).get(id) as
      | { person_id: string }
      | undefined)
      ?.person_id ?? null;
  const doc = (id: string) =>
    statement(db, "SELECT person_id, name FROM audit_documents WHERE document_id = ?").get(id) as
      | { person_id: string; name: string }
      | undefined;
  const key = (id: string) =>
    statement(db, "SELECT * FROM audit_keys WHERE key_id = ?").get(id) as KeyRow | undefined;
  const keyRef = (row: KeyRow): KeyRef => ({
    key_id: row.key_id,
    name: row.name,
    masked: maskedKey(row.kind === "agent" ? "agent" : "personal", row.last4),
  });
  // Resolved only for the entries that show it (an MCP call names its key itself).
  const base = (personId: string | null, action: string, details: Record<string, unknown>): Described => ({
    person_id: personId,
    action,
    details,
    actor: resolveActor(db, event.metadata.actor),
  });
  const docBase = (documentId: string, action: string, details: Record<string, unknown> = {}): Described => {
    const d = doc(documentId);
    return base(d?.person_id ?? null, action, { document_id: documentId, file: d?.name ?? null, ...details });
  };
  switch (event.type) {
    case "PersonAdded": {
      const d = event.data;
      statement(db, "INSERT OR REPLACE INTO audit_people (person_id, name) VALUES (?, ?)").run(
        d.person_id,
        d.name,
      );
      return base(d.person_id, "person added", { name: d.name, email: d.email });
    }
    case "PersonPasswordSet":
      return base(event.data.person_id, "password set", {});
    case "PersonMadeAdministrator":
      return base(event.data.person_id, "made administrator", {});
    case "PersonAdministratorRemoved":
      return base(event.data.person_id, "administrator rights removed", {});
    case "PasswordLinkIssued": {
      const d = event.data;
      return base(d.person_id, d.purpose === "invite" ? "invitation made" : "password reset link made", {
        expires_at: d.expires_at,
      });
    }
    case "PasswordLinkUsed":
      return base(null, "password link used", {});
    case "FolderCreated": {
      const d = event.data;
      statement(
        db,
        "INSERT OR REPLACE INTO audit_folders (folder_id, person_id, parent_id, name) VALUES (?, ?, ?, ?)",
      )
        .run(d.folder_id, d.person_id, d.parent_id, d.name);
      return base(d.person_id, "folder created", {
        folder_id: d.folder_id,
        folder: folderPath(db, d.folder_id),
      });
    }
    case "FolderRenamed": {
      const d = event.data;
      const before = folderPath(db, d.folder_id);
      statement(db, "UPDATE audit_folders SET name = ? WHERE folder_id = ?").run(d.name, d.folder_id);
      return base(owner("audit_folders", "folder_id", d.folder_id), "folder renamed", {
        folder_id: d.folder_id,
        from: before,
        to: folderPath(db, d.folder_id),
      });
    }
    case "FolderMoved": {
      const d = event.data;
      const before = folderPath(db, d.folder_id);
      statement(db, "UPDATE audit_folders SET parent_id = ? WHERE folder_id = ?").run(
        d.parent_id,
        d.folder_id,
      );
      return base(owner("audit_folders", "folder_id", d.folder_id), "folder moved", {
        folder_id: d.folder_id,
        from: before,
        to: folderPath(db, d.folder_id),
      });
    }
    case "FolderDeleted": {
      const d = event.data;
      return base(owner("audit_folders", "folder_id", d.folder_id), "folder deleted", {
        folder_id: d.folder_id,
        folder: folderPath(db, d.folder_id),
      });
    }
    case "DocumentUploaded": {
      const d = event.data;
      statement(db, "INSERT OR REPLACE INTO audit_documents (document_id, person_id, name) VALUES (?, ?, ?)")
        .run(
          d.document_id,
          d.person_id,
          d.name,
        );
      return base(d.person_id, "document uploaded", {
        document_id: d.document_id,
        file: d.name,
        folder: d.folder_id === null ? null : folderPath(db, d.folder_id),
        type: d.type,
        size: d.size,
        sha256: d.sha256,
        preset: d.preset,
      });
    }
    case "DocumentMoved": {
      const d = event.data;
      return docBase(d.document_id, "document moved", {
        folder: d.folder_id === null ? null : folderPath(db, d.folder_id),
      });
    }
    case "DocumentDeleted":
      return docBase(event.data.document_id, "document deleted");
    case "ProcessingRequested":
      return docBase(event.data.document_id, "processing requested", { preset: event.data.preset });
    case "ProcessingStarted":
      return docBase(event.data.document_id, "processing started", { preset: event.data.preset });
    case "DocumentProcessed": {
      const d = event.data;
      return docBase(d.document_id, "document processed", {
        preset: d.preset,
        page_count: d.page_count,
        pages_estimated: d.pages_estimated,
        pages_to_view: d.pages.filter((page) => page.marked).map((page) => page.page),
        image_only_pages: d.pages.filter((page) => page.image_only).map((page) => page.page),
      });
    }
    case "TranscriptionProgressed":
      return docBase(event.data.document_id, "pages transcribed", {
        pages_done: event.data.pages_done,
        pages_total: event.data.pages_total,
      });
    case "ProcessingFailed":
      return docBase(event.data.document_id, "processing failed", {
        preset: event.data.preset,
        reason: event.data.reason,
      });
    case "ProcessingLeaseRenewed":
      return docBase(event.data.document_id, "processing lease renewed", { worker: event.data.worker });
    case "PdfCopyRequested":
      return docBase(event.data.document_id, "pdf copy requested");
    case "PdfCopyStarted":
      return docBase(event.data.document_id, "pdf copy started", { worker: event.data.worker });
    case "PdfCopyLeaseRenewed":
      return docBase(event.data.document_id, "pdf copy lease renewed", { worker: event.data.worker });
    case "PdfCopyMade":
      return docBase(event.data.document_id, "pdf copy made", {
        sha256: event.data.sha256,
        page_count: event.data.page_count,
      });
    case "PassagesEmbedded":
      return docBase(event.data.document_id, "passages embedded", {
        model: event.data.model,
        passages: event.data.passages,
      });
    case "PdfCopyFailed":
      return docBase(event.data.document_id, "pdf copy failed", { reason: event.data.reason });
    case "AgentKeyCreated": {
      const d = event.data;
      statement(
        db,
        "INSERT OR REPLACE INTO audit_keys (key_id, person_id, kind, name, last4) VALUES (?, ?, 'agent', ?, ?)",
      )
        .run(d.key_id, d.person_id, d.name, d.last4);
      rememberKeyName(db, d.person_id, d.name, d.key_id);
      const ref = { key_id: d.key_id, name: d.name, masked: maskedKey("agent", d.last4) };
      return {
        ...base(d.person_id, "key created", {
          key: d.name,
          masked_key: ref.masked,
          description: d.description,
          can_read: describeCanRead(db, d.can_read),
        }),
        key: ref,
      };
    }
    case "AgentKeyChanged": {
      const d = event.data;
      const row = key(d.key_id);
      const details: Record<string, unknown> = { key: row?.name ?? null };
      if (d.name !== undefined) {
        details.name = d.name;
        if (row) {
          statement(db, "UPDATE audit_keys SET name = ? WHERE key_id = ?").run(d.name, d.key_id);
          rememberKeyName(db, row.person_id, d.name, d.key_id);
        }
      }
      if (d.description !== undefined) details.description = d.description;
      if (d.can_read !== undefined) details.can_read = describeCanRead(db, d.can_read);
      return {
        ...base(row?.person_id ?? null, "key changed", details),
        ...(row ? { key: keyRef(row) } : {}),
      };
    }
    case "AgentKeyRolled": {
      const d = event.data;
      const row = key(d.key_id);
      const oldMasked = row ? keyRef(row).masked : null;
      if (row) statement(db, "UPDATE audit_keys SET last4 = ? WHERE key_id = ?").run(d.last4, d.key_id);
      const ref = row ? { key_id: d.key_id, name: row.name, masked: maskedKey("agent", d.last4) } : undefined;
      return {
        ...base(row?.person_id ?? null, "key rolled", {
          key: row?.name ?? null,
          masked_key: maskedKey("agent", d.last4),
          old_masked_key: oldMasked,
          old_expires_at: d.old_expires_at,
        }),
        ...(ref ? { key: ref } : {}),
      };
    }
    case "AgentKeyDeleted": {
      const row = key(event.data.key_id);
      return {
        ...base(row?.person_id ?? null, "key deleted", {
          key: row?.name ?? null,
          masked_key: row ? keyRef(row).masked : null,
        }),
        ...(row ? { key: keyRef(row) } : {}),
      };
    }
    case "PersonalKeyCreated": {
      const d = event.data;
      statement(
        db,
        "INSERT OR REPLACE INTO audit_keys (key_id, person_id, kind, name, last4) VALUES (?, ?, 'personal', NULL, ?)",
      ).run(d.key_id, d.person_id, d.last4);
      const ref = { key_id: d.key_id, name: null, masked: maskedKey("personal", d.last4) };
      return { ...base(d.person_id, "personal key created", { masked_key: ref.masked }), key: ref };
    }
    case "PersonalKeyDeleted": {
      const row = key(event.data.key_id);
      const ref = row ? keyRef(row) : undefined;
      return {
        ...base(row?.person_id ?? null, "personal key deleted", { masked_key: ref?.masked ?? null }),
        ...(ref ? { key: ref } : {}),
      };
    }
    case "LoginTokenIssued": {
      const d = event.data;
      statement(
        db,
        "INSERT OR REPLACE INTO audit_keys (key_id, person_id, kind, name, last4) VALUES (?, ?, 'login', NULL, '')",
      ).run(d.token_id, d.person_id);
      return base(d.person_id, "signed in", { expires_at: d.expires_at });
    }
    case "LoginTokenRevoked":
      return base(key(event.data.token_id)?.person_id ?? null, "signed out", {});
    case "OAuthClientRegistered":
      return base(null, "oauth app registered", {}); // no one's entry: an app registered itself
    case "OAuthGranted": {
      const d = event.data;
      statement(
        db,
        "INSERT OR REPLACE INTO audit_grants (grant_id, person_id, key_id, client_name) VALUES (?, ?, ?, ?)",
      ).run(d.grant_id, d.person_id, d.key_id, d.client_name);
      const row = key(d.key_id);
      return {
        ...base(d.person_id, "oauth app allowed", {
          app: d.client_name,
          metadata_url: d.metadata_url,
          redirect_host: hostOf(d.redirect_uri),
          key: row?.name ?? null,
          resource: d.resource,
        }),
        ...(row ? { key: keyRef(row) } : {}),
      };
    }
    case "OAuthTokensIssued":
    case "OAuthGrantRevoked": {
      const grant = statement(db, "SELECT * FROM audit_grants WHERE grant_id = ?").get(event.data.grant_id) as
        | { person_id: string; key_id: string; client_name: string }
        | undefined;
      if (!grant) return base(null, "", {});
      const row = key(grant.key_id);
      const details: Record<string, unknown> = { app: grant.client_name, key: row?.name ?? null };
      const action = event.type === "OAuthGrantRevoked"
        ? "oauth app revoked"
        : event.data.grant_type === "authorization_code"
        ? "oauth tokens issued"
        : "oauth tokens refreshed";
      if (event.type === "OAuthGrantRevoked") details.reason = event.data.reason;
      return { ...base(grant.person_id, action, details), ...(row ? { key: keyRef(row) } : {}) };
    }
    case "ConsoleSearched": {
      const d = event.data;
      return base(d.person_id, "console search", {
        query: d.query,
        results: d.results,
        ...(d.as_key_name ? { as_key: d.as_key_name } : {}),
        documents: [...new Set(d.hits.map((hit) => doc(hit.document_id)?.name ?? hit.document_id))],
      });
    }
    case "McpCalled": {
      const d = event.data;
      const action = d.action.startsWith("mcp ") ? d.action : `mcp ${d.tool}`;
      const app = typeof d.details.oauth_app === "string" ? d.details.oauth_app : null;
      return {
        person_id: d.person_id,
        action,
        details: { ...d.details, tool: d.tool, is_error: d.is_error, ...(d.shape ? { shape: d.shape } : {}) },
        actor: {
          label: `${d.masked_key} (${d.key_name})${app === null ? "" : ` through OAuth app “${app}”`}`,
          kind: "agent_key",
        },
        key: { key_id: d.key_id, name: d.key_name, masked: d.masked_key },
        end_user: d.end_user,
      };
    }
    default: {
      const unhandled: never = event;
      throw new Error(`Cannot describe event type "${(unhandled as RecordedEvent).type}"`);
    }
  }
}

function rememberKeyName(db: DatabaseSync, personId: string, name: string, keyId: string): void {
  statement(db, "INSERT OR IGNORE INTO audit_key_names (person_id, name, key_id) VALUES (?, ?, ?)").run(
    personId,
    name,
    keyId,
  );
}

/** Resolves `metadata.actor` (`person-…`, `key-…`, `system`, `cli`) to a label. */
function resolveActor(db: DatabaseSync, actor: string | undefined): { label: string; kind: ActorKind } {
  if (actor === undefined || actor === "") return { label: "unknown", kind: "unknown" };
  if (actor === "system" || actor === "cli") return { label: actor, kind: actor };
  const id = actor.replace(/^(person|key|token)[-:]/, "");
  const person = statement(db, "SELECT name FROM audit_people WHERE person_id = ?").get(id) as
    | { name: string }
    | undefined;
  if (person) return { label: person.name, kind: "person" };
  const key = statement(db, "SELECT * FROM audit_keys WHERE key_id = ?").get(id) as KeyRow | undefined;
  if (key?.kind === "agent") {
    return { label: `${maskedKey("agent", key.last4)} (${key.name})`, kind: "agent_key" };
  }
  if (key?.kind === "personal") return { label: maskedKey("personal", key.last4), kind: "personal_key" };
  if (key?.kind === "login") {
    const owner = statement(db, "SELECT name FROM audit_people WHERE person_id = ?").get(key.person_id) as
      | { name: string }
      | undefined;
    if (owner) return { label: owner.name, kind: "person" };
  }
  return { label: actor, kind: "unknown" };
}

/** The host of a URL, or the URL itself when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** A folder's path from its owner's root, such as `Energy outlooks/Basic`, as known now. */
function folderPath(db: DatabaseSync, folderId: string): string | null {
  const names: string[] = [];
  let id: string | null = folderId;
  const parentOf = statement(db, "SELECT parent_id, name FROM audit_folders WHERE folder_id = ?");
  for (let depth = 0; id !== null && depth < 256; depth++) {
    const row = parentOf.get(id) as { parent_id: string | null; name: string } | undefined;
    if (!row) return names.length === 0 ? null : names.reverse().join("/");
    names.push(row.name);
    id = row.parent_id;
  }
  return names.reverse().join("/");
}

function describeCanRead(db: DatabaseSync, canRead: CanRead): { folders: string[]; documents: string[] } {
  const file = statement(db, "SELECT name FROM audit_documents WHERE document_id = ?");
  return {
    folders: canRead.folders.map((id) => folderPath(db, id) ?? id),
    documents: canRead.documents.map((id) => (file.get(id) as { name: string } | undefined)?.name ?? id),
  };
}

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
  const where = auditWhere(db, filters);
  let sql = `SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE ${where.sql}`;
  const values = [...where.values];
  if (filters.before !== undefined) {
    sql += " AND position < ?";
    values.push(filters.before);
  }
  sql += " ORDER BY position DESC LIMIT ?";
  values.push(limit + 1);
  const rows = statement(db, sql).all(...values) as unknown as AuditRow[];
  const entries = rows.slice(0, limit).map(toAuditEntry);
  const last = entries[entries.length - 1];
  return rows.length > limit && last ? { entries, next_before: last.position } : { entries };
}

/** The position up to which the audit view has applied the log (0 before any). */
export function auditViewPosition(db: DatabaseSync): number {
  const row = statement(db, "SELECT position FROM projection_checkpoints WHERE name = ?").get(
    auditView.name,
  ) as
    | { position: number }
    | undefined;
  return row?.position ?? 0;
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
