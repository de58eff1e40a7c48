/**
 * The shape of an exported audit record and its manifest, shared by export and
 * verify: canonical JSONL records, CSV rows, the per-record link chain, and
 * what is redacted.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../../events/hash_chain.ts";
import type { AuditEntry } from "../../projections/audit_view.ts";

/** The export format this code writes and reads. */
export const FORMAT = "sergo-audit-export";
/** Its version. */
export const FORMAT_VERSION = 1;
/** The link before the first record. */
export const FIRST_LINK = "0".repeat(64);

/** The audit summary fields of a record (not covered by the event hash; covered by `link`). */
export type AuditSummary = Pick<
  AuditEntry,
  "time" | "actor" | "actor_kind" | "key_name" | "masked_key" | "end_user" | "action" | "details"
>;

/** One exported record, as written on one JSONL line (keys in canonical order). */
export interface ExportRecord {
  seq: number;
  position: number;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  prev_hash: string;
  hash: string;
  audit: AuditSummary;
  /** Data fields replaced by `"[redacted]"`; the event hash then cannot be recomputed. */
  redacted?: string[];
  /** Audit path of this event in the checkpoint tree, when its chain does not continue in the export. */
  proof?: string[];
  /** sha256(link of the record before ‖ canonical record without `link`). */
  link: string;
}

/** The manifest: written as the last JSONL line, or beside a CSV file. */
export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  file_format: "jsonl" | "csv";
  origin: string;
  generated_at: string;
  filters: {
    person_id: string;
    person_email: string | null;
    from: string | null;
    to: string | null;
    key_name: string | null;
  };
  count: number;
  range: { first_position: number; last_position: number; first_time: string; last_time: string } | null;
  /** sha256 of the record lines (JSONL) or of the whole CSV file. */
  records_sha256: string;
  /** The link of the last record. */
  last_link: string;
  /** prev_hash of the first record (null when there are none). */
  hash_before_first: string | null;
  /** The log's head when the export was made; records come from positions up to it. */
  chain_head: { position: number; hash: string };
  /** Merkle tree over every event hash from 1 to `chain_head.position` (RFC 6962 shape). */
  checkpoint: { tree_size: number; root: string };
  /** The signer's public key (PEM); check it against the install's own. */
  public_key: string;
  signature?: { algorithm: "Ed25519"; key_fingerprint: string; value: string };
}

/** Data fields that hold secrets' hashes and never leave the install. */
const REDACT: Readonly<Record<string, readonly string[]>> = {
  PersonPasswordSet: ["password_hash"],
  PasswordLinkIssued: ["token_hash"],
  AgentKeyCreated: ["key_hash"],
  AgentKeyRolled: ["key_hash"],
  PersonalKeyCreated: ["key_hash"],
  LoginTokenIssued: ["token_hash"],
  OAuthGranted: ["code_hash", "code_challenge"],
  OAuthTokensIssued: ["access_hash", "refresh_hash"],
  PassagesEmbedded: ["vectors"], // numbers made from the text: content, not trail
};

/**
 * Data fields that hold document content, replaced by what proves which content
 * it was: each page of a processing result keeps its number, marks and how it
 * was read, and its text becomes `text_sha256` with its length in characters.
 */
const CONTENT: Readonly<Record<string, Readonly<Record<string, (value: unknown) => unknown>>>> = {
  DocumentProcessed: {
    pages: (pages) =>
      Array.isArray(pages)
        ? pages.map((page: Record<string, unknown>) => {
          const { text, chunks: _chunks, notes, ...rest } = page;
          const body = typeof text === "string" ? text : "";
          return {
            ...rest,
            text_sha256: sha256Hex(body),
            characters: [...body].length,
            ...(typeof notes === "string" ? { notes_sha256: sha256Hex(notes) } : {}),
          };
        })
        : "[redacted]",
  },
};

/**
 * Replaces the fields of an event's data that never leave the install (secrets'
 * hashes, document content); returns the names replaced. Such a record's event
 * hash cannot be recomputed: its inclusion proof and link prove it instead.
 */
export function redact(type: string, data: unknown): { data: unknown; redacted: string[] } {
  const fields = REDACT[type] ?? [];
  const content = CONTENT[type] ?? {};
  if (typeof data !== "object" || data === null) return { data, redacted: [] };
  const copy: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  const redacted: string[] = [];
  for (const field of fields) {
    if (field in copy) {
      copy[field] = "[redacted]";
      redacted.push(field);
    }
  }
  for (const [field, replace] of Object.entries(content)) {
    if (field in copy) {
      copy[field] = replace(copy[field]);
      redacted.push(field);
    }
  }
  return { data: copy, redacted };
}

/** sha256 hex of text. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The link of a record: sha256(previous link ‖ canonical record without `link`). */
export function recordLink(previous: string, body: Omit<ExportRecord, "link">): string {
  const { head, tail } = canonicalRecordParts(body);
  return sha256Hex(previous + head + tail);
}

/**
 * A record's canonical JSON in two parts, split where `link` goes (keys sort
 * `hash` < `link` < `metadata`), so the line and its link share one
 * serialisation: `head + tail` is the body, `head + ',"link":…' + tail` the line.
 */
export function canonicalRecordParts(body: Omit<ExportRecord, "link">): { head: string; tail: string } {
  const head = `{"audit":${canonicalJson(body.audit)},"data":${canonicalJson(body.data)},"hash":${
    JSON.stringify(body.hash)
  }`;
  const tail = `,"metadata":${canonicalJson(body.metadata)},"position":${
    canonicalJson(body.position)
  },"prev_hash":${JSON.stringify(body.prev_hash)}${
    body.proof === undefined ? "" : `,"proof":${canonicalJson(body.proof)}`
  }${body.redacted === undefined ? "" : `,"redacted":${canonicalJson(body.redacted)}`},"schema_version":${
    canonicalJson(body.schema_version)
  },"seq":${canonicalJson(body.seq)},"stream":${JSON.stringify(body.stream)},"stream_version":${
    canonicalJson(body.stream_version)
  },"type":${JSON.stringify(body.type)}}`;
  return { head, tail };
}

/** The signed bytes of a manifest: its canonical JSON without `signature`. */
export function signedBytes(manifest: Manifest): Uint8Array {
  const { signature: _signature, ...rest } = manifest;
  return new TextEncoder().encode(canonicalJson(rest));
}

/** The CSV columns, in order; `link` is last and covers the row text before it. */
export const CSV_COLUMNS = [
  "seq",
  "position",
  "time",
  "actor",
  "actor_kind",
  "key_name",
  "masked_key",
  "end_user",
  "action",
  "details",
  "type",
  "stream",
  "stream_version",
  "schema_version",
  "data",
  "metadata",
  "prev_hash",
  "hash",
  "redacted",
  "proof",
  "link",
] as const;

/** The CSV header line (with CRLF). */
export const CSV_HEADER = CSV_COLUMNS.join(",") + "\r\n";

/**
 * One record's CSV row text without the link column and line end. Text a
 * person wrote (actor, key name, end user) that a spreadsheet would run as a
 * formula gets a leading apostrophe.
 */
export function csvRowBody(record: Omit<ExportRecord, "link">): string {
  const a = record.audit;
  const cells: string[] = [
    String(record.seq),
    String(record.position),
    a.time,
    safeText(a.actor),
    a.actor_kind,
    safeText(a.key_name ?? ""),
    safeText(a.masked_key ?? ""),
    safeText(a.end_user ?? ""),
    safeText(a.action),
    canonicalJson(a.details),
    record.type,
    record.stream,
    String(record.stream_version),
    String(record.schema_version),
    canonicalJson(record.data),
    canonicalJson(record.metadata),
    record.prev_hash,
    record.hash,
    (record.redacted ?? []).join(" "),
    (record.proof ?? []).join(" "),
  ];
  return cells.map(csvCell).join(",");
}

function safeText(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Splits one CSV record's text (without its line end) into cells. */
export function parseCsvRow(text: string): string[] | null {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let cell = "";
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) return null;
        cell += text.slice(i, quote);
        if (text[quote + 1] === '"') {
          cell += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      cells.push(cell);
      if (i === text.length) return cells;
      if (text[i] !== ",") return null;
      i++;
    } else {
      const comma = text.indexOf(",", i);
      if (comma < 0) {
        cells.push(text.slice(i));
        return cells;
      }
      cells.push(text.slice(i, comma));
      i = comma + 1;
    }
  }
}
