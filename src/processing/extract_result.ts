/**
 * What every extractor returns.
 *
 * @module
 */
import type { DocumentType, ProcessedPage } from "../../events/types.ts";

/** The pages read from one document, ready for a `DocumentProcessed` event. */
export interface ExtractResult {
  type: DocumentType;
  page_count: number;
  /** True when pages are estimated from text length (Word, text) rather than real pages. */
  pages_estimated: boolean;
  pages: ProcessedPage[];
  /**
   * PDFs only: what each page draws, in page order, for the Standard preset's
   * judgement of its text layer. Not recorded in events.
   */
  layouts?: Array<{ largestPicture: number; pictures: number; paths: number }>;
}
