/**
 * Image-only PDFs made in a test: each page a picture of printed words (drawn
 * with `@napi-rs/canvas`, wrapped by pdf-lib), with no text layer, like a
 * scan. Pages are small so that Tesseract reads each in well under a second.
 *
 * @module
 */
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import { PDFDocument } from "pdf-lib";

/** DejaVu Sans Bold (Debian's `fonts-dejavu-core`, which `.ci/run` installs): the canvas has no font of its own. */
const FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
let registered = false;

/**
 * A PDF of `lines.length` pages, page N a picture of `lines[N-1]` in large
 * black letters on white: a strip of 324 × 58 points, or with `dense` a Letter
 * page holding the line 36 times (slower to read).
 */
export async function scanPdf(
  lines: readonly string[],
  options: { dense?: boolean } = {},
): Promise<Uint8Array> {
  if (!registered) {
    if (!GlobalFonts.registerFromPath(FONT, "Scan Sans")) throw new Error(`Cannot load the font ${FONT}`);
    registered = true;
  }
  const pdf = await PDFDocument.create();
  const pictures = new Map<string, Awaited<ReturnType<typeof pdf.embedPng>>>();
  for (const line of lines) {
    let picture = pictures.get(line);
    if (!picture) {
      const [width, height] = options.dense ? [1275, 1650] : [900, 160];
      const canvas = createCanvas(width, height);
      const context = canvas.getContext("2d");
      context.fillStyle = "#ffffff";
      context.fillRect(0, 0, width, height);
      context.fillStyle = "#000000";
      context.font = options.dense ? "30px 'Scan Sans'" : "56px 'Scan Sans'";
      if (options.dense) {
        for (let i = 0; i < 36; i++) context.fillText(`${line} ${i + 1}`, 60, 80 + i * 43);
      } else context.fillText(line, 30, 105);
      picture = await pdf.embedPng(canvas.toBuffer("image/png"));
      pictures.set(line, picture);
    }
    const [width, height] = options.dense ? [612, 792] : [324, 58];
    const page = pdf.addPage([width, height]);
    page.drawImage(picture, { x: 0, y: 0, width, height });
  }
  return await pdf.save();
}
