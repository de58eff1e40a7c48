import assert from "node:assert/strict";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { encodePng } from "../../src/render/png_encoder.ts";
import { renderPagePng } from "../../src/render/render_png.ts";
import { pngSize } from "./_png.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

async function decode(png: Uint8Array): Promise<Uint8ClampedArray> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, image.width, image.height).data;
}

Deno.test("the PNG encoder round-trips colour pixels exactly", async () => {
  const width = 37;
  const height = 23;
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba[i * 4] = (i * 7) & 0xff;
    rgba[i * 4 + 1] = (i * 13 + 50) & 0xff;
    rgba[i * 4 + 2] = i % 3 === 0 ? 255 : (i * 31) & 0xff;
    rgba[i * 4 + 3] = 255;
  }
  const png = encodePng(rgba, width, height);
  assert.deepEqual(pngSize(png), { width, height });
  assert.equal(png[25], 2, "colour type RGB");
  assert.deepEqual(await decode(png), rgba);
});

Deno.test("a grey page is written as a grey PNG and decodes to the same pixels", async () => {
  const page = await renderPagePng(
    await Deno.readFile(`${CORPUS_DIR}/pdf/tracemonkey-pldi-paper.pdf`),
    2,
  );
  assert.equal(page.png[25], 0, "colour type grey");
  assert.ok(page.png.length < 400_000, `${page.png.length} bytes`);
  const pixels = await decode(page.png);
  assert.equal(pixels.length, 935 * 1210 * 4);
  for (let i = 0; i < pixels.length; i += 4) {
    if (pixels[i] !== pixels[i + 1] || pixels[i] !== pixels[i + 2] || pixels[i + 3] !== 255) {
      assert.fail(`pixel ${i / 4} is not opaque grey`);
    }
  }
});

Deno.test("the encoder refuses pixel data of the wrong length", () => {
  assert.throws(() => encodePng(new Uint8Array(10), 2, 2), /expected 16 bytes, got 10/);
});
