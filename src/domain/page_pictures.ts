/**
 * Which file a document's page pictures are drawn from: a PDF itself, an
 * Office file its PDF copy; a page that does not exist, or a copy not made
 * (yet), is not found, saying why.
 *
 * @module
 */
import type { DocumentRow } from "../../projections/catalogue.ts";
import type { PageViews } from "../render/page_cache.ts";
import { DomainError } from "./errors.ts";

/** Page `page` of a document as a PNG (`image`) or a one-page PDF, drawn by `pageViews`. */
export async function pagePicture(
  pageViews: PageViews,
  doc: DocumentRow,
  options: { page: number; format: "image" | "pdf" },
): Promise<Uint8Array> {
  const { page, format } = options;
  const source = doc.type === "pdf"
    ? doc.sha256
    : doc.pdf_copy_status === "made"
    ? doc.pdf_copy_sha256
    : null;
  if (source === null) {
    throw new DomainError(
      "not_found",
      doc.pdf_copy_status === "pending"
        ? `The PDF copy of "${doc.name}" is still being made — try again in a moment`
        : `"${doc.name}" has no page pictures: it has no PDF copy`,
    );
  }
  const pages = doc.type === "pdf" ? doc.page_count : doc.pdf_copy_pages;
  if (!Number.isInteger(page) || page < 1 || (pages !== null && page > pages)) {
    throw new DomainError("not_found", `"${doc.name}" has no page ${page}`);
  }
  return await pageViews.view(source, page, format);
}
