/**
 * What the console's pages read from the projections, shaped for them.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { resolve } from "node:path";
import { expandFolders, getDocument, getFolder, listDocuments } from "../../projections/catalogue.ts";
import { type AgentKey, oldValues } from "../../projections/key_scopes.ts";
import { maskKey } from "../domain/key_format.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { KeyUsage, KeyView, PickableDocument, StdioPaths } from "./pages/keys_page.tsx";
import { statement } from "../../projections/_statements.ts";

/**
 * The absolute paths of the stdio snippet (deno, deno.json, main.ts, the data
 * directory), or undefined when the log is on PostgreSQL (the data is not in
 * one folder of this machine).
 */
export function stdioPaths(services: ConsoleDeps): StdioPaths | undefined {
  if (services.config.databaseUrl) return undefined;
  const root = new URL("../../", import.meta.url);
  return {
    deno: Deno.execPath(),
    config: new URL("deno.json", root).pathname,
    main: new URL("main.ts", root).pathname,
    data: resolve(services.config.dataDir),
  };
}

/** The most documents offered when picking what a key can read. */
const MAX_PICKABLE = 2000;

/** A folder with every folder inside it, for listing its documents. */
export function documentFolders(db: DatabaseSync, folderId: string): string[] {
  return expandFolders(db, [folderId]);
}

/** A person's documents, to pick what a key can read. */
export function pickableDocuments(db: DatabaseSync, personId: string): PickableDocument[] {
  const { items } = listDocuments(db, { personId, folderIds: null, documentIds: [] }, {
    limit: MAX_PICKABLE,
    offset: 0,
  });
  return items
    .map((d) => ({ id: d.document_id, name: d.name, folder_id: d.folder_id }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** An agent key with its masked value, what it reads by name, and its old values in their grace time. */
export function keyView(services: ConsoleDeps, key: AgentKey, rootLabel: string): KeyView {
  const db = services.app.db;
  return {
    key,
    masked: maskKey("agent", key.last4),
    canRead: {
      folders: key.can_read.folders.map((id) => {
        const folder = getFolder(db, id);
        return folder ? `${rootLabel}/${folder.path}` : `(deleted folder ${id})`;
      }),
      documents: key.can_read.documents.map((id) => getDocument(db, id)?.name ?? `(deleted document ${id})`),
    },
    oldValues: oldValues(db, key.key_id, services.app.now()).map((v) => ({
      ...v,
      masked: maskKey("agent", v.last4),
    })),
    usage: keyUsage(db, key, services.app.now()),
  };
}

/** How much a key was used, from its audit entries (its MCP calls). */
export function keyUsage(db: DatabaseSync, key: AgentKey, now: Date): KeyUsage {
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

const DAY_MS = 24 * 3600_000;
