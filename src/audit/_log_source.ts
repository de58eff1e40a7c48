/**
 * Reads what an export needs from the log: rows at given positions with their
 * hash inputs, and every event hash in order. Either straight from the SQLite
 * file (read only, raw stored JSON) or through the {@linkcode EventStore}.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { GENESIS_HASH } from "../../events/hash_chain.ts";
import type { EventStore } from "../../events/store.ts";
import type { RecordedEvent } from "../../events/types.ts";

/** One stored event with everything its hash covers. */
export interface LogRow {
  position: number;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  prev_hash: string;
  hash: string;
}

/** What an export reads from the log. */
export interface LogSource {
  /** The last position and its hash. */
  head(): { position: number; hash: string };
  /** The hash of the event at `position` (the genesis hash for 0). */
  hashAt(position: number): string;
  /** The rows at these ascending positions, in order. */
  rows(positions: readonly number[]): LogRow[];
  /** Every event hash from position 1 through `upTo`, in order. */
  hashes(upTo: number): Iterable<string>;
  /** Releases what the source opened. */
  close(): void;
}

/** Opens the SQLite event log at `path` read only. */
export function sqliteLogSource(path: string): LogSource {
  const db = new DatabaseSync(path, { readOnly: true });
  db.exec("PRAGMA busy_timeout = 10000");
  const one = db.prepare(
    "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events WHERE position = ?",
  );
  const range = db.prepare(
    `SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events
     WHERE position >= ? AND position <= ? ORDER BY position`,
  );
  const hashOf = db.prepare("SELECT hash FROM events WHERE position = ?");
  const parse = (row: Record<string, unknown>): LogRow => ({
    ...(row as unknown as LogRow),
    data: JSON.parse(row.data as string),
    metadata: JSON.parse(row.metadata as string),
  });
  return {
    head() {
      const row = db.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").get() as
        | { position: number; hash: string }
        | undefined;
      return row ?? { position: 0, hash: GENESIS_HASH };
    },
    hashAt(position) {
      if (position === 0) return GENESIS_HASH;
      const row = hashOf.get(position) as { hash: string } | undefined;
      if (!row) throw new Error(`Cannot read event ${position}: it is not in the log`);
      return row.hash;
    },
    rows(positions) {
      return readRuns(positions, (from, to) => {
        if (from === to) {
          const row = one.get(from) as Record<string, unknown> | undefined;
          return row ? [parse(row)] : [];
        }
        return (range.all(from, to) as Array<Record<string, unknown>>).map(parse);
      });
    },
    *hashes(upTo) {
      const statement: StatementSync = db.prepare(
        "SELECT position, hash FROM events WHERE position > ? AND position <= ? ORDER BY position LIMIT 10000",
      );
      let after = 0;
      for (;;) {
        const rows = statement.all(after, upTo) as Array<{ position: number; hash: string }>;
        if (rows.length === 0) return;
        for (const row of rows) yield row.hash;
        after = rows[rows.length - 1]!.position;
      }
    },
    close() {
      db.close();
    },
  };
}

/** Reads the log through the store interface (any store). */
export function storeLogSource(store: EventStore): LogSource {
  const toRow = (event: RecordedEvent): LogRow => ({
    position: event.position,
    stream: event.stream,
    stream_version: event.stream_version,
    type: event.type,
    schema_version: event.schema_version,
    data: event.data,
    metadata: event.metadata,
    prev_hash: event.prev_hash,
    hash: event.hash,
  });
  return {
    head: () => store.head(),
    hashAt(position) {
      if (position === 0) return GENESIS_HASH;
      const event = store.readFrom(position - 1, 1)[0];
      if (!event || event.position !== position) {
        throw new Error(`Cannot read event ${position}: it is not in the log`);
      }
      return event.hash;
    },
    rows(positions) {
      return readRuns(positions, (from, to) => store.readFrom(from - 1, to - from + 1).map(toRow));
    },
    *hashes(upTo) {
      let position = 0;
      while (position < upTo) {
        const events = store.readFrom(position, Math.min(1000, upTo - position));
        if (events.length === 0) return;
        for (const event of events) yield event.hash;
        position = events[events.length - 1]!.position;
      }
    },
    close() {},
  };
}

/** Reads ascending positions as runs of consecutive positions. */
function readRuns(positions: readonly number[], read: (from: number, to: number) => LogRow[]): LogRow[] {
  const out: LogRow[] = [];
  let i = 0;
  while (i < positions.length) {
    const from = positions[i]!;
    let to = from;
    while (i + 1 < positions.length && positions[i + 1] === to + 1) {
      i++;
      to++;
    }
    i++;
    const rows = read(from, to);
    if (rows.length !== to - from + 1) {
      throw new Error(`Cannot read events ${from}-${to}: some are not in the log`);
    }
    out.push(...rows);
  }
  return out;
}
