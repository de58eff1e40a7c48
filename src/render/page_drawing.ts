/**
 * What the modules around page drawing share without loading pdf.js and the
 * canvas (the drawing itself runs in render workers): the resolution, and the
 * error a page that cannot be drawn raises.
 *
 * @module
 */

/** The resolution pages are drawn at. */
export const PAGE_DPI = 110;

/** A page that cannot be drawn or cut out, with a one-sentence reason. */
export class PageRenderError extends Error {
  override name = "PageRenderError";
}
