/**
 * The declared-image-size guard reads sizes as a PDF reader does: a
 * 50,000 × 50,000 image whose `/Width` is an indirect object, whose keys are
 * written with `#xx` name escapes, or whose size sits in an object stream is
 * refused before pdf.js draws anything, like one with direct values.
 */
import assert from "node:assert/strict";
import { PDFDocument, PDFName, PDFNumber } from "pdf-lib";
import { largestDeclaredImage } from "../../src/render/image_size_guard.ts";
import { renderPageGray, renderPagePng } from "../../src/render/render_png.ts";

/**
 * A PDF of numbered objects (bodies without `n 0 obj`), with a correct cross-reference table;
 * `headers` writes some objects' `n 0 obj` differently.
 */
function rawPdf(objects: string[], headers: Record<number, string> = {}): Uint8Array {
  let out = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${headers[i + 1] ?? `${i + 1} 0 obj`}\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Uint8Array.from(out, (c) => c.charCodeAt(0));
}

/** One page drawing image 4 0 R, whose dictionary is `imageDict`; object 5 holds 50000. */
function pageWithImage(imageDict: string, headers: Record<number, string> = {}): Uint8Array {
  const content = "q 200 0 0 200 50 50 cm /Im1 Do Q";
  return rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 6 0 R >>",
    `<< ${imageDict} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\x00\nendstream`,
    "50000",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ], headers);
}

const FORMS: Record<string, () => Promise<Uint8Array>> = {
  "indirect /Width 5 0 R": () =>
    Promise.resolve(pageWithImage("/Type /XObject /Subtype /Image /Width 5 0 R /Height 5 0 R")),
  "escaped /W#69dth": () =>
    Promise.resolve(pageWithImage("/Type /XObject /Subtype /Image /W#69dth 50000 /H#65ight 50000")),
  "escaped /Subtype /Im#61ge": () =>
    Promise.resolve(pageWithImage("/Type /XObject /Subtype /Im#61ge /Width 50000 /Height 50000")),
  "/W and /H (pdf.js reads an image's size so)": () =>
    Promise.resolve(pageWithImage("/Type /XObject /Subtype /Image /W 50000 /H 50000")),
  "indirect sizes whose object header has a comment in it": () =>
    Promise.resolve(
      pageWithImage("/Type /XObject /Subtype /Image /Width 5 0 R /Height 5 0 R", {
        5: "5 0 % the size\nobj",
      }),
    ),
  "sizes in an object stream": async () => {
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([300, 300]);
    const side = pdf.context.register(PDFNumber.of(50000));
    const image = pdf.context.register(pdf.context.flateStream(new Uint8Array(16), {
      Type: "XObject",
      Subtype: "Image",
      Width: side,
      Height: side,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    }));
    page.node.setXObject(PDFName.of("Im1"), image);
    const content = pdf.context.register(pdf.context.stream("q 200 0 0 200 50 50 cm /Im1 Do Q"));
    page.node.set(PDFName.of("Contents"), content);
    const bytes = await pdf.save({ useObjectStreams: true });
    assert.ok(
      new TextDecoder("latin1").decode(bytes).includes("/ObjStm"),
      "the sizes sit in an object stream",
    );
    return bytes;
  },
};

for (const [form, make] of Object.entries(FORMS)) {
  Deno.test(`declared image size: a 50,000 x 50,000 image with ${form} is refused before drawing`, async () => {
    const bytes = await make();
    assert.deepEqual(await largestDeclaredImage(bytes), { width: 50000, height: 50000 });
    const started = performance.now();
    const refused = {
      name: "PageRenderError",
      message:
        "Cannot draw page 1: the PDF declares an image of 50000 x 50000 pixels, more than the 64000000 pixels allowed",
    };
    await assert.rejects(renderPagePng(bytes, 1), refused);
    await assert.rejects(renderPageGray(bytes, 1, 300), refused);
    assert.ok(performance.now() - started < 10_000, "refused at once, not drawn");
  });
}

Deno.test("declared image size: a small image with indirect sizes is drawn", async () => {
  const bytes = rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 6 0 R >>",
    "<< /Type /XObject /Subtype /Image /W#69dth 5 0 R /Height 5 0 R /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n\x00\x80\x80\x00\nendstream",
    "2",
    "<< /Length 32 >>\nstream\nq 200 0 0 200 50 50 cm /Im1 Do Q\nendstream",
  ]);
  assert.deepEqual(await largestDeclaredImage(bytes), { width: 2, height: 2 });
  const png = await renderPagePng(bytes, 1);
  assert.ok(png.width > 0 && png.height > 0);
});
