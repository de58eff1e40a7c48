/**
 * Cuts one page out of a PDF as a PDF of its own with pdf-lib, keeping the
 * page's content stream, fonts and images, so its text layer still extracts.
 * PDFs pdf-lib cannot read (encrypted, or with a damaged page tree that pdf.js
 * repairs) are cut with pdf.js instead.
 *
 * @module
 */
import { PDFDocument } from "pdf-lib";
import { describe, openForPage, PageRenderError } from "./render_png.ts";

/** Page `page` (from 1) of a PDF, alone, as a PDF. */
export async function onePagePdf(pdfBytes: Uint8Array, page: number): Promise<Uint8Array> {
  if (!Number.isInteger(page) || page < 1) {
    throw new PageRenderError(`Cannot cut out page "${page}": pages are numbered from 1`);
  }
  try {
    return await cutWithPdfLib(pdfBytes, page);
  } catch {
    return await cutWithPdfJs(pdfBytes, page);
  }
}

async function cutWithPdfLib(pdfBytes: Uint8Array, page: number): Promise<Uint8Array> {
  const source = await PDFDocument.load(pdfBytes, { updateMetadata: false, throwOnInvalidObject: false });
  const count = source.getPageCount();
  if (page > count) throw new Error(`pdf-lib found ${count} pages`);
  const target = await PDFDocument.create({ updateMetadata: false });
  const [copied] = await target.copyPages(source, [page - 1]);
  if (!copied) throw new Error("pdf-lib copied no page");
  target.addPage(copied);
  return await target.save({ useObjectStreams: true });
}

async function cutWithPdfJs(pdfBytes: Uint8Array, page: number): Promise<Uint8Array> {
  const doc = await openForPage(pdfBytes, page);
  try {
    const bytes = await doc.extractPages([{ document: null, includePages: [page - 1] }]);
    if (!(bytes instanceof Uint8Array) || bytes.length === 0) throw new Error("pdf.js wrote no PDF");
    return bytes;
  } catch (error) {
    throw new PageRenderError(`Cannot cut out page ${page}: ${describe(error)}`);
  } finally {
    await doc.destroy();
  }
}
