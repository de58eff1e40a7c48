/**
 * Basic-preset extraction of one document: detect its type by content, then read it.
 *
 * @module
 */
import { detectType } from "./detect_type.ts";
import { extractDocx } from "./docx_extract.ts";
import type { ExtractResult } from "./extract_result.ts";
import { extractPdf } from "./pdf_extract.ts";
import { extractPptx } from "./pptx_extract.ts";
import { ProcessingError, toProcessingError } from "./processing_error.ts";
import { extractText } from "./text_extract.ts";

export type { ExtractResult } from "./extract_result.ts";
export { ProcessingError } from "./processing_error.ts";

const FALLBACK: Record<string, string> = {
  pdf: "This PDF cannot be read",
  pptx: "This PowerPoint file cannot be read",
  docx: "This Word file cannot be read",
  txt: "This text file cannot be read",
  md: "This Markdown file cannot be read",
};

/**
 * Reads a document by the Basic rules; every failure is a {@link ProcessingError} with a
 * one-sentence reason.
 *
 * @example const result = await extractDocument(bytes, "report.pdf");
 */
export async function extractDocument(bytes: Uint8Array, fileName: string): Promise<ExtractResult> {
  let type;
  try {
    type = detectType(bytes, fileName);
  } catch (error) {
    throw toProcessingError(error, "This file cannot be read");
  }
  try {
    let result: ExtractResult;
    switch (type) {
      case "pdf":
        result = await extractPdf(bytes);
        break;
      case "pptx":
        result = await extractPptx(bytes);
        break;
      case "docx":
        result = await extractDocx(bytes);
        break;
      case "txt":
      case "md":
        result = await extractText(bytes, type);
        break;
      default: {
        const never: never = type;
        throw new ProcessingError(`Unknown document type "${never}".`);
      }
    }
    return result;
  } catch (error) {
    throw toProcessingError(error, FALLBACK[type] ?? "This file cannot be read");
  }
}
