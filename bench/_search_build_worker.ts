/**
 * A worker of the search benchmark's builder: analyzes documents' passages
 * with the projection's own `ftsColumns`, so the builder's main thread only
 * writes rows (see `buildSergoIndex` in `search.ts`).
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { ProcessedPage } from "../events/types.ts";
import { passagesOf } from "../projections/_passages.ts";
import { ftsColumns } from "../projections/search_index.ts";

/** A document to analyze. */
export interface BuildDocument {
  document_id: string;
  name: string;
  type: string;
  pages: ProcessedPage[];
}

self.onmessage = (event: MessageEvent<{ id: number; documents: BuildDocument[] }>) => {
  const { id, documents } = event.data;
  const analyzed = documents.map((document) =>
    passagesOf(document.pages).map((draft) => ({ draft, columns: ftsColumns(draft, document) }))
  );
  self.postMessage({ id, analyzed });
};
