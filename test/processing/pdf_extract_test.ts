import assert from "node:assert/strict";
import { judgeTextLayer } from "../../src/processing/text_quality.ts";
import { assertAll } from "../helpers/assert_all.ts";
import { extractDocument } from "../../src/processing/extract.ts";
import { buildLines, extractPdf } from "../../src/processing/pdf_extract.ts";
import { textOperatorsHooked } from "../../src/processing/_pdfjs.ts";
import type { ExtractResult } from "../../src/processing/extract_result.ts";
import { CORPUS, corpusBytes } from "./_corpus.ts";

async function read(path: string): Promise<ExtractResult> {
  return await extractDocument(await corpusBytes("pdf/" + path), path);
}

Deno.test("PDF: scanned pages without a text layer are marked image-only", async () => {
  for (const file of ["scanned-ru-inspection-certificate.pdf", "scanned-zh-penalty-decision-ccitt.pdf"]) {
    const result = await read(file);
    assert.ok(result.pages.length > 0);
    for (const page of result.pages) {
      assert.deepEqual([page.marked, page.image_only], [true, true], `${file} p${page.page}`);
    }
  }
});

Deno.test("PDF: a scan with an invisible garbage OCR layer is marked but not image-only", async () => {
  const result = await read("scanned-ru-tax-form-bad-ocr.pdf");
  assert.equal(result.page_count, 8);
  assert.ok(result.pages.filter((p) => p.marked).length >= 6);
  assertAll(result.pages, (p) => !p.image_only);
});

Deno.test("PDF: diagram slides are marked, text slides over a background picture are not", async () => {
  const cncf = await read("cncf-standards-next-gen-cloud-slides.pdf");
  assert.equal(cncf.page_count, 18);
  assert.equal(cncf.pages[8]!.marked, true, "slide 9 is a box diagram drawn with lines");
  for (const n of [3, 4, 5, 14, 15, 17]) {
    assert.equal(cncf.pages[n - 1]!.marked, false, `slide ${n} is text only`);
  }
  const kcd = await read("kcd-ebpf-service-mesh-slides-zh.pdf");
  assert.match(kcd.pages[6]!.text, /Pod IP/);
  for (const n of [3, 7]) assert.equal(kcd.pages[n - 1]!.marked, false, `slide ${n} is bullet text`);
});

Deno.test("PDF: text-only book pages are not marked and keep their line breaks", async () => {
  const result = await read("pd-kids-public-domain-stories.pdf");
  assert.equal(result.page_count, 55);
  assert.equal(result.pages_estimated, false);
  assert.ok(result.pages.filter((p) => p.marked).length <= 2);
  assert.ok(result.pages[2]!.text.split("\n").length > 20);
});

Deno.test("PDF: figure pages are marked in a paper", async () => {
  const result = await read("picture-classification-figures.pdf");
  assert.equal(result.pages[0]!.marked, true);
  const tracemonkey = await read("tracemonkey-pldi-paper.pdf");
  assert.equal(tracemonkey.pages[0]!.marked, false, "the first page is text");
  assert.ok(tracemonkey.pages.some((p) => p.marked));
});

Deno.test("PDF: non-Latin text is extracted", async () => {
  assert.match((await read("cjk-zh-quarterly-report.pdf")).pages[0]!.text, /东北电气发展股份有限公司/);
  assert.match((await read("japanese-tex-notes.pdf")).pages[0]!.text, /マーケットモデル/);
  assert.match((await read("korean-card-benefits-tables.pdf")).pages[0]!.text, /삼성카드/);
  assert.match((await read("hebrew-rtl-word365.pdf")).pages[0]!.text, /שלום עולם/);
  assert.match((await read("arabic-rtl-word-export.pdf")).pages[0]!.text, /البرمجة/);
});

Deno.test("PDF: an encrypted PDF without a user password is read", async () => {
  const result = await read("encrypted-rc4-no-user-password.pdf");
  assert.equal(result.page_count, 2);
  assert.ok(result.pages[0]!.text.length > 1000);
});

Deno.test("PDF: what a page draws is read in the text pass, with the marks the operator lists give", async () => {
  const files = [...Deno.readDirSync(`${CORPUS}pdf`)]
    .map((entry) => entry.name)
    .filter((name) => name.endsWith(".pdf") && !name.startsWith("irs-internal-revenue-manual")) // 400 pages
    .sort();
  let pages = 0;
  let marked = 0;
  for (const name of files) {
    const bytes = await corpusBytes(`pdf/${name}`);
    const onePass = await extractPdf(bytes);
    const twoPasses = await extractPdf(bytes, { drawings: "operator-list" });
    // What is recorded (text and marks) is identical; the layouts Standard judges text layers by
    // may differ in specks (a page's two tiny pictures), never in the judgement.
    const { layouts: oneLayouts, ...oneRecorded } = onePass;
    const { layouts: twoLayouts, ...twoRecorded } = twoPasses;
    assert.deepEqual(oneRecorded, twoRecorded, name);
    assert.deepEqual(
      onePass.pages.map((p, i) => judgeTextLayer(p.text, oneLayouts![i]!)),
      twoPasses.pages.map((p, i) => judgeTextLayer(p.text, twoLayouts![i]!)),
      name,
    );
    pages += onePass.pages.length;
    marked += onePass.pages.filter((page) => page.marked).length;
  }
  assert.ok(textOperatorsHooked(), "the pdf.js text pass could not be hooked: extraction runs two passes");
  assert.ok(pages > 350 && marked > 40, `${pages} pages, ${marked} marked`);
});

Deno.test("PDF lines: words drawn right to left, each a run with a gap before the next, keep their spaces", () => {
  const run = (str: string, x: number, width: number) => ({
    str,
    transform: [10, 0, 0, 10, x, 700],
    width,
    hasEOL: false,
  });
  // Arabic as LibreOffice draws it: each word its own run, placed leftwards, no space glyphs.
  assert.equal(
    buildLines([run("لدى", 500, 20), run("الوزارات", 440, 50), run("التي", 405, 25)]),
    "لدى الوزارات التي",
  );
  // Runs that touch stay one word, in either direction.
  assert.equal(buildLines([run("com", 100, 20), run("mittee", 120, 30)]), "committee");
  assert.equal(buildLines([run("ات", 500, 12), run("الوزار", 460, 40)]), "اتالوزار");
});

Deno.test("PDF lines: control glyphs inside a word (LibreOffice's kashidas in justified Arabic) keep it one word", () => {
  const run = (str: string, x: number, width: number) => ({
    str,
    transform: [15.5, 0, 0, 15, x, 262.9],
    width,
    hasEOL: false,
  });
  // Page 101 of the Arabic UN report's PDF copy, as pdf.js reads it: U+0001 where LibreOffice drew kashidas.
  assert.equal(
    buildLines([
      run("- وق\u0001\u0001\u0001د ال\u0001\u0001\u0001تزمت الحكوم\u0001\u0001\u0001ة", 190.5, 264.1),
    ]),
    "- وقد التزمت الحكومة",
  );
  assert.equal(buildLines([run("a\tb\u007f\u0000c", 10, 30)]), "a bc");
});

Deno.test("PDF text: Arabic lam-alef ligatures read in reading order (خلال, not خالل)", async () => {
  // A Word export: its ligature glyphs map to لا, which pdf.js (and poppler) turned round with the line.
  const result = await extractPdf(await corpusBytes("pdf/arabic-rtl-word-export.pdf"));
  const text = result.pages.map((page) => page.text).join("\n");
  for (const word of ["المشكلات", "خلال", "الإنتاجية"]) assert.ok(text.includes(word), `"${word}" is read`);
  for (const swapped of ["المشكالت", "خالل", "اإلنتاجية"]) {
    assert.ok(!text.includes(swapped), `"${swapped}" is not`);
  }
});
