/**
 * The body of a render pool worker: draws a page as a PNG or cuts it out as a
 * one-page PDF, one job at a time, and answers with the bytes or a
 * one-sentence error.
 *
 * @module
 */
import { onePagePdf } from "./one_page_pdf.ts";
import { describe, renderPageGray, renderPagePng } from "./render_png.ts";

/** A job sent to a render worker. */
export interface RenderWorkerRequest {
  /** Matches the answer to the job. */
  id: number;
  /** The whole PDF. */
  pdfBytes: Uint8Array;
  /** The page, from 1. */
  page: number;
  /** A PNG picture, a one-page PDF, or a grey PGM for a transcriber. */
  format: "image" | "pdf" | "gray";
  /** The resolution of a grey picture. */
  dpi?: number;
}

/** A render worker's answer. */
export type RenderWorkerResponse =
  | { id: number; ok: true; bytes: Uint8Array }
  | { id: number; ok: false; message: string };

// pdf.js and pdf-lib report recoverable damage on the console; the caller gets the outcome.
console.log = () => {};
console.warn = () => {};
console.info = () => {};
console.error = () => {};

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<RenderWorkerRequest>) => void) | null;
  postMessage(message: RenderWorkerResponse, transfer?: Transferable[]): void;
};

scope.onmessage = async (event: MessageEvent<RenderWorkerRequest>): Promise<void> => {
  const { id, pdfBytes, page, format, dpi } = event.data;
  try {
    const bytes = format === "image"
      ? (await renderPagePng(pdfBytes, page)).png
      : format === "gray"
      ? (await renderPageGray(pdfBytes, page, dpi ?? 300)).pgm
      : await onePagePdf(pdfBytes, page);
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? bytes
      : bytes.slice();
    scope.postMessage({ id, ok: true, bytes: owned }, [owned.buffer as ArrayBuffer]);
  } catch (error) {
    scope.postMessage({ id, ok: false, message: describe(error) });
  }
};
