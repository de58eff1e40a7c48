/**
 * Audit export: a person's audit entries (optionally by time range and key)
 * written as canonical JSONL or CSV, with a signed manifest. Streams in
 * constant memory: the log is read a page at a time and the checkpoint tree
 * lives in a temporary SQLite file.
 *
 * Each record carries its event's hash inputs, so its hash recomputes; where
 * the next exported record does not continue its chain, it also carries an
 * inclusion proof against the signed checkpoint (a Merkle root over every
 * event hash up to the head). A contiguous export thus needs one proof at
 * most; a filtered one needs one per run of consecutive events.
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import { hostname } from "node:os";
import type { DatabaseSync } from "node:sqlite";
import { canonicalJson } from "../../events/hash_chain.ts";
import type { EventStore } from "../../events/store.ts";
import type { AuditCalls } from "../../events/postgres/audit_calls.ts";
import {
  auditRangeFrom,
  type AuditRow,
  auditViewPosition,
  toAuditEntry,
} from "../../projections/audit_view.ts";
import { type LogRow, type LogSource, sqliteLogSource, storeLogSource } from "./_log_source.ts";
import {
  canonicalRecordParts,
  CSV_HEADER,
  csvRowBody,
  type ExportRecord,
  FIRST_LINK,
  FORMAT,
  FORMAT_VERSION,
  type Manifest,
  redact,
  sha256Hex,
  signedBytes,
} from "./_record.ts";
import { MerkleRootBuilder, MerkleTreeFile } from "./merkle.ts";
import { ensureSigningKey } from "./signing_key.ts";

export type { Manifest } from "./_record.ts";

/** Options of {@linkcode exportAudit}. */
export interface ExportOptions {
  /** The SQLite event log's path (fastest), or … */
  eventsDbPath?: string;
  /** … any event store. */
  store?: EventStore;
  /** The projections database holding the audit view. */
  projectionsDb: DatabaseSync;
  /** The data directory holding the signing key. */
  dataDir: string;
  /** Whose entries. */
  personId: string;
  /** The person's email, recorded in the manifest's filters. */
  personEmail?: string;
  /** Earliest time, inclusive (ISO 8601). */
  from?: string;
  /** Latest time, inclusive (ISO 8601). */
  to?: string;
  /** Only entries of the person's keys that have had this name. */
  keyName?: string;
  format: "jsonl" | "csv";
  /**
   * Where to write: a file path (a CSV's manifest goes to `PATH.manifest.json`)
   * or a stream (for CSV the caller stores the returned manifest).
   */
  out: WritableStream<Uint8Array> | string;
  /** Called every few thousand records and at the end with records written and the total. */
  onProgress?: (done: number, total: number) => void;
  /** Names the install in the manifest; default `sergo@HOSTNAME`. */
  origin?: string;
  /** The clock, for `generated_at`. */
  now?: () => Date;
}

const PAGE = 1000;

/** Writes an audit export and returns its signed manifest. */
export async function exportAudit(options: ExportOptions): Promise<Manifest> {
  if (!options.eventsDbPath && !options.store) throw new Error("Cannot export: give eventsDbPath or store");
  const key = await ensureSigningKey(options.dataDir);
  // The shared log's copy leaves other replicas' MCP calls out; the export reads every event's hash and its
  // records' rows, so they are fetched from the database first (events/postgres/local_copy.ts).
  if (!options.eventsDbPath) await options.store!.complete?.();
  const source: LogSource = options.eventsDbPath
    ? sqliteLogSource(options.eventsDbPath)
    : storeLogSource(options.store!);
  const sink = await openSink(options.out);
  let tree: MerkleTreeFile | null = null;
  try {
    const db = options.projectionsDb;
    const headPosition = Math.min(source.head().position, auditViewPosition(db));
    const head = { position: headPosition, hash: source.hashAt(headPosition) };
    const builder = new MerkleRootBuilder();
    for (const hash of source.hashes(headPosition)) builder.push(hash);
    const root = builder.root();

    // The shared log's audit view reads its MCP calls from the database (projections/audit_view.ts).
    const calls = options.store && "auditCalls" in options.store
      ? (options.store as { auditCalls: AuditCalls }).auditCalls
      : null;
    const range = await auditRangeFrom(db, calls, {
      personId: options.personId,
      from: options.from,
      to: options.to,
      keyName: options.keyName,
    }, headPosition);
    const total = range.total;

    const digest: Hash = createHash("sha256");
    const write = async (text: string) => {
      digest.update(text);
      await sink.write(text);
    };
    if (options.format === "csv") await write(CSV_HEADER);

    let seq = 0;
    let link = FIRST_LINK;
    let first: ExportRecord | null = null;
    let last: Omit<ExportRecord, "link"> | null = null;
    let pending: Omit<ExportRecord, "seq" | "link" | "proof"> | null = null;
    const flush = async (record: Omit<ExportRecord, "seq" | "link" | "proof">, next: typeof pending) => {
      const continues = next !== null && next.position === record.position + 1 && next.redacted === undefined;
      const needsProof = !continues && record.position !== head.position;
      if (needsProof) tree ??= MerkleTreeFile.build(source.hashes(headPosition));
      const body: Omit<ExportRecord, "link"> = {
        ...record,
        seq: ++seq,
        ...(needsProof ? { proof: tree!.proof(record.position - 1) } : {}),
      };
      if (options.format === "jsonl") {
        const { head: start, tail } = canonicalRecordParts(body);
        link = sha256Hex(link + start + tail);
        await write(`${start},"link":"${link}"${tail}\n`);
        first ??= { ...body, link };
      } else {
        const row = csvRowBody(body);
        link = sha256Hex(link + row);
        await write(`${row},${link}\r\n`);
        first ??= { ...body, link };
      }
      last = body;
      if (seq % 5000 === 0) options.onProgress?.(seq, total);
    };

    let after = 0;
    for (;;) {
      const rows = await range.rowsAfter(after, PAGE);
      if (rows.length === 0) break;
      const events = source.rows(rows.map((row) => row.position));
      for (let i = 0; i < rows.length; i++) {
        const record = toRecord(rows[i]!, events[i]!);
        if (pending) await flush(pending, record);
        pending = record;
      }
      after = rows[rows.length - 1]!.position;
    }
    if (pending) await flush(pending, null);
    options.onProgress?.(seq, total);

    const firstRecord = first as ExportRecord | null;
    const lastRecord = last as Omit<ExportRecord, "link"> | null;
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      file_format: options.format,
      origin: options.origin ?? `sergo@${hostname()}`,
      generated_at: (options.now?.() ?? new Date()).toISOString(),
      filters: {
        person_id: options.personId,
        person_email: options.personEmail ?? null,
        from: options.from ?? null,
        to: options.to ?? null,
        key_name: options.keyName ?? null,
      },
      count: seq,
      range: firstRecord && lastRecord
        ? {
          first_position: firstRecord.position,
          last_position: lastRecord.position,
          first_time: firstRecord.audit.time,
          last_time: lastRecord.audit.time,
        }
        : null,
      records_sha256: options.format === "jsonl" ? digest.digest("hex") : "",
      last_link: link,
      hash_before_first: firstRecord?.prev_hash ?? null,
      chain_head: head,
      checkpoint: { tree_size: headPosition, root },
      public_key: key.publicKeyPem,
    };
    if (options.format === "csv") manifest.records_sha256 = digest.digest("hex");
    manifest.signature = {
      algorithm: "Ed25519",
      key_fingerprint: key.fingerprint,
      value: key.sign(signedBytes(manifest)),
    };
    if (options.format === "jsonl") await sink.write(canonicalJson(manifest) + "\n");
    await sink.close();
    if (options.format === "csv" && typeof options.out === "string") {
      await Deno.writeTextFile(`${options.out}.manifest.json`, JSON.stringify(manifest, null, 2) + "\n");
    }
    return manifest;
  } catch (error) {
    await sink.abort(error);
    throw error;
  } finally {
    (tree as MerkleTreeFile | null)?.close();
    source.close();
  }
}

function toRecord(row: AuditRow, event: LogRow): Omit<ExportRecord, "seq" | "link" | "proof"> {
  if (event.position !== row.position || event.hash !== row.hash) {
    throw new Error(`Cannot export event ${row.position}: the audit view and the log disagree on its hash`);
  }
  const entry = toAuditEntry(row);
  const { data, redacted } = redact(event.type, event.data);
  return {
    position: event.position,
    stream: event.stream,
    stream_version: event.stream_version,
    type: event.type,
    schema_version: event.schema_version,
    data,
    metadata: event.metadata,
    prev_hash: event.prev_hash,
    hash: event.hash,
    audit: {
      time: entry.time,
      actor: entry.actor,
      actor_kind: entry.actor_kind,
      key_name: entry.key_name,
      masked_key: entry.masked_key,
      end_user: entry.end_user,
      action: entry.action,
      details: entry.details,
    },
    ...(redacted.length > 0 ? { redacted } : {}),
  };
}

interface Sink {
  write(text: string): Promise<void>;
  close(): Promise<void>;
  abort(reason: unknown): Promise<void>;
}

/** A buffered writer over a file path or a stream. */
async function openSink(out: WritableStream<Uint8Array> | string): Promise<Sink> {
  const encoder = new TextEncoder();
  let chunks: string[] = [];
  let size = 0;
  let writeBytes: (bytes: Uint8Array) => Promise<void>;
  let finish: () => Promise<void>;
  let fail: (reason: unknown) => Promise<void>;
  if (typeof out === "string") {
    const file = await Deno.open(out, { write: true, create: true, truncate: true });
    const writer = file.writable.getWriter();
    writeBytes = (bytes) => writer.write(bytes);
    finish = () => writer.close();
    fail = async (reason) => {
      await writer.abort(reason).catch(() => {});
    };
  } else {
    const writer = out.getWriter();
    writeBytes = async (bytes) => {
      await writer.ready;
      await writer.write(bytes);
    };
    finish = () => writer.close();
    fail = async (reason) => {
      await writer.abort(reason).catch(() => {});
    };
  }
  const drain = async () => {
    if (size === 0) return;
    const bytes = encoder.encode(chunks.join(""));
    chunks = [];
    size = 0;
    await writeBytes(bytes);
  };
  return {
    async write(text) {
      chunks.push(text);
      size += text.length;
      if (size >= 1 << 16) await drain();
    },
    async close() {
      await drain();
      await finish();
    },
    async abort(reason) {
      chunks = [];
      size = 0;
      await fail(reason);
    },
  };
}
