/**
 * The replay baseline: the same log read through the same store in the same
 * batches, and the same rows written into the same tables with the same
 * INSERTs the projections' `apply` functions do, by hand: no projector, no
 * per-projection dispatch or checkpoints, statements prepared once, and what
 * the projections look up in their tables (folder paths, a document's owner,
 * a person's name) kept in memory. Row values are computed by the same pure
 * functions (text folding, passage splitting, canonical JSON), because they
 * define what the rows are. Only the event types of the bench's log are
 * written; any other type stops it.
 *
 * The bench checks that its digest equals the replay's.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { canonicalJson } from "../events/hash_chain.ts";
import type { EventStore } from "../events/store.ts";
import type { RecordedEvent } from "../events/types.ts";
import type { Projection } from "../projections/projection.ts";
import { passagesOf } from "../projections/_passages.ts";
import { ftsColumns } from "../projections/search_index.ts";
import { passageScopeTokens } from "../src/analysis/scope.ts";

interface Folder {
  person_id: string;
  parent_id: string | null;
  name: string;
  path: string;
}

interface Doc {
  person_id: string;
  folder_id: string | null;
  name: string;
  type: string;
  processed: boolean;
}

/** A fresh database with the projections' tables, set up as the projector sets up its own. */
export function openProjectionTables(path: string, projections: readonly Projection[]): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = OFF");
  db.exec("BEGIN");
  for (const projection of projections) projection.init(db);
  db.exec("COMMIT");
  return db;
}

/** Writes the projections' rows for the whole log into a fresh database at `path`; returns the events written. */
export function rawReplay(
  store: EventStore,
  path: string,
  projections: readonly Projection[],
  batchSize: number,
): number {
  const db = openProjectionTables(path, projections);
  const writer = new RawWriter(db);
  let position = 0;
  let count = 0;
  for (;;) {
    const events = store.readFrom(position, batchSize);
    if (events.length === 0) break;
    db.exec("BEGIN IMMEDIATE");
    for (const event of events) writer.write(event);
    db.exec("COMMIT");
    position = events[events.length - 1]!.position;
    count += events.length;
  }
  db.close();
  return count;
}

class RawWriter {
  readonly #people = new Map<string, string>();
  readonly #folders = new Map<string, Folder>();
  readonly #docs = new Map<string, Doc>();
  readonly #s: Record<string, StatementSync>;

  constructor(db: DatabaseSync) {
    const sql = {
      person: "INSERT INTO cat_people (person_id, name, email) VALUES (?, ?, ?)",
      folder: "INSERT INTO cat_folders (folder_id, person_id, parent_id, name, path) VALUES (?, ?, ?, ?, ?)",
      document:
        `INSERT INTO cat_documents (document_id, person_id, folder_id, name, type, size, sha256, preset,
          uploaded_at, uploaded_position, status, pdf_copy_status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      started:
        `UPDATE cat_documents SET status = 'processing', preset = ?, failure_reason = NULL, processing_worker = ?,
          processing_lease_until = ? WHERE document_id = ?`,
      page: "INSERT INTO cat_pages (document_id, page, text, marked, image_only) VALUES (?, ?, ?, ?, ?)",
      chunk: "INSERT INTO cat_chunks (document_id, ord, page, section, text) VALUES (?, ?, ?, ?, ?)",
      processed:
        `UPDATE cat_documents SET status = 'searchable', failure_reason = NULL, preset = ?, page_count = ?,
          pages_estimated = ?, pages_to_view = ?, image_only_pages = ? WHERE document_id = ?`,
      keyAgent:
        "INSERT INTO key_agents (key_id, person_id, name, description, can_read, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      keyValue:
        "INSERT INTO key_values (hash, kind, id, person_id, last4, expires_at, current) VALUES (?, ?, ?, ?, ?, ?, 1)",
      searchDocument:
        "INSERT INTO search_documents (document_id, person_id, folder_id, name, type) VALUES (?, ?, ?, ?, ?)",
      passage:
        `INSERT INTO search_passages (document_id, person_id, folder_id, page, chunk, section, marked, text, notes,
          length, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      fts: "INSERT INTO search_fts (rowid, body, heading, notes, name, scope) VALUES (?, ?, ?, ?, ?, ?)",
      searchProcessed:
        `UPDATE search_documents SET pages_estimated = ?, image_only_pages = ?, passages = ?, tokens = ?
          WHERE document_id = ?`,
      entry:
        `INSERT INTO audit_entries (position, hash, time, time_utc, person_id, actor, actor_kind, key_id, key_name,
          masked_key, end_user, action, details, type, stream) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      auditPerson: "INSERT INTO audit_people (person_id, name) VALUES (?, ?)",
      auditFolder: "INSERT INTO audit_folders (folder_id, person_id, parent_id, name) VALUES (?, ?, ?, ?)",
      auditDocument: "INSERT INTO audit_documents (document_id, person_id, name) VALUES (?, ?, ?)",
      auditKey: "INSERT INTO audit_keys (key_id, person_id, kind, name, last4) VALUES (?, ?, 'agent', ?, ?)",
      auditKeyName: "INSERT INTO audit_key_names (person_id, name, key_id) VALUES (?, ?, ?)",
    };
    this.#s = Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]));
  }

  write(event: RecordedEvent): void {
    const s = this.#s;
    const entry = (
      personId: string,
      action: string,
      details: Record<string, unknown>,
      actor: { label: string; kind: string },
      key: { key_id: string; name: string | null; masked: string } | null = null,
      endUser: string | null = null,
    ) =>
      s.entry!.run(
        event.position,
        event.hash,
        event.metadata.time,
        new Date(Date.parse(event.metadata.time)).toISOString(),
        personId,
        actor.label,
        actor.kind,
        key?.key_id ?? null,
        key?.name ?? null,
        key?.masked ?? null,
        endUser ?? event.metadata.end_user ?? null,
        action,
        canonicalJson(details),
        event.type,
        event.stream,
      );
    switch (event.type) {
      case "PersonAdded": {
        const d = event.data;
        this.#people.set(d.person_id, d.name);
        s.person!.run(d.person_id, d.name, d.email);
        s.auditPerson!.run(d.person_id, d.name);
        entry(d.person_id, "person added", { name: d.name, email: d.email }, this.#actor(event));
        return;
      }
      case "FolderCreated": {
        const d = event.data;
        const parent = d.parent_id === null ? null : this.#folders.get(d.parent_id);
        const path = parent ? `${parent.path}/${d.name}` : d.name;
        this.#folders.set(d.folder_id, {
          person_id: d.person_id,
          parent_id: d.parent_id,
          name: d.name,
          path,
        });
        s.folder!.run(d.folder_id, d.person_id, d.parent_id, d.name, path);
        s.auditFolder!.run(d.folder_id, d.person_id, d.parent_id, d.name);
        entry(d.person_id, "folder created", { folder_id: d.folder_id, folder: path }, this.#actor(event));
        return;
      }
      case "AgentKeyCreated": {
        const d = event.data;
        s.keyAgent!.run(
          d.key_id,
          d.person_id,
          d.name,
          d.description,
          JSON.stringify(d.can_read),
          event.metadata.time,
        );
        s.keyValue!.run(d.key_hash, "agent", d.key_id, d.person_id, d.last4, null);
        s.auditKey!.run(d.key_id, d.person_id, d.name, d.last4);
        s.auditKeyName!.run(d.person_id, d.name, d.key_id);
        const masked = `sgk_s_…${d.last4}`;
        entry(
          d.person_id,
          "key created",
          {
            key: d.name,
            masked_key: masked,
            description: d.description,
            can_read: {
              folders: d.can_read.folders.map((id) => this.#folders.get(id)?.path ?? id),
              documents: d.can_read.documents.map((id) => this.#docs.get(id)?.name ?? id),
            },
          },
          this.#actor(event),
          { key_id: d.key_id, name: d.name, masked },
        );
        return;
      }
      case "DocumentUploaded": {
        const d = event.data;
        this.#docs.set(d.document_id, {
          person_id: d.person_id,
          folder_id: d.folder_id,
          name: d.name,
          type: d.type,
          processed: false,
        });
        s.document!.run(
          d.document_id,
          d.person_id,
          d.folder_id,
          d.name,
          d.type,
          d.size,
          d.sha256,
          d.preset,
          event.metadata.time,
          event.position,
          d.preset === "none" ? "not_indexed" : "processing",
          d.type === "pptx" || d.type === "docx" ? "pending" : "none",
        );
        s.searchDocument!.run(d.document_id, d.person_id, d.folder_id, d.name, d.type);
        s.auditDocument!.run(d.document_id, d.person_id, d.name);
        entry(d.person_id, "document uploaded", {
          document_id: d.document_id,
          file: d.name,
          folder: d.folder_id === null ? null : this.#folders.get(d.folder_id)?.path ?? null,
          type: d.type,
          size: d.size,
          sha256: d.sha256,
          preset: d.preset,
        }, this.#actor(event));
        return;
      }
      case "ProcessingStarted": {
        const d = event.data;
        s.started!.run(d.preset, d.worker ?? null, d.lease_until ?? null, d.document_id);
        const doc = this.#doc(d.document_id);
        entry(
          doc.person_id,
          "processing started",
          { document_id: d.document_id, file: doc.name, preset: d.preset },
          this.#actor(event),
        );
        return;
      }
      case "DocumentProcessed": {
        const d = event.data;
        const doc = this.#doc(d.document_id);
        if (doc.processed) {
          throw new Error(`Cannot write "${d.document_id}" twice: the raw baseline never replaces rows`);
        }
        doc.processed = true;
        let ord = 0;
        for (const page of d.pages) {
          s.page!.run(d.document_id, page.page, page.text, page.marked ? 1 : 0, page.image_only ? 1 : 0);
          for (const chunk of page.chunks ?? []) {
            s.chunk!.run(d.document_id, ord++, page.page, chunk.section, chunk.text);
          }
        }
        const marked = d.pages.filter((p) => p.marked).map((p) => p.page).sort((a, b) => a - b);
        const imageOnly = d.pages.filter((p) => p.image_only).map((p) => p.page).sort((a, b) => a - b);
        s.processed!.run(
          d.preset,
          d.page_count,
          d.pages_estimated ? 1 : 0,
          JSON.stringify(marked),
          JSON.stringify(imageOnly),
          d.document_id,
        );
        const tokens = passageScopeTokens(d.document_id, doc.folder_id, doc.person_id);
        let passageCount = 0;
        let tokenCount = 0;
        for (const draft of passagesOf(d.pages)) {
          const columns = ftsColumns(draft, doc);
          const id = s.passage!.run(
            d.document_id,
            doc.person_id,
            doc.folder_id,
            draft.page,
            draft.chunk,
            draft.section,
            draft.marked ? 1 : 0,
            draft.text,
            draft.notes,
            columns.length,
            columns.language,
          ).lastInsertRowid;
          s.fts!.run(id, columns.body, columns.heading, columns.notes, columns.name, tokens);
          passageCount++;
          tokenCount += columns.length;
        }
        s.searchProcessed!.run(
          d.pages_estimated ? 1 : 0,
          JSON.stringify(d.pages.filter((page) => page.image_only).map((page) => page.page)),
          passageCount,
          tokenCount,
          d.document_id,
        );
        entry(doc.person_id, "document processed", {
          document_id: d.document_id,
          file: doc.name,
          preset: d.preset,
          page_count: d.page_count,
          pages_estimated: d.pages_estimated,
          pages_to_view: d.pages.filter((page) => page.marked).map((page) => page.page),
          image_only_pages: d.pages.filter((page) => page.image_only).map((page) => page.page),
        }, this.#actor(event));
        return;
      }
      case "McpCalled": {
        const d = event.data;
        entry(
          d.person_id,
          d.action.startsWith("mcp ") ? d.action : `mcp ${d.tool}`,
          { ...d.details, tool: d.tool, is_error: d.is_error },
          { label: `${d.masked_key} (${d.key_name})`, kind: "agent_key" },
          { key_id: d.key_id, name: d.key_name, masked: d.masked_key },
          d.end_user,
        );
        return;
      }
      default:
        throw new Error(
          `Cannot write "${event.type}" at ${event.position}: the raw baseline does not know it`,
        );
    }
  }

  #doc(id: string): Doc {
    const doc = this.#docs.get(id);
    if (!doc) throw new Error(`Cannot find document "${id}" in the raw baseline`);
    return doc;
  }

  /** The actor label the audit view shows: people by name; `system` and `cli` as they are. */
  #actor(event: RecordedEvent): { label: string; kind: string } {
    const actor = event.metadata.actor;
    if (actor === undefined || actor === "") return { label: "unknown", kind: "unknown" };
    if (actor === "system" || actor === "cli") return { label: actor, kind: actor };
    const name = this.#people.get(actor.replace(/^(person|key|token)[-:]/, ""));
    if (name === undefined) throw new Error(`Cannot name actor "${actor}" in the raw baseline`);
    return { label: name, kind: "person" };
  }
}
