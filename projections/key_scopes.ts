/**
 * Key scopes: agent keys with their settings and what they can read, every
 * key value by its sha256 (with the expiry of old values after a roll),
 * personal keys and login tokens (a new password or removed administrator
 * rights end the person's earlier ones).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { CanRead, RecordedEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";
import { statement } from "./_statements.ts";

/** What a credential is. */
export type CredentialKind = "agent" | "personal" | "login";

/** An agent key's settings. */
export interface AgentKey {
  key_id: string;
  person_id: string;
  name: string;
  description: string;
  can_read: CanRead;
  created_at: string;
  /** The last 4 characters of the current value. */
  last4: string;
}

/** A credential found by its hash. */
export interface Credential {
  kind: CredentialKind;
  /** The key or token id. */
  id: string;
  person_id: string;
  last4: string;
  /** When this value stops working; null when it does not expire. */
  expires_at: string | null;
}

/** A personal key as listed. */
export interface PersonalKey {
  key_id: string;
  person_id: string;
  last4: string;
  created_at: string;
}

/** An old value of an agent key still in its grace time. */
export interface OldValue {
  last4: string;
  expires_at: string;
}

/** The key scopes projection. */
export const keyScopes: Projection = {
  name: "key_scopes",
  handles: [
    "AgentKeyCreated",
    "AgentKeyChanged",
    "AgentKeyRolled",
    "AgentKeyDeleted",
    "PersonalKeyCreated",
    "PersonalKeyDeleted",
    "LoginTokenIssued",
    "LoginTokenRevoked",
    "PersonPasswordSet",
    "PersonAdministratorRemoved",
  ],
  tables: ["key_agents", "key_values", "key_personal"],
  init(db: DatabaseSync): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS key_agents (
        key_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
        can_read TEXT NOT NULL, created_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS key_agents_person ON key_agents (person_id, name);
      CREATE TABLE IF NOT EXISTS key_values (
        hash TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL, person_id TEXT NOT NULL,
        last4 TEXT NOT NULL, expires_at TEXT, current INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS key_values_id ON key_values (id);
      CREATE TABLE IF NOT EXISTS key_personal (
        key_id TEXT PRIMARY KEY, person_id TEXT NOT NULL, last4 TEXT NOT NULL, created_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    const insertValue = (
      hash: string,
      kind: CredentialKind,
      id: string,
      personId: string,
      last4: string,
      expiresAt: string | null,
    ) =>
      statement(
        db,
        "INSERT INTO key_values (hash, kind, id, person_id, last4, expires_at, current) VALUES (?, ?, ?, ?, ?, ?, 1)",
      ).run(hash, kind, id, personId, last4, expiresAt);
    switch (event.type) {
      case "AgentKeyCreated": {
        const d = event.data;
        statement(
          db,
          "INSERT INTO key_agents (key_id, person_id, name, description, can_read, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        ).run(d.key_id, d.person_id, d.name, d.description, JSON.stringify(d.can_read), event.metadata.time);
        insertValue(d.key_hash, "agent", d.key_id, d.person_id, d.last4, null);
        return;
      }
      case "AgentKeyChanged": {
        const d = event.data;
        if (d.name !== undefined) {
          statement(db, "UPDATE key_agents SET name = ? WHERE key_id = ?").run(d.name, d.key_id);
        }
        if (d.description !== undefined) {
          statement(db, "UPDATE key_agents SET description = ? WHERE key_id = ?").run(
            d.description,
            d.key_id,
          );
        }
        if (d.can_read !== undefined) {
          statement(db, "UPDATE key_agents SET can_read = ? WHERE key_id = ?").run(
            JSON.stringify(d.can_read),
            d.key_id,
          );
        }
        return;
      }
      case "AgentKeyRolled": {
        const d = event.data;
        const key = statement(db, "SELECT person_id FROM key_agents WHERE key_id = ?").get(d.key_id) as
          | { person_id: string }
          | undefined;
        if (!key) return;
        statement(db, "UPDATE key_values SET expires_at = ?, current = 0 WHERE id = ? AND current = 1").run(
          d.old_expires_at,
          d.key_id,
        );
        insertValue(d.key_hash, "agent", d.key_id, key.person_id, d.last4, null);
        return;
      }
      case "AgentKeyDeleted":
        statement(db, "DELETE FROM key_agents WHERE key_id = ?").run(event.data.key_id);
        statement(db, "DELETE FROM key_values WHERE id = ?").run(event.data.key_id);
        return;
      case "PersonalKeyCreated": {
        const d = event.data;
        statement(db, "INSERT INTO key_personal (key_id, person_id, last4, created_at) VALUES (?, ?, ?, ?)")
          .run(
            d.key_id,
            d.person_id,
            d.last4,
            event.metadata.time,
          );
        insertValue(d.key_hash, "personal", d.key_id, d.person_id, d.last4, null);
        return;
      }
      case "PersonalKeyDeleted":
        statement(db, "DELETE FROM key_personal WHERE key_id = ?").run(event.data.key_id);
        statement(db, "DELETE FROM key_values WHERE id = ?").run(event.data.key_id);
        return;
      case "LoginTokenIssued": {
        const d = event.data;
        insertValue(d.token_hash, "login", d.token_id, d.person_id, d.token_hash.slice(-4), d.expires_at);
        return;
      }
      case "LoginTokenRevoked":
        statement(db, "DELETE FROM key_values WHERE id = ?").run(event.data.token_id);
        return;
      case "PersonPasswordSet":
      case "PersonAdministratorRemoved":
        // A new password, or rights taken away, ends every session signed in before it (a stolen
        // one with them); a sign-in after it, such as the one a reset link makes, comes later in the log.
        statement(db, "DELETE FROM key_values WHERE kind = 'login' AND person_id = ?").run(
          event.data.person_id,
        );
        return;
    }
  },
};

/** Finds the credential with this sha256, if it exists and has not expired at `now`. */
export function findCredential(db: DatabaseSync, hash: string, now: Date): Credential | undefined {
  const row = credentialByHash(db, hash);
  return row && usableAt(row, now) ? row : undefined;
}

/** The credential with this sha256, expired or not. */
export function credentialByHash(db: DatabaseSync, hash: string): Credential | undefined {
  return statement(db, "SELECT kind, id, person_id, last4, expires_at FROM key_values WHERE hash = ?")
    .get(hash) as Credential | undefined;
}

/** Whether a credential still works at `now` (an old value of a rolled key works until it expires). */
export function usableAt(credential: Credential, now: Date): boolean {
  return credential.expires_at === null || Date.parse(credential.expires_at) > now.getTime();
}

interface RawAgentKey extends Omit<AgentKey, "can_read" | "last4"> {
  can_read: string;
  last4: string | null;
}

function toAgentKey(raw: RawAgentKey): AgentKey {
  return { ...raw, can_read: JSON.parse(raw.can_read), last4: raw.last4 ?? "" };
}

const AGENT_SELECT =
  `SELECT a.*, (SELECT last4 FROM key_values v WHERE v.id = a.key_id AND v.current = 1) AS last4
  FROM key_agents a`;

/** An agent key by id. */
export function getAgentKey(db: DatabaseSync, keyId: string): AgentKey | undefined {
  const raw = statement(db, `${AGENT_SELECT} WHERE a.key_id = ?`).get(keyId) as RawAgentKey | undefined;
  return raw ? toAgentKey(raw) : undefined;
}

/** A person's agent key by name. */
export function getAgentKeyByName(db: DatabaseSync, personId: string, name: string): AgentKey | undefined {
  const raw = statement(db, `${AGENT_SELECT} WHERE a.person_id = ? AND a.name = ?`).get(personId, name) as
    | RawAgentKey
    | undefined;
  return raw ? toAgentKey(raw) : undefined;
}

/** A person's agent keys, by name. */
export function listAgentKeys(db: DatabaseSync, personId: string): AgentKey[] {
  const rows = statement(db, `${AGENT_SELECT} WHERE a.person_id = ? ORDER BY a.name`).all(
    personId,
  ) as unknown as RawAgentKey[];
  return rows.map(toAgentKey);
}

/** An agent key's old values that still work at `now`. */
export function oldValues(db: DatabaseSync, keyId: string, now: Date): OldValue[] {
  const rows = statement(
    db,
    "SELECT last4, expires_at FROM key_values WHERE id = ? AND current = 0 ORDER BY expires_at",
  ).all(keyId) as unknown as OldValue[];
  return rows.filter((row) => Date.parse(row.expires_at) > now.getTime());
}

/** The expiry of the current old value (rolled before) of a key, if one is still in its grace time. */
export function personalKeys(db: DatabaseSync, personId: string): PersonalKey[] {
  return statement(db, "SELECT * FROM key_personal WHERE person_id = ? ORDER BY created_at, key_id").all(
    personId,
  ) as unknown as PersonalKey[];
}

/** Login tokens of a person that still work at `now`. */
export function loginTokens(
  db: DatabaseSync,
  personId: string,
  now: Date,
): Array<{ id: string; expires_at: string }> {
  const rows = statement(
    db,
    "SELECT id, expires_at FROM key_values WHERE kind = 'login' AND person_id = ? ORDER BY expires_at",
  ).all(personId) as Array<{ id: string; expires_at: string }>;
  return rows.filter((row) => Date.parse(row.expires_at) > now.getTime());
}
