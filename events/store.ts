/**
 * The event store interface: the one source of truth. The SQLite store is the
 * embedded default; a PostgreSQL store can sit behind the same interface.
 *
 * @module
 */
import type { RecordedEvent, SergoEvent } from "./types.ts";

/**
 * What the stream must look like for an append to go ahead: a version number,
 * `"no_stream"` (must not exist), `"stream_exists"` (must exist) or `"any"`.
 */
export type ExpectedVersion = number | "no_stream" | "stream_exists" | "any";

/** Options of one append. */
export interface AppendOptions {
  /** Optimistic concurrency check; default `"any"`. */
  expectedVersion?: ExpectedVersion;
  /**
   * A rate-limit token to take in the same transaction as the append, from
   * the key's bucket that every replica shares (the PostgreSQL store): the
   * events are written only if the bucket holds one, otherwise nothing is
   * written and the append rejects with {@linkcode RateRefusedError}. A store
   * without shared buckets (SQLite) rejects an append that asks for one.
   */
  takeToken?: TokenTake;
}

/** A token to take from a key's shared bucket with an append (see {@linkcode AppendOptions.takeToken}). */
export interface TokenTake {
  keyId: string;
  /** The bucket's refill, in tokens a second. */
  perSecond: number;
  /** The bucket's size. */
  burst: number;
  /** Told the tokens left in the bucket after this take, as of `sentAt` (`performance.now()` before sending). */
  told?: (tokens: number, sentAt: number) => void;
}

/** The error raised when an append's token could not be taken: the key's bucket is empty; nothing was written. */
export class RateRefusedError extends Error {
  override name = "RateRefusedError";
  /** Creates the error for one key: `waitSeconds` until the bucket holds a token again. */
  constructor(readonly keyId: string, readonly waitSeconds: number) {
    super(`The rate limit of key ${keyId} refused the call: its bucket is empty for ${waitSeconds} s`);
  }
}

/** The result of an append: the recorded events and the stream's new version. */
export interface AppendResult {
  events: RecordedEvent[];
  streamVersion: number;
}

/** The head of the log: the last position and its hash (position 0 for an empty log). */
export interface LogHead {
  position: number;
  hash: string;
}

/** The positions a telling of events covers (see {@linkcode EventStore.subscribe}). */
export interface TellSpan {
  after: number;
  through: number;
}

/** The event log. */
export interface EventStore {
  /** Appends events to one stream as one transaction; resolves once they are durable. */
  append(stream: string, events: SergoEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Reads up to `limit` events after `position`, in order (on the shared
   * log, without the MCP calls this process's copy leaves out until
   * {@linkcode EventStore.complete} fetched them).
   */
  readFrom(position: number, limit?: number): RecordedEvent[];
  /** Reads one stream's events in order. */
  readStream(stream: string): RecordedEvent[];
  /** The head of the log. */
  head(): LogHead;
  /**
   * Calls `listener` with every batch of events this process appends (the
   * shared log's store: every batch that reaches its copy), after they are
   * durable. `span` is the positions the telling covers, `after` the one
   * before its first and `through` its last: a position in it without an
   * event is an MCP call this process's copy leaves out (the shared log's
   * copy keeps no other writer's call: see events/postgres/local_copy.ts),
   * which no projection takes. Without `span`, the events are consecutive.
   */
  subscribe(listener: (events: RecordedEvent[], span?: TellSpan) => void): () => void;
  /**
   * Makes every event up to `upTo` (default: the head) readable from this
   * process: the shared log's copy fetches the MCP calls it left out from the
   * database. Readers that need every event (the audit export) call it
   * first; a store whose reads are complete has no such method.
   */
  complete?(upTo?: number): Promise<void>;
  /** Finishes pending appends and closes the store. */
  close(): Promise<void>;
}

/** The error raised when a stream's version is not what the append expected. */
export class ConcurrencyError extends Error {
  override name = "ConcurrencyError";
  /** Creates the error for one stream. */
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    readonly actual: number | null,
  ) {
    super(
      `Cannot append to "${stream}": expected ${describe(expected)}, found ${
        actual === null ? "no stream" : `version ${actual}`
      }`,
    );
  }
}

/** The error raised when a stored event cannot be read back. */
export class StoredEventError extends Error {
  override name = "StoredEventError";
  /** Creates the error for the event at `position`. */
  constructor(readonly position: number, detail: string) {
    super(`Cannot read event ${position}: ${detail}`);
  }
}

function describe(expected: ExpectedVersion): string {
  switch (expected) {
    case "no_stream":
      return "no stream";
    case "stream_exists":
      return "an existing stream";
    case "any":
      return "any version";
    default:
      return `version ${expected}`;
  }
}
