/**
 * Where pdf.js keeps its data files, as paths, without loading pdf.js: the
 * server's main thread needs them only to start sandboxed readers, and
 * loading pdf.js there cost a tenth of a second of every start-up.
 *
 * @module
 */

/** Where pdf.js finds its CMaps (needed for CJK text) and standard font data, as file paths. */
export const PDFJS_DATA = {
  cMapUrl: new URL("../../cmaps/", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs")).pathname,
  standardFontDataUrl:
    new URL("../../standard_fonts/", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs"))
      .pathname,
  /** The pdf.js package folder, for `--allow-read` of a sandboxed reader. */
  packageDir: new URL("../../", import.meta.resolve("pdfjs-dist/legacy/build/pdf.mjs")).pathname,
};
