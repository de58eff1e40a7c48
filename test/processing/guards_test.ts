/**
 * Processing's size guards, met by real files made for the purpose: a PDF of
 * more pages than Sergo reads, and a real deck with its zip padded to just
 * within and just past the entry limit. Each refusal is one sentence naming
 * the limit.
 */
import assert from "node:assert/strict";
import { strToU8, unzipSync, zipSync } from "fflate";
import { PDFDocument } from "pdf-lib";
import { MAX_PDF_PAGES, MAX_ZIP_ENTRIES } from "../../src/processing/basic_rules.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

Deno.test("a PDF of 5,001 pages is refused before any page is read", async () => {
  assert.equal(MAX_PDF_PAGES, 5000);
  const pdf = await PDFDocument.create();
  for (let i = 0; i < 5001; i++) pdf.addPage([200, 200]);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    await assert.rejects(pool.extract(await pdf.save(), "many-pages.pdf"), {
      name: "ProcessingError",
      message: "This PDF claims 5001 pages, more than the 5000 pages Sergo reads.",
    });
  } finally {
    await pool.close();
  }
});

Deno.test("a deck whose zip holds 10,000 entries is read; one more entry and it is refused", async () => {
  assert.equal(MAX_ZIP_ENTRIES, 10_000);
  const deck = unzipSync(await Deno.readFile(`${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`));
  const padded = (entries: number) => {
    const files: Record<string, Uint8Array> = { ...deck };
    for (let i = Object.keys(deck).length; i < entries; i++) files[`customXml/pad${i}.xml`] = strToU8("<a/>");
    return zipSync(files, { level: 0 });
  };
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const read = await pool.extract(padded(10_000), "padded.pptx");
    assert.equal(read.page_count, 6);
    await assert.rejects(pool.extract(padded(10_001), "padded.pptx"), {
      name: "ProcessingError",
      message: "This zip archive has more than 10000 entries, too many to read.",
    });
  } finally {
    await pool.close();
  }
});
