/**
 * OAuth grants: the apps registered with Sergo (RFC 7591), and every grant a
 * person gave an app — which key it acts as, its code and tokens by their
 * sha256 only, until when each works, and whether it was revoked. Deleting a
 * key ends its grants; rolling it does not.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { RecordedEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";
import { statement } from "./_statements.ts";

/** A registered app. */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  created_at: string;
}

/** A grant as stored. */
export interface OAuthGrant {
  grant_id: string;
  key_id: string;
  person_id: string;
  client_id: string;
  client_name: string;
  metadata_url: string | null;
  redirect_uri: string;
  resource: string;
  code_challenge: string;
  code_expires_at: string;
  /** Whether the code was exchanged already. */
  code_used: boolean;
  access_expires_at: string | null;
  refresh_expires_at: string | null;
  /** Null while it works; otherwise why it ended. */
  revoked: string | null;
  created_at: string;
  /** When a token was last issued (the code exchanged, or a refresh). */
  last_used_at: string | null;
  /** The grant stream's version, for the next append's expected version. */
  version: number;
}

/** The OAuth grants projection. */
export const oauthGrants: Projection = {
  name: "oauth_grants",
  handles: [
    "OAuthClientRegistered",
    "OAuthGranted",
    "OAuthTokensIssued",
    "OAuthGrantRevoked",
    "AgentKeyDeleted",
  ],
  tables: ["oauth_clients", "oauth_grants", "oauth_spent_refresh"],
  init(db: DatabaseSync): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS oauth_clients (
        client_id TEXT PRIMARY KEY, client_name TEXT NOT NULL, redirect_uris TEXT NOT NULL, created_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS oauth_grants (
        grant_id TEXT PRIMARY KEY, key_id TEXT NOT NULL, person_id TEXT NOT NULL, client_id TEXT NOT NULL,
        client_name TEXT NOT NULL, metadata_url TEXT, redirect_uri TEXT NOT NULL, resource TEXT NOT NULL,
        code_hash TEXT NOT NULL UNIQUE, code_challenge TEXT NOT NULL, code_expires_at TEXT NOT NULL,
        code_used INTEGER NOT NULL, access_hash TEXT UNIQUE, access_expires_at TEXT, refresh_hash TEXT UNIQUE,
        refresh_expires_at TEXT, revoked TEXT, created_at TEXT NOT NULL, last_used_at TEXT,
        version INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS oauth_grants_key ON oauth_grants (key_id, created_at);
      CREATE TABLE IF NOT EXISTS oauth_spent_refresh (hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL) WITHOUT ROWID;
    `);
  },
  apply(db: DatabaseSync, event: RecordedEvent): void {
    switch (event.type) {
      case "OAuthClientRegistered": {
        const d = event.data;
        statement(
          db,
          "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)",
        ).run(d.client_id, d.client_name, JSON.stringify(d.redirect_uris), event.metadata.time);
        return;
      }
      case "OAuthGranted": {
        const d = event.data;
        statement(
          db,
          `INSERT INTO oauth_grants (grant_id, key_id, person_id, client_id, client_name, metadata_url, redirect_uri,
             resource, code_hash, code_challenge, code_expires_at, code_used, revoked, created_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?)`,
        ).run(
          d.grant_id,
          d.key_id,
          d.person_id,
          d.client_id,
          d.client_name,
          d.metadata_url,
          d.redirect_uri,
          d.resource,
          d.code_hash,
          d.code_challenge,
          d.code_expires_at,
          event.metadata.time,
          event.stream_version,
        );
        return;
      }
      case "OAuthTokensIssued": {
        const d = event.data;
        statement(
          db,
          "INSERT OR IGNORE INTO oauth_spent_refresh (hash, grant_id) SELECT refresh_hash, grant_id FROM oauth_grants WHERE grant_id = ? AND refresh_hash IS NOT NULL",
        ).run(d.grant_id);
        statement(
          db,
          `UPDATE oauth_grants SET code_used = 1, access_hash = ?, access_expires_at = ?, refresh_hash = ?,
             refresh_expires_at = ?, last_used_at = ?, version = ? WHERE grant_id = ?`,
        ).run(
          d.access_hash,
          d.access_expires_at,
          d.refresh_hash,
          d.refresh_expires_at,
          event.metadata.time,
          event.stream_version,
          d.grant_id,
        );
        return;
      }
      case "OAuthGrantRevoked": {
        statement(
          db,
          "UPDATE oauth_grants SET revoked = ?, version = ? WHERE grant_id = ?",
        ).run(event.data.reason, event.stream_version, event.data.grant_id);
        return;
      }
      case "AgentKeyDeleted": {
        // The grant's own stream is unchanged: its tokens stop because its key is gone.
        statement(db, "UPDATE oauth_grants SET revoked = 'key_deleted' WHERE key_id = ? AND revoked IS NULL")
          .run(event.data.key_id);
        return;
      }
    }
  },
};

const GRANT_COLUMNS =
  `grant_id, key_id, person_id, client_id, client_name, metadata_url, redirect_uri, resource, code_challenge,
   code_expires_at, code_used, access_expires_at, refresh_expires_at, revoked, created_at, last_used_at, version`;

function toGrant(row: Record<string, unknown> | undefined): OAuthGrant | undefined {
  if (!row) return undefined;
  return { ...row, code_used: row.code_used === 1 } as unknown as OAuthGrant;
}

/** A registered app by id. */
export function getOAuthClient(db: DatabaseSync, clientId: string): OAuthClient | undefined {
  const row = statement(db, "SELECT * FROM oauth_clients WHERE client_id = ?").get(clientId) as
    | Record<string, unknown>
    | undefined;
  if (!row) return undefined;
  return { ...row, redirect_uris: JSON.parse(row.redirect_uris as string) } as OAuthClient;
}

/** The grant whose code has this sha256. */
export function grantByCode(db: DatabaseSync, codeHash: string): OAuthGrant | undefined {
  return toGrant(
    statement(db, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE code_hash = ?`).get(codeHash) as
      | Record<string, unknown>
      | undefined,
  );
}

/** The grant whose current access token has this sha256. */
export function grantByAccessToken(db: DatabaseSync, accessHash: string): OAuthGrant | undefined {
  return toGrant(
    statement(db, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE access_hash = ?`).get(accessHash) as
      | Record<string, unknown>
      | undefined,
  );
}

/** The grant whose current refresh token has this sha256. */
export function grantByRefreshToken(db: DatabaseSync, refreshHash: string): OAuthGrant | undefined {
  return toGrant(
    statement(db, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE refresh_hash = ?`).get(refreshHash) as
      | Record<string, unknown>
      | undefined,
  );
}

/** The grant a refresh token used to belong to before it was rotated away, if any. */
export function grantOfSpentRefresh(db: DatabaseSync, refreshHash: string): string | undefined {
  const row = statement(db, "SELECT grant_id FROM oauth_spent_refresh WHERE hash = ?").get(refreshHash) as
    | { grant_id: string }
    | undefined;
  return row?.grant_id;
}

/** A grant by id. */
export function getGrant(db: DatabaseSync, grantId: string): OAuthGrant | undefined {
  return toGrant(
    statement(db, `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE grant_id = ?`).get(grantId) as
      | Record<string, unknown>
      | undefined,
  );
}

/** The apps that can act as a key now: grants not revoked whose code was exchanged, newest first. */
export function activeGrantsOfKey(db: DatabaseSync, keyId: string): OAuthGrant[] {
  return (statement(
    db,
    `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE key_id = ? AND revoked IS NULL AND code_used = 1
     ORDER BY created_at DESC, grant_id`,
  ).all(keyId) as Record<string, unknown>[]).map((row) => toGrant(row)!);
}
