import assert from "node:assert/strict";
import { createCanvas } from "@napi-rs/canvas";
import { JpegImage } from "pdfjs-dist/image_decoders/pdf.image_decoders.mjs";
import { decodeJpegNatively, readJpegHeader } from "../../src/render/_native_jpeg.ts";
import { nativeJpegDecoding } from "../../src/render/pdfjs_loader.ts";

/** A 160 x 120 JPEG of colour gradients and a dark square, as the canvas encodes it (JFIF, YCbCr). */
function sampleJpeg(): Uint8Array {
  const canvas = createCanvas(160, 120);
  const context = canvas.getContext("2d");
  const gradient = context.createLinearGradient(0, 0, 160, 120);
  gradient.addColorStop(0, "#d02020");
  gradient.addColorStop(0.5, "#20b040");
  gradient.addColorStop(1, "#2040e0");
  context.fillStyle = gradient;
  context.fillRect(0, 0, 160, 120);
  context.fillStyle = "#101010";
  context.fillRect(40, 30, 50, 40);
  return new Uint8Array(canvas.encodeSync("jpeg", 90));
}

/** The JPEG with an Exif segment saying "turn 90 degrees" (orientation 6) right after its start. */
function withExifOrientation(jpeg: Uint8Array): Uint8Array {
  const tiff = [
    ...[0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00], // little-endian TIFF, first IFD at 8
    ...[0x01, 0x00], // one entry
    ...[0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00], // Orientation = 6
    ...[0x00, 0x00, 0x00, 0x00], // no next IFD
  ];
  const payload = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00, ...tiff]; // "Exif\0\0"
  const segment = [0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload];
  return new Uint8Array([...jpeg.subarray(0, 2), ...segment, ...jpeg.subarray(2)]);
}

function pdfjsRgb(jpeg: Uint8Array): Uint8ClampedArray {
  const image = new JpegImage();
  image.parse(jpeg);
  return image.getData({ width: image.width, height: image.height, forceRGB: true, isSourcePDF: true });
}

Deno.test("the render worker's pdf.js decodes JPEGs natively: the patch applies to the pinned pdf.js", async () => {
  assert.equal(await nativeJpegDecoding(), true);
});

Deno.test("a JPEG decodes natively to what pdf.js's own decoder gives, within a few levels", async () => {
  const jpeg = sampleJpeg();
  const rgb = await decodeJpegNatively(jpeg, { width: 160, height: 120 });
  assert.ok(rgb);
  const theirs = pdfjsRgb(jpeg);
  assert.equal(rgb.length, theirs.length);
  let sum = 0;
  for (let i = 0; i < rgb.length; i++) sum += Math.abs(rgb[i]! - theirs[i]!);
  assert.ok(sum / rgb.length < 1.5, `mean difference ${sum / rgb.length}`);
  // RGBA when pdf.js draws it: the same colours, opaque.
  const rgba = await decodeJpegNatively(jpeg, { width: 160, height: 120, forceRGBA: true });
  assert.ok(rgba);
  assert.equal(rgba.length, 160 * 120 * 4);
  for (let p = 0; p < 160 * 120; p += 97) {
    assert.deepEqual([...rgba.subarray(p * 4, p * 4 + 4)], [...rgb.subarray(p * 3, p * 3 + 3), 255]);
  }
});

Deno.test("an Exif orientation is ignored, as pdf.js ignores it: the PDF says how a picture is turned", async () => {
  const jpeg = sampleJpeg();
  const plain = await decodeJpegNatively(jpeg, { width: 160, height: 120 });
  const turned = await decodeJpegNatively(withExifOrientation(jpeg), { width: 160, height: 120 });
  assert.ok(plain && turned);
  assert.deepEqual(turned, plain);
});

Deno.test("JPEGs the two decoders could read differently are left to pdf.js", async () => {
  const jpeg = sampleJpeg();
  const header = readJpegHeader(jpeg);
  assert.ok(header);
  assert.deepEqual({ width: header.width, height: header.height, components: header.components }, {
    width: 160,
    height: 120,
    components: 3,
  });
  // Another size than the PDF gives, a Decode array, a ColorTransform.
  assert.equal(await decodeJpegNatively(jpeg, { width: 161, height: 120 }), null);
  assert.equal(await decodeJpegNatively(jpeg, { width: 160, height: 120, decodeTransform: [1, 0] }), null);
  assert.equal(await decodeJpegNatively(jpeg, { width: 160, height: 120, colorTransform: 1 }), null);
  // Four components (CMYK), and a frame type other than baseline or progressive (lossless).
  const sof = jpeg.findIndex((b, i) => b === 0xff && jpeg[i + 1] === 0xc0);
  const cmyk = jpeg.slice();
  cmyk[sof + 9] = 4;
  assert.equal(await decodeJpegNatively(cmyk, { width: 160, height: 120 }), null);
  const lossless = jpeg.slice();
  lossless[sof + 1] = 0xc3;
  assert.equal(readJpegHeader(lossless), null);
  // JFIF says YCbCr to libjpeg, Adobe's transform 0 says RGB to pdf.js.
  const adobe = [0x41, 0x64, 0x6f, 0x62, 0x65, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00]; // "Adobe", transform 0
  const segment = [0xff, 0xee, 0x00, adobe.length + 2, ...adobe];
  const disputed = new Uint8Array([...jpeg.subarray(0, sof), ...segment, ...jpeg.subarray(sof)]);
  assert.deepEqual(readJpegHeader(disputed)?.ycc, { pdfjs: false, libjpeg: true });
  assert.equal(await decodeJpegNatively(disputed, { width: 160, height: 120 }), null);
  // Not a JPEG at all, or one cut off before its frame.
  assert.equal(await decodeJpegNatively(new Uint8Array([1, 2, 3, 4]), { width: 160, height: 120 }), null);
  assert.equal(readJpegHeader(jpeg.subarray(0, sof)), null);
});
