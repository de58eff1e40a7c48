/**
 * Audit export verification, offline: recomputes every record's event hash,
 * follows the chain where records are consecutive, checks inclusion proofs
 * against the signed checkpoint, the per-record links, the manifest's digests
 * and its Ed25519 signature. Reads the file as a stream, in constant memory.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { canonicalJson, eventHash } from "../../events/hash_chain.ts";
import {
  CSV_HEADER,
  type ExportRecord,
  FIRST_LINK,
  FORMAT,
  type Manifest,
  parseCsvRow,
  recordLink,
  sha256Hex,
  signedBytes,
} from "./_record.ts";
import { verifyInclusion } from "./merkle.ts";
import { keyFingerprint, verifySignature } from "./signing_key.ts";

/** Options of {@linkcode verifyExport}. */
export interface VerifyOptions {
  /** The install's public key (PEM). Without it, the key in the manifest is used and `trusted_key` is false. */
  publicKey?: string;
}

/** What verification found. */
export type VerifyResult =
  | {
    ok: true;
    count: number;
    range: Manifest["range"];
    head: Manifest["chain_head"];
    /** Records whose secret fields were left out: their place in the log is proven, their content is not. */
    redacted: number;
    /** Fingerprint of the key that signed the manifest. */
    key_fingerprint: string;
    /** Whether the signature was checked against a key given by the caller. */
    trusted_key: boolean;
  }
  | { ok: false; record?: number; reason: string };

type Failure = { ok: false; record?: number; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;

/** Verifies an export file (JSONL, or CSV with `FILE.manifest.json` beside it). */
export async function verifyExport(path: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  let csv: boolean;
  try {
    csv = (await readHead(path, CSV_HEADER.length)) === CSV_HEADER;
  } catch (error) {
    return {
      ok: false,
      reason: `Cannot read "${path}": ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let manifestText: string;
  try {
    manifestText = csv ? await Deno.readTextFile(`${path}.manifest.json`) : await readLastLine(path);
  } catch {
    return {
      ok: false,
      reason: csv ? `Cannot read the manifest "${path}.manifest.json"` : `Cannot read "${path}"`,
    };
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText);
  } catch {
    return { ok: false, reason: "The manifest is not JSON: the file is cut short or was changed" };
  }
  const shape = checkManifestShape(manifest);
  if (shape) return { ok: false, reason: shape };
  const publicKey = options.publicKey ?? manifest.public_key;
  if (!verifySignature(publicKey, signedBytes(manifest), manifest.signature!.value)) {
    return {
      ok: false,
      reason:
        options.publicKey !== undefined && keyFingerprint(manifest.public_key) !== safeFingerprint(publicKey)
          ? "The manifest is not signed by the given public key"
          : "The manifest does not match its signature: it was changed after signing",
    };
  }
  if ((manifest.file_format === "csv") !== csv) {
    return { ok: false, reason: `The manifest says "${manifest.file_format}" but the file is not` };
  }

  const checker = new RecordChecker(manifest);
  const digest = createHash("sha256");
  let failure: Failure | null = null;
  let count = 0;
  if (csv) {
    let header = true;
    let pending = "";
    for await (const { line, bytes } of readLines(path, "\n")) {
      digest.update(bytes);
      if (header) {
        header = false;
        continue;
      }
      if (failure) continue;
      pending += line;
      if (countQuotes(pending) % 2 === 1) continue;
      const text = pending.endsWith("\r") ? pending.slice(0, -1) : pending;
      pending = "";
      if (text === "") continue;
      count++;
      failure = checker.csvRow(count, text);
    }
    if (!failure && pending !== "") {
      failure = { ok: false, record: count + 1, reason: `Record ${count + 1} is cut short` };
    }
  } else {
    let held: string | null = null;
    for await (const { line } of readLines(path, "\n")) {
      if (line === "") continue;
      if (held !== null && !failure) {
        digest.update(held + "\n");
        count++;
        failure = checker.jsonRecord(count, held);
      }
      held = line;
    }
    if (!failure && held !== manifestText) {
      failure = { ok: false, reason: "The last line of the file is not the manifest" };
    }
  }
  if (failure) return failure;
  if (count !== manifest.count) {
    return { ok: false, reason: `The export holds ${count} records but its manifest says ${manifest.count}` };
  }
  const end = checker.finish();
  if (end) return end;
  if (digest.digest("hex") !== manifest.records_sha256) {
    return { ok: false, reason: "The records do not match the manifest's sha256: the file was changed" };
  }
  if (checker.link !== manifest.last_link) {
    return {
      ok: false,
      reason: "The last record's link does not match the manifest: records were cut or added",
    };
  }
  return {
    ok: true,
    count,
    range: manifest.range,
    head: manifest.chain_head,
    redacted: checker.redacted,
    key_fingerprint: manifest.signature!.key_fingerprint,
    trusted_key: options.publicKey !== undefined,
  };
}

/** Checks records one by one, keeping only the record before. */
class RecordChecker {
  readonly #manifest: Manifest;
  link = FIRST_LINK;
  redacted = 0;
  #previous: { seq: number; position: number; hash: string; time: string; proven: boolean } | null = null;
  #first: { position: number; time: string; prev_hash: string } | null = null;

  constructor(manifest: Manifest) {
    this.#manifest = manifest;
  }

  jsonRecord(k: number, line: string): Failure | null {
    let record: ExportRecord;
    try {
      record = JSON.parse(line);
    } catch {
      return { ok: false, record: k, reason: `Record ${k} is not JSON` };
    }
    if (typeof record !== "object" || record === null) {
      return { ok: false, record: k, reason: `Record ${k} is not an object` };
    }
    let canonical: string;
    try {
      canonical = canonicalJson(record);
    } catch {
      canonical = "";
    }
    if (canonical !== line) {
      return {
        ok: false,
        record: k,
        reason: `Record ${k} is not in canonical form: it was edited after export`,
      };
    }
    const { link, ...body } = record;
    return this.#check(k, record, () => recordLink(this.link, body), link);
  }

  csvRow(k: number, text: string): Failure | null {
    const cells = parseCsvRow(text);
    if (!cells || cells.length !== 21) {
      return { ok: false, record: k, reason: `Record ${k} does not have the export's 21 columns` };
    }
    const cell = (i: number) => cells[i]!;
    let record: ExportRecord;
    try {
      record = {
        seq: Number(cell(0)),
        position: Number(cell(1)),
        stream: cell(11),
        stream_version: Number(cell(12)),
        type: cell(10),
        schema_version: Number(cell(13)),
        data: JSON.parse(cell(14)),
        metadata: JSON.parse(cell(15)),
        prev_hash: cell(16),
        hash: cell(17),
        audit: { time: cell(2) } as ExportRecord["audit"],
        ...(cell(18) ? { redacted: cell(18).split(" ") } : {}),
        ...(cell(19) ? { proof: cell(19).split(" ") } : {}),
        link: cell(20),
      };
    } catch {
      return { ok: false, record: k, reason: `Record ${k} has data or metadata that is not JSON` };
    }
    const body = text.slice(0, text.length - cell(20).length - 1);
    return this.#check(k, record, () => sha256Hex(this.link + body), record.link);
  }

  #check(k: number, r: ExportRecord, computeLink: () => string, link: string): Failure | null {
    const m = this.#manifest;
    const fail = (reason: string): Failure => ({ ok: false, record: k, reason: `Record ${k} ${reason}` });
    if (r.seq !== k) {
      return fail(`is numbered ${r.seq}: records are missing, added or out of order`);
    }
    if (
      !Number.isInteger(r.position) || r.position < 1 || typeof r.stream !== "string" ||
      typeof r.type !== "string" ||
      !Number.isInteger(r.stream_version) || !Number.isInteger(r.schema_version) ||
      !HEX64.test(r.prev_hash) ||
      !HEX64.test(r.hash) || typeof r.audit?.time !== "string" || typeof link !== "string"
    ) {
      return fail("is missing a field or has one of the wrong type");
    }
    const at = `(position ${r.position})`;
    const previous = this.#previous;
    if (previous && r.position <= previous.position) {
      return fail(`${at} comes after position ${previous.position}: records are out of order`);
    }
    if (r.position > m.checkpoint.tree_size) return fail(`${at} is past the export's checkpoint`);
    const redacted = Array.isArray(r.redacted) && r.redacted.length > 0;
    if (redacted) this.redacted++;
    else {
      let hash: string;
      try {
        hash = eventHash(r.prev_hash, r);
      } catch {
        return fail(`${at} cannot be hashed`);
      }
      if (hash !== r.hash) return fail(`${at}: its content does not match its hash`);
    }
    if (computeLink() !== link) {
      return fail(
        `${at}: its audit fields do not match its link: it was changed, or a record before it is missing`,
      );
    }
    if (previous) {
      const continues = r.position === previous.position + 1 && !redacted;
      if (continues && r.prev_hash !== previous.hash) {
        return fail(`${at}: its prev_hash does not match the hash of the record before it`);
      }
      if (!continues && !previous.proven) {
        return {
          ok: false,
          record: k - 1,
          reason: `Record ${
            k - 1
          } (position ${previous.position}) has no inclusion proof and its chain does not continue`,
        };
      }
    } else {
      if (r.prev_hash !== m.hash_before_first) {
        return fail(`${at}: its prev_hash is not the manifest's hash before the first`);
      }
      this.#first = { position: r.position, time: r.audit.time, prev_hash: r.prev_hash };
    }
    let proven = false;
    if (r.proof !== undefined) {
      if (
        !Array.isArray(r.proof) || !verifyInclusion(r.hash, {
          index: r.position - 1,
          size: m.checkpoint.tree_size,
          path: r.proof,
          root: m.checkpoint.root,
        })
      ) {
        return fail(`${at}: its inclusion proof does not lead to the signed checkpoint`);
      }
      proven = true;
    }
    if (r.position === m.chain_head.position) {
      if (r.hash !== m.chain_head.hash) return fail(`${at}: its hash is not the manifest's chain head`);
      proven = true;
    }
    this.link = link;
    this.#previous = { seq: k, position: r.position, hash: r.hash, time: r.audit.time, proven };
    return null;
  }

  finish(): Failure | null {
    const m = this.#manifest;
    const last = this.#previous;
    if (last && !last.proven) {
      return {
        ok: false,
        record: last.seq,
        reason:
          `Record ${last.seq} (position ${last.position}) has no inclusion proof and is not the chain head`,
      };
    }
    const first = this.#first;
    const range = first && last
      ? {
        first_position: first.position,
        last_position: last.position,
        first_time: first.time,
        last_time: last.time,
      }
      : null;
    if (canonicalJson(range) !== canonicalJson(m.range)) {
      return { ok: false, reason: "The records' range does not match the manifest's range" };
    }
    return null;
  }
}

function checkManifestShape(m: Manifest): string | null {
  if (typeof m !== "object" || m === null || m.format !== FORMAT) {
    return "The last record is not an audit export manifest";
  }
  if (m.format_version !== 1) {
    return `Cannot read export format version ${JSON.stringify(m.format_version)}: expected 1`;
  }
  const ok = Number.isInteger(m.count) && typeof m.records_sha256 === "string" &&
    typeof m.last_link === "string" &&
    typeof m.public_key === "string" && typeof m.signature?.value === "string" &&
    Number.isInteger(m.chain_head?.position) && typeof m.chain_head?.hash === "string" &&
    Number.isInteger(m.checkpoint?.tree_size) && typeof m.checkpoint?.root === "string" &&
    m.checkpoint.tree_size === m.chain_head.position;
  return ok ? null : "The manifest is missing a field or has one of the wrong type";
}

function safeFingerprint(pem: string): string {
  try {
    return keyFingerprint(pem);
  } catch {
    return "";
  }
}

function countQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) n++;
  return n;
}

async function readHead(path: string, length: number): Promise<string> {
  using file = await Deno.open(path);
  const buffer = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = await file.read(buffer.subarray(read));
    if (n === null) break;
    read += n;
  }
  return new TextDecoder().decode(buffer.subarray(0, read));
}

/** The last non-empty line of a file, read from its end. */
async function readLastLine(path: string): Promise<string> {
  using file = await Deno.open(path);
  const size = (await file.stat()).size;
  let chunk = 1 << 16;
  for (;;) {
    const start = Math.max(0, size - chunk);
    await file.seek(start, Deno.SeekMode.Start);
    const buffer = new Uint8Array(size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = await file.read(buffer.subarray(read));
      if (n === null) break;
      read += n;
    }
    const text = new TextDecoder().decode(buffer).replace(/\n+$/, "");
    const newline = text.lastIndexOf("\n");
    if (newline >= 0 || start === 0) return text.slice(newline + 1);
    chunk *= 4;
  }
}

/** The lines of a file with the bytes of each (line end included), streamed. */
async function* readLines(
  path: string,
  separator: "\n",
): AsyncGenerator<{ line: string; bytes: Uint8Array }> {
  const file = await Deno.open(path);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = "";
  for await (const chunk of file.readable) {
    rest += decoder.decode(chunk, { stream: true });
    let at = rest.indexOf(separator);
    let from = 0;
    while (at >= 0) {
      const line = rest.slice(from, at);
      yield { line, bytes: encoder.encode(line + separator) };
      from = at + 1;
      at = rest.indexOf(separator, from);
    }
    rest = rest.slice(from);
  }
  rest += decoder.decode();
  if (rest !== "") yield { line: rest, bytes: encoder.encode(rest) };
}
