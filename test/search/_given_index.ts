/**
 * Test helper: a search index built from given events alone, in memory, so a
 * ranking is specified as "given these events, this search finds these pages".
 *
 * @module
 */
import type { DocumentType, EventData, EventType, ProcessedPage, RecordedEvent } from "../../events/types.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";
import { createSearchIndexProjection, searchIndexProjection } from "../../projections/search_index.ts";
import type { AnalysisOptions } from "../../src/analysis/analysis.ts";

/** An in-memory search index that events are applied to one at a time. */
export class GivenIndex {
  readonly projector: Projector;
  #position = 0;

  /** An index analyzed as search does, or with `analysis` (when a test compares one without a part). */
  constructor(analysis?: AnalysisOptions) {
    this.projector = openProjector(":memory:", [
      analysis ? createSearchIndexProjection(analysis) : searchIndexProjection,
    ]);
  }

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

  /**
   * A document uploaded and read with Basic: its pages as texts (page 1, 2, …) or as given, its type from its
   * name's extension. Ben's, in his files, unless `owner` says whose and in which folder (null: none).
   */
  uploaded(
    id: string,
    name: string,
    pages: readonly (string | ProcessedPage)[],
    owner: { person?: string; folder?: string | null } = {},
  ): this {
    const extension = name.split(".").at(-1);
    const type: DocumentType = extension === "txt" || extension === "docx" ? extension : "pdf";
    this.add("DocumentUploaded", {
      document_id: id,
      person_id: owner.person ?? "ben",
      folder_id: owner.folder === undefined ? "ben-files" : owner.folder,
      name,
      type,
      size: 1,
      sha256: "a".repeat(64),
      preset: "basic",
    });
    const processed = pages.map((page, index) =>
      typeof page === "string" ? { page: index + 1, text: page, marked: false, image_only: false } : page
    );
    return this.add("DocumentProcessed", {
      document_id: id,
      preset: "basic",
      page_count: processed.length,
      pages_estimated: false,
      pages: processed,
    });
  }
}
