/**
 * What a projection is: a read model built from the log, owning its tables.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { EventType, RecordedEvent } from "../events/types.ts";

/** A read model built from the event log. */
export interface Projection {
  /** Unique name; also the key of its checkpoint. */
  readonly name: string;
  /** The event types it applies; others are skipped without a call. */
  readonly handles: readonly EventType[];
  /** The tables whose content makes up the projection (for the digest). */
  readonly tables: readonly string[];
  /** Creates its tables and indexes if they do not exist. */
  init(db: DatabaseSync): void;
  /** Applies one event; runs inside the projector's transaction. */
  apply(db: DatabaseSync, event: RecordedEvent): void;
}
