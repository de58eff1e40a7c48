import assert from "node:assert/strict";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { PDFDocument, rgb } from "pdf-lib";
import { closeKept, PageRenderError, pageSizePx, renderPagePng } from "../../src/render/render_png.ts";
import { inkShare, pdftoppmPng, pngSize } from "./_png.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const CORPUS = `${CORPUS_DIR}`;
const read = (path: string): Promise<Uint8Array> => Deno.readFile(`${CORPUS}/${path}`);

Deno.test("a 16:9 slide is drawn at 110 dpi as 1,100 x 619, a valid PNG with the slide on it", async () => {
  const { png, width, height } = await renderPagePng(
    await read("pdf/cncf-standards-next-gen-cloud-slides.pdf"),
    2,
  );
  assert.deepEqual({ width, height }, { width: 1100, height: 619 });
  assert.deepEqual(pngSize(png), { width: 1100, height: 619 });
  const ink = await inkShare(png);
  assert.ok(ink > 0.05 && ink < 0.6, `slide 2 has a photo and text, ink share ${ink}`);
});

Deno.test("colours keep their channels: a red, a green and a blue square are drawn red, green and blue", async () => {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([216, 72]);
  page.drawRectangle({ x: 0, y: 0, width: 72, height: 72, color: rgb(1, 0, 0) });
  page.drawRectangle({ x: 72, y: 0, width: 72, height: 72, color: rgb(0, 1, 0) });
  page.drawRectangle({ x: 144, y: 0, width: 72, height: 72, color: rgb(0, 0, 1) });
  const { png, width, height } = await renderPagePng(await pdf.save(), 1);
  const image = await loadImage(png);
  const canvas = createCanvas(width, height);
  canvas.getContext("2d").drawImage(image, 0, 0);
  const { data } = canvas.getContext("2d").getImageData(0, 0, width, height);
  const at = (x: number): number[] => [...data.subarray((55 * width + x) * 4, (55 * width + x) * 4 + 4)];
  assert.deepEqual(at(55), [255, 0, 0, 255], "red");
  assert.deepEqual(at(165), [0, 255, 0, 255], "green");
  assert.deepEqual(at(275), [0, 0, 255, 255], "blue");
});

Deno.test("a US Letter page keeps its size: 935 x 1,210", async () => {
  const { png, width, height } = await renderPagePng(await read("pdf/tracemonkey-pldi-paper.pdf"), 1);
  assert.deepEqual({ width, height }, { width: 935, height: 1210 });
  assert.deepEqual(pngSize(png), { width: 935, height: 1210 });
});

Deno.test("a landscape page keeps its aspect: 1,210 x 935", async () => {
  const { width, height } = await renderPagePng(await read("pdf/ca-warn-report-landscape-tables.pdf"), 1);
  assert.deepEqual({ width, height }, { width: 1210, height: 935 });
});

Deno.test("a page larger than 1,568 px at 110 dpi is scaled down to 1,568 on its longer side", async () => {
  // A real page (US Letter), placed on a page twice its size: 1,224 x 1,584 points.
  const source = await PDFDocument.load(await read("pdf/tracemonkey-pldi-paper.pdf"));
  const big = await PDFDocument.create();
  const [embedded] = await big.embedPdf(source, [0]);
  big.addPage([1224, 1584]).drawPage(embedded!, { x: 0, y: 0, xScale: 2, yScale: 2 });
  const { png, width, height } = await renderPagePng(await big.save(), 1);
  assert.equal(height, 1568);
  assert.equal(width, Math.round(1224 * 1568 / 1584));
  assert.deepEqual(pngSize(png), { width, height });
  assert.ok(await inkShare(png) > 0.01, "the scaled page still shows its text");
});

Deno.test("Chinese slides draw their glyphs (CMaps and fonts load): as much ink as pdftoppm", async () => {
  const path = `${CORPUS}/pdf/kcd-ebpf-service-mesh-slides-zh.pdf`;
  const ours = await renderPagePng(await Deno.readFile(path), 3);
  assert.deepEqual({ width: ours.width, height: ours.height }, { width: 1467, height: 825 });
  const mine = await inkShare(ours.png);
  const poppler = await inkShare(await pdftoppmPng(path, 3));
  assert.ok(Math.abs(mine - poppler) < 0.3 * poppler, `ink share ${mine} vs pdftoppm ${poppler}`);
});

Deno.test("the page size rule: 110 dpi, longer side capped at 1,568, never zero", () => {
  assert.deepEqual(pageSizePx(720, 405), { width: 1100, height: 619, scale: 110 / 72 });
  assert.deepEqual(pageSizePx(612, 792), { width: 935, height: 1210, scale: 110 / 72 });
  const huge = pageSizePx(14400, 100);
  assert.equal(huge.width, 1568);
  assert.equal(huge.height, 11);
  assert.equal(pageSizePx(14400, 1).height, 1);
  assert.throws(() => pageSizePx(0, 100), {
    name: "PageRenderError",
    message: "Cannot draw a page of 0 x 100 points: it has no area",
  });
});

Deno.test("a page past the end, or page 0, is refused with the page count", async () => {
  const pdf = await read("pdf/cncf-standards-next-gen-cloud-slides.pdf");
  await assert.rejects(renderPagePng(pdf, 19), (error: Error) => {
    assert.ok(error instanceof PageRenderError);
    assert.equal(error.message, "Page 19 is past the end: the PDF has 18 pages");
    return true;
  });
  await assert.rejects(renderPagePng(pdf, 0), {
    name: "PageRenderError",
    message: 'Page "0" does not exist: pages are numbered from 1',
  });
});

Deno.test("hostile images: a 34,862 x 4,332 soft mask is refused at once; a 4-byte 'JPEG' of 7,300 x 7,600 draws within bounds", async () => {
  const started = performance.now();
  await assert.rejects(
    renderPagePng(await read("hostile/huge-smask-34862x4332.pdf"), 1),
    /34862 x 4332 pixels/,
  );
  assert.ok(performance.now() - started < 2000);
  const claims = await renderPagePng(await read("hostile/jpeg-claims-7300x7600-in-4-bytes.pdf"), 1);
  assert.ok(claims.width <= 1568 && claims.height <= 1568);
  const wide = await renderPagePng(await read("hostile/huge-jpeg-40000x512.pdf"), 1);
  assert.deepEqual({ width: wide.width, height: wide.height }, { width: 764, height: 191 });
});

Deno.test("broken files fail with one sentence: empty, password-protected", async () => {
  await assert.rejects(
    renderPagePng(await read("hostile/empty-zero-bytes.pdf"), 1),
    /^PageRenderError: Cannot open the PDF: /,
  );
  await assert.rejects(
    renderPagePng(await read("hostile/password-required-user-pw-test.pdf"), 1),
    { message: "Cannot open the PDF: it needs a password" },
  );
});

Deno.test("pages drawn one after another from the same file (its document kept open) are the pictures a fresh open draws", async () => {
  const pdf = await read("pdf/tracemonkey-pldi-paper.pdf");
  const kept = [];
  for (const page of [1, 2, 3]) kept.push((await renderPagePng(pdf, page)).png);
  await assert.rejects(renderPagePng(pdf, 15), { message: "Page 15 is past the end: the PDF has 14 pages" });
  await assert.rejects(renderPagePng(pdf, 0), {
    message: 'Page "0" does not exist: pages are numbered from 1',
  });
  for (const page of [1, 2, 3]) {
    await closeKept();
    assert.deepEqual((await renderPagePng(pdf, page)).png, kept[page - 1], `page ${page}`);
  }
  // Another file in between, then the first again.
  await renderPagePng(await read("pdf/cncf-standards-next-gen-cloud-slides.pdf"), 2);
  assert.deepEqual((await renderPagePng(pdf, 2)).png, kept[1]);
});
