/**
 * The hash chain over the event log: each event stores the hash of the one
 * before it and `hash = sha256(prev_hash ‖ canonical JSON of the event)`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./_canonical_json.ts";

/** The `prev_hash` of the first event. */
export const GENESIS_HASH = "0".repeat(64);

/** The fields of a recorded event that its hash covers. */
export interface HashedFields {
  position: number;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
}

/** The canonical text of an event that its hash covers. */
export function hashInput(event: HashedFields): string {
  return hashInputOf({
    ...event,
    data: canonicalJson(event.data),
    metadata: canonicalJson(event.metadata),
  });
}

/**
 * {@linkcode hashInput} from data and metadata already in canonical JSON: the
 * canonical JSON of the whole event, its keys in sorted order. The
 * PostgreSQL store's `sergo_group_commit` (events/postgres/group_commit_sql.ts)
 * puts the same text together in SQL; test/events/postgres/group_commit_sql_test.ts
 * holds the two to the same chain.
 */
export function hashInputOf(event: HashedFields & { data: string; metadata: string }): string {
  return `{"data":${event.data},"metadata":${event.metadata},"position":${event.position},"schema_version":${
    JSON.stringify(event.schema_version)
  },"stream":${JSON.stringify(event.stream)},"stream_version":${event.stream_version},"type":${
    JSON.stringify(event.type)
  }}`;
}

/** Computes an event's hash from the previous hash and the event. */
export function eventHash(prevHash: string, event: HashedFields): string {
  return createHash("sha256").update(prevHash).update(hashInput(event)).digest("hex");
}

/** The result of walking the chain. */
export type ChainVerdict =
  | { ok: true; head: { position: number; hash: string }; count: number }
  | { ok: false; position: number; reason: string };

/** A stored row as the verifier reads it (data and metadata as stored text). */
export interface StoredRow extends Omit<HashedFields, "data" | "metadata"> {
  data: string;
  metadata: string;
  prev_hash: string;
  hash: string;
}

/**
 * Walks stored rows in position order and returns the head, or the first
 * position that does not verify (a changed row, a gap, or a swapped pair).
 */
export function verifyRows(rows: Iterable<StoredRow>): ChainVerdict {
  const walk = new ChainWalk();
  for (const row of rows) {
    const broken = walk.step(row);
    if (broken) return broken;
  }
  return walk.verdict();
}

/** {@linkcode verifyRows} over rows that arrive asynchronously (the PostgreSQL log, read in batches). */
export async function verifyRowsAsync(rows: AsyncIterable<StoredRow>): Promise<ChainVerdict> {
  const walk = new ChainWalk();
  for await (const row of rows) {
    const broken = walk.step(row);
    if (broken) return broken;
  }
  return walk.verdict();
}

/** The walk along the chain, one row at a time. */
class ChainWalk {
  #prev = GENESIS_HASH;
  #expected = 1;
  #count = 0;

  /** Checks the next row; returns the verdict when it breaks the chain. */
  step(row: StoredRow): ChainVerdict | null {
    const expected = this.#expected;
    if (row.position !== expected) {
      return {
        ok: false,
        position: expected,
        reason: `event ${expected} is missing (next stored is ${row.position})`,
      };
    }
    if (row.prev_hash !== this.#prev) {
      return {
        ok: false,
        position: row.position,
        reason: "its prev_hash does not match the event before it",
      };
    }
    let data: unknown, metadata: unknown;
    try {
      data = JSON.parse(row.data);
      metadata = JSON.parse(row.metadata);
    } catch {
      return { ok: false, position: row.position, reason: "its stored data is not JSON" };
    }
    const hash = eventHash(this.#prev, { ...row, data, metadata });
    if (hash !== row.hash) {
      return { ok: false, position: row.position, reason: "its content does not match its hash" };
    }
    this.#prev = hash;
    this.#expected++;
    this.#count++;
    return null;
  }

  verdict(): ChainVerdict {
    return { ok: true, head: { position: this.#expected - 1, hash: this.#prev }, count: this.#count };
  }
}

/** Canonical JSON (RFC 8785 style), the serialisation the hash chain covers. */
export { canonicalJson } from "./_canonical_json.ts";
