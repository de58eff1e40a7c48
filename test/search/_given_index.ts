/**
 * Test helper: a search index built from given events alone, in memory, so a
 * ranking is specified as "given these events, this search finds these pages".
 *
 * @module
 */
import type { EventData, EventType, RecordedEvent } from "../../events/types.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";
import { searchIndexProjection } from "../../projections/search_index.ts";

/** An in-memory search index that events are applied to one at a time. */
export class GivenIndex {
  readonly projector: Projector = openProjector(":memory:", [searchIndexProjection]);
  #position = 0;

  /** Applies one event, each on a stream of its own. */
  add<T extends EventType>(type: T, data: EventData<T>): this {
    const position = ++this.#position;
    this.projector.applyBatch([{
      type,
      data,
      metadata: { time: "2026-01-01T00:00:00.000Z" },
      position,
      stream: `test-${position}`,
      stream_version: 1,
      schema_version: 1,
      prev_hash: "0".repeat(64),
      hash: "0".repeat(64),
    } as RecordedEvent]);
    return this;
  }
}
