import assert from "node:assert/strict";
import { onePagePdf } from "../../src/render/one_page_pdf.ts";

import { openPdf } from "../../src/render/pdfjs_loader.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";

const CORPUS = `${CORPUS_DIR}`;

async function pdftotext(pdf: Uint8Array | string, page?: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-pdftotext-" });
  try {
    const path = typeof pdf === "string" ? pdf : `${dir}/in.pdf`;
    if (typeof pdf !== "string") await Deno.writeFile(path, pdf);
    const range = page ? ["-f", String(page), "-l", String(page)] : [];
    const out = await new Deno.Command(await needs("pdftotext"), {
      args: [...range, path, "-"],
      stderr: "null",
    }).output();
    assert.ok(out.success, "pdftotext failed");
    return new TextDecoder().decode(out.stdout).replace(/\s+/g, " ").trim();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function pageCount(pdf: Uint8Array): Promise<number> {
  const doc = await openPdf(pdf);
  const count = doc.numPages;
  await doc.destroy();
  return count;
}

Deno.test("a one-page PDF has exactly that page, and its text extracts as in the original", async () => {
  const path = `${CORPUS}/pdf/tracemonkey-pldi-paper.pdf`;
  const pdf = await onePagePdf(await Deno.readFile(path), 3);
  assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
  assert.equal(await pageCount(pdf), 1);
  const expected = await pdftotext(path, 3);
  assert.ok(expected.length > 3000, "page 3 of the paper is full of text");
  assert.equal(await pdftotext(pdf), expected);
});

Deno.test("a one-page PDF of a Chinese slide keeps its CJK text layer", async () => {
  const pdf = await onePagePdf(await Deno.readFile(`${CORPUS}/pdf/kcd-ebpf-service-mesh-slides-zh.pdf`), 3);
  assert.equal(await pageCount(pdf), 1);
  assert.match(await pdftotext(pdf), /使用 eBPF 代替 iptables 加速服务网格/);
});

Deno.test("an encrypted PDF (empty user password) is cut out by pdf.js, text kept", async () => {
  const pdf = await onePagePdf(await Deno.readFile(`${CORPUS}/pdf/encrypted-rc4-no-user-password.pdf`), 2);
  assert.equal(await pageCount(pdf), 1);
  assert.match(await pdftotext(pdf), /^Investment Home Loan Interest Rates/);
});

Deno.test("a damaged page tree that pdf-lib cannot follow is cut out by pdf.js", async () => {
  const pdf = await onePagePdf(await Deno.readFile(`${CORPUS}/hostile/pages-tree-loop.pdf`), 1);
  assert.equal(await pageCount(pdf), 1);
});

Deno.test("a page past the end is refused with the page count", async () => {
  const bytes = await Deno.readFile(`${CORPUS}/pdf/cncf-standards-next-gen-cloud-slides.pdf`);
  await assert.rejects(onePagePdf(bytes, 40), {
    name: "PageRenderError",
    message: "Page 40 is past the end: the PDF has 18 pages",
  });
  await assert.rejects(onePagePdf(bytes, 0), {
    name: "PageRenderError",
    message: 'Cannot cut out page "0": pages are numbered from 1',
  });
});
