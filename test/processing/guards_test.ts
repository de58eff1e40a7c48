/**
 * Processing's size guards, met by real files made for the purpose: a PDF of
 * more pages than Sergo reads, and a real deck with its zip padded to just
 * within and just past the entry limit. Each refusal is one sentence naming
 * the limit.
 */
import assert from "node:assert/strict";
import { strToU8, unzipSync, zipSync } from "fflate";
import { PDFDocument } from "pdf-lib";
import {
  MAX_PDF_PAGES,
  MAX_ZIP_ENTRIES,
  MAX_ZIP_ENTRY_BYTES,
  MAX_ZIP_RATIO,
  MAX_ZIP_TOTAL_BYTES,
} from "../../src/processing/basic_rules.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { buildBombDocx, buildPaddedDocx, WORD_PARTS_BYTES } from "../helpers/zip_bomb.ts";

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

Deno.test("a Word file whose parts add up to 500 MB is read; one byte more and it is refused", async () => {
  assert.equal(MAX_ZIP_TOTAL_BYTES, 500_000_000);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const read = await pool.extract(buildPaddedDocx(500_000_000), "padded.docx");
    assert.match(read.pages.map((page) => page.text).join("\n"), /A short memo between many padding parts\./);
    await assert.rejects(pool.extract(buildPaddedDocx(500_000_001), "padded.docx"), {
      name: "ProcessingError",
      message: "This zip archive would expand to more than 500 MB, too large to read.",
    });
  } finally {
    await pool.close();
  }
});

Deno.test("one part of more than 200 MB is refused as such; a part of 1,000,000 bytes is read however far it expands, and one byte more that expands past 200 times is a zip bomb", async () => {
  assert.equal(MAX_ZIP_ENTRY_BYTES, 200_000_000);
  assert.equal(MAX_ZIP_RATIO, 200);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    // 201 MB of XML in one part, about 0.6 MB of file: the part's size is checked before the ratio.
    await assert.rejects(pool.extract(buildBombDocx(201).bytes, "bomb.docx"), {
      name: "ProcessingError",
      message: "This zip archive would expand to more than 200 MB in one part, too large to read.",
    });
    // A part of exactly 1,000,000 bytes is too small to be called a bomb, however well it packs.
    const oneMb = buildPaddedDocx(1_000_000 + WORD_PARTS_BYTES);
    assert.ok(oneMb.length * MAX_ZIP_RATIO < 1_000_000, `the whole file is ${oneMb.length} bytes`);
    const read = await pool.extract(oneMb, "padded.docx");
    assert.match(read.pages[0]!.text, /A short memo/);
    await assert.rejects(
      pool.extract(buildPaddedDocx(1_000_001 + WORD_PARTS_BYTES, 1_000_001), "padded.docx"),
      {
        name: "ProcessingError",
        message: /^This zip archive looks like a zip bomb: "customXml\/pad0\.xml" expands \d{3,} times\.$/,
      },
    );
  } finally {
    await pool.close();
  }
});
