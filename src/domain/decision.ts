/**
 * What a decider decides: the appends a command asks for, and the metadata
 * every command carries (who asks, and the time, passed in rather than read
 * from a clock). A decider is pure: given a command and the state its caller
 * loaded, it returns the appends or refuses with a {@linkcode DomainError}
 * (one sentence); the caller appends what it returns.
 *
 * @module
 */
import type { ExpectedVersion } from "../../events/store.ts";
import type { SergoEvent } from "../../events/types.ts";

/** Who asks for a command and when: what every command carries beside its data. */
export interface CommandMetadata {
  /** The time the command is decided at. */
  readonly now: Date;
  /** Who asks, as recorded in each event's metadata (`person-…`, `cli`, …). */
  readonly actor: string;
}

/** One append a decision asks for: events to one stream, with the version the stream must have. */
export interface Append {
  stream: string;
  events: SergoEvent[];
  /** Absent: any version (the store's default). */
  expectedVersion?: ExpectedVersion;
}

/** The metadata of the events a command decides. */
export function eventMetadata(metadata: CommandMetadata): SergoEvent["metadata"] {
  return { time: metadata.now.toISOString(), actor: metadata.actor };
}
