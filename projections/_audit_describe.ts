/**
 * How the audit view reads one event: the entry's owner, action, details and
 * actor, and the look-up tables (people, folders, documents, keys, grants)
 * that later entries name things by. The action names and the keys of
 * `details` written here are the ones `audit_sentences.ts` turns into the
 * console's sentences.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { CanRead, RecordedEvent } from "../events/types.ts";
import { statement } from "./_statements.ts";

/** Who did what an entry records. */
export type ActorKind = "person" | "agent_key" | "personal_key" | "system" | "cli" | "unknown";

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

/** One event as an entry, before its position, hash and time are added. */
export interface Described {
  person_id: string | null;
  action: string;
  details: Record<string, unknown>;
  actor: { label: string; kind: ActorKind };
  key?: KeyRef;
  end_user?: string | null;
}

/** Updates the look-up tables for one event and describes it as an entry. */
export function describeEvent(db: DatabaseSync, event: RecordedEvent): Described {
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
