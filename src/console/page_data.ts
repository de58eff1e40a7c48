/**
 * What the console's pages read from the projections, shaped for them.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { resolve } from "node:path";
import { expandFolders, getDocument, getFolder, listDocuments } from "../../projections/catalogue.ts";
import { type AgentKey, oldValues } from "../../projections/key_scopes.ts";
import { agentKeyUsageFrom } from "../../projections/audit_view.ts";
import { maskKey } from "../domain/key_format.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { KeyView, PickableDocument, StdioPaths } from "./pages/keys_page.tsx";

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
export async function keyView(services: ConsoleDeps, key: AgentKey, rootLabel: string): Promise<KeyView> {
  const db = services.app.db;
  services.app.settle(); // its usage counts every call committed so far
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
    usage: await agentKeyUsageFrom(db, services.app.auditCalls, key, services.app.now()),
  };
}
