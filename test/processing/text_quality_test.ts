import assert from "node:assert/strict";
import { extractPdf } from "../../src/processing/pdf_extract.ts";
import {
  GARBAGE_MIN_WORDS,
  judgeTextLayer,
  oddWord,
  oddWordShare,
} from "../../src/processing/text_quality.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const read = async (name: string) => await extractPdf(await Deno.readFile(`${CORPUS_DIR}/pdf/${name}`));
const verdicts = (r: Awaited<ReturnType<typeof read>>) =>
  r.pages.map((p, i) => judgeTextLayer(p.text, r.layouts![i]!));

Deno.test("the bad OCR layer of the Russian tax form is garbage on every page; scans without a layer are missing", async () => {
  const tax = await read("scanned-ru-tax-form-bad-ocr.pdf");
  assert.deepEqual(verdicts(tax), Array(8).fill("garbage"));
  for (const page of tax.pages) assert.ok(oddWordShare(page.text).share >= 0.5, page.text.slice(0, 80));
  assert.deepEqual(verdicts(await read("scanned-zh-penalty-decision-ccitt.pdf")), [
    "missing",
    "missing",
    "missing",
  ]);
});

Deno.test("good born-digital layers in many scripts are kept on every page", async () => {
  for (
    const name of [
      "arabic-rtl-word-export.pdf",
      "hebrew-rtl-word365.pdf",
      "cjk-zh-quarterly-report.pdf",
      "korean-card-benefits-tables.pdf",
      "japanese-tex-notes.pdf",
      "chelsea-active-transport-plan-fr.pdf",
      "tracemonkey-pldi-paper.pdf",
      "federal-register-2020-17221.pdf",
    ]
  ) {
    const result = await read(name);
    const kept = verdicts(result);
    // Pages without any text but with a picture (a photo page) are "missing"; no text page is garbage.
    assert.ok(!kept.includes("garbage"), `${name}: ${kept.join(",")}`);
    for (const page of result.pages) {
      const { share, words } = oddWordShare(page.text);
      assert.ok(words < GARBAGE_MIN_WORDS || share < 0.25, `${name} p${page.page}: ${share}`);
    }
  }
});

Deno.test("odd words: misread glyphs are odd, names, codes, units and acronyms are not", () => {
  for (const w of ["Hanoroo6nO>KeHVIS'I", "CyMMa", "npltl", "Knn", "HanOrOBbiH"]) assert.ok(oddWord(w), w);
  for (
    const w of [
      "JavaScript",
      "iPhone",
      "PDFs",
      "COVID19",
      "10km",
      "(2019)",
      "McDonald",
      "état",
      "налога",
      "2017年8月16日",
    ]
  ) {
    assert.ok(!oddWord(w), w);
  }
});

Deno.test("a few characters over a large picture (a scanner's stamp) are a tiny layer: fewer than 25 beside a picture of 12% or more", () => {
  const scan = { largestPicture: 0.95, pictures: 1, paths: 0 };
  assert.equal(judgeTextLayer("Scanned by CamScanner", scan), "tiny");
  assert.equal(judgeTextLayer("Scanned by CamScanner", null), "tiny", "no layout known: judged as a scan");
  const chars24 = "Received 2023-04-17 #0041A"; // a date stamp: 24 characters once spaces are left out
  assert.equal(chars24.replace(/\s+/g, "").length, 24);
  assert.equal(judgeTextLayer(chars24, { largestPicture: 0.12, pictures: 1, paths: 0 }), "tiny");
  assert.equal(
    judgeTextLayer(`${chars24}y`, { largestPicture: 0.12, pictures: 1, paths: 0 }),
    null,
    "25 are kept",
  );
  assert.equal(
    judgeTextLayer(chars24, { largestPicture: 0.11, pictures: 1, paths: 0 }),
    null,
    "a small picture",
  );
});

Deno.test("a text layer is garbage from 30 words of which 35% are odd: one word or one odd word less is kept", () => {
  const odd = "CyMMa";
  const fine = "house";
  assert.ok(oddWord(odd) && !oddWord(fine));
  const layer = (odds: number, words: number) =>
    [...Array(odds).fill(odd), ...Array(words - odds).fill(fine)].join(" ");
  // No layout known: judged as a scan's layer would be (past the tiny rule: these are over 25 characters).
  assert.equal(judgeTextLayer(layer(30, 30), null), "garbage", "30 words, all odd");
  assert.equal(judgeTextLayer(layer(29, 29), null), null, "29 words are too few to judge");
  assert.equal(oddWordShare(layer(14, 40)).share, 0.35);
  assert.equal(judgeTextLayer(layer(14, 40), null), "garbage", "14 of 40 words odd: 35%");
  assert.equal(judgeTextLayer(layer(13, 40), null), null, "13 of 40 words odd: 32.5%");
});
