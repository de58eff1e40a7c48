import assert from "node:assert/strict";
import { detectType } from "../../src/processing/detect_type.ts";
import { ProcessingError } from "../../src/processing/processing_error.ts";
import { corpusBytes } from "./_corpus.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const cases: [string, string][] = [
  ["pdf/hebrew-rtl-word365.pdf", "pdf"],
  ["pptx/smartart-simple.pptx", "pptx"],
  ["docx/docling-word-sample.docx", "docx"],
  ["hostile/main-part-named-document2.docx", "docx"],
  ["text/markitdown-readme.md", "md"],
  ["text/fake-text-utf16-bom.txt", "txt"],
  ["text/udhr-article-1-all-languages.txt", "txt"],
];

for (const [path, type] of cases) {
  Deno.test(`detectType reads ${path} as ${type}`, async () => {
    assert.equal(detectType(await corpusBytes(path), path.split("/")[1]!), type);
  });
}

const refusals: [string, RegExp][] = [
  ["hostile/legacy-word97-doc-named.docx", /legacy Word 97–2003 document/],
  ["hostile/encrypted-ole2-container-named.docx", /password-protected Office document/],
  ["hostile/xml-bomb-xlsx-named.docx", /Excel workbook/],
  ["hostile/zip-without-document-part.docx", /no Word document or PowerPoint presentation part/],
  ["hostile/empty-zero-bytes.pdf", /empty \(0 bytes\)/],
  ["hostile/whitespace-only.txt", /only whitespace/],
];

for (const [path, reason] of refusals) {
  Deno.test(`detectType refuses ${path} with a clear reason`, () => {
    assert.throws(
      () => detectType(new Uint8Array(Deno.readFileSync(`${CORPUS_DIR}/` + path)), path),
      (e) => {
        assert.ok(e instanceof ProcessingError);
        assert.match(e.message, reason);
        assert.match(e.message, /\.$/);
        return true;
      },
    );
  });
}

Deno.test("detectType refuses content that contradicts the extension", async () => {
  const pdf = await corpusBytes("pdf/hebrew-rtl-word365.pdf");
  assert.throws(() => detectType(pdf, "report.docx"), /is a PDF, but its name "report.docx" says otherwise/);
  const deck = await corpusBytes("pptx/smartart-simple.pptx");
  assert.throws(() => detectType(deck, "deck.docx"), /PowerPoint presentation/);
});

Deno.test("detectType finds a PDF header after leading junk and refuses binary text", () => {
  const junk = new TextEncoder().encode("garbage\n%PDF-1.4\n");
  assert.equal(detectType(junk, "x.pdf"), "pdf");
  assert.throws(() => detectType(new Uint8Array([0x41, 0x00, 0x42, 0x43]), "a.txt"), /not text/);
});
