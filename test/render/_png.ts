/**
 * Test helpers: reads a PNG's header, and measures how much of a picture is
 * ink (non-white), by decoding it with `@napi-rs/canvas`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { needs } from "../helpers/dependencies.ts";

/** The PNG signature. */
export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Asserts a valid PNG signature and IHDR chunk and returns the declared size. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE, "PNG signature");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  assert.equal(view.getUint32(8), 13, "IHDR length");
  assert.equal(new TextDecoder().decode(png.subarray(12, 16)), "IHDR");
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** The share of pixels darker than light grey in a PNG (0–1), after decoding it. */
export async function inkShare(png: Uint8Array): Promise<number> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, image.width, image.height);
  let ink = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i]! + data[i + 1]! + data[i + 2]! < 600) ink++;
  }
  return ink / (data.length / 4);
}

/** Runs poppler's `pdftoppm` at 110 dpi on one page and returns the PNG. */
export async function pdftoppmPng(pdfPath: string, page: number): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-pdftoppm-" });
  try {
    const out = await new Deno.Command(await needs("pdftoppm"), {
      args: [
        "-r",
        "110",
        "-f",
        String(page),
        "-l",
        String(page),
        "-png",
        "-singlefile",
        pdfPath,
        `${dir}/page`,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    assert.ok(out.success, `pdftoppm failed on ${pdfPath}`);
    return await Deno.readFile(`${dir}/page.png`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
