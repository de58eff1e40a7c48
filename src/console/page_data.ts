/**
 * What the console's pages read from the projections, shaped for them.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { expandFolders, getDocument, getFolder, listDocuments } from "../../projections/catalogue.ts";
import { type AgentKey, oldValues } from "../../projections/key_scopes.ts";
import { maskKey } from "../auth/key_format.ts";
import type { Services } from "../services.ts";
import type { KeyView, PickableDocument } from "./pages/keys_page.tsx";

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
export function keyView(services: Services, key: AgentKey, rootLabel: string): KeyView {
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
  };
}
