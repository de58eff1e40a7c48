import assert from "node:assert/strict";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingError } from "../../src/processing/processing_error.ts";
import { extractDocument } from "../../src/processing/extract.ts";
import { corpusBytes } from "./_corpus.ts";

async function failure(promise: Promise<unknown>): Promise<ProcessingError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProcessingError);
    return error;
  }
  assert.fail("expected a ProcessingError");
}

Deno.test("pool: a document over the time limit fails alone and the slot keeps working", async () => {
  // The 400-page manual takes seconds to read, so it is always past 0.3 s; the document after it gets
  // a time limit no machine's load reaches, and must be read by the slot's fresh reader.
  const pool = createExtractionPool({ concurrency: 1, timeoutMs: 300 });
  try {
    const slow = pool.extract(
      await corpusBytes("pdf/irs-internal-revenue-manual-2-3-59-400p.pdf"),
      "irs.pdf",
    );
    const next = pool.extract(await corpusBytes("text/markitdown-readme.md"), "README.md", {
      timeoutMs: 600_000,
    });
    assert.equal((await failure(slow)).message, "Reading this file took longer than 0.3 s.");
    assert.equal((await next).type, "md");
  } finally {
    await pool.close();
  }
});

Deno.test("pool: a document that exhausts the memory bound fails alone with a reason", async () => {
  const pool = createExtractionPool({ concurrency: 1, memoryMb: 40 });
  try {
    const big = pool.extract(
      await corpusBytes("docx/doj-chapter13-trustee-handbook-long.docx"),
      "handbook.docx",
    );
    const next = pool.extract(await corpusBytes("text/markitdown-readme.md"), "README.md");
    assert.equal((await failure(big)).message, "Reading this file needed more than 40 MB of memory.");
    assert.equal((await next).type, "md");
  } finally {
    await pool.close();
  }
});

Deno.test("pool: results match in-process extraction and refusals keep their reason", async () => {
  const pool = createExtractionPool({ concurrency: 2 });
  try {
    const [deck, pdf, refused, japanese] = await Promise.allSettled([
      pool.extract(await corpusBytes("pptx/docling-sample-table-notes.pptx"), "sample.pptx"),
      pool.extract(await corpusBytes("pdf/hebrew-rtl-word365.pdf"), "hebrew.pdf"),
      pool.extract(await corpusBytes("hostile/password-required-user-pw-test.pdf"), "locked.pdf"),
      // CJK needs pdf.js CMaps: the sandboxed reader must be able to read them.
      pool.extract(await corpusBytes("pdf/japanese-tex-notes.pdf"), "notes.pdf"),
    ]);
    assert.ok(japanese.status === "fulfilled" && /マーケットモデル/.test(japanese.value.pages[0]!.text));
    assert.ok(deck.status === "fulfilled" && deck.value.page_count === 3);
    assert.ok(pdf.status === "fulfilled" && /שלום/.test(pdf.value.pages[0]!.text));
    // The same results as reading in this process.
    assert.deepEqual(
      deck.value,
      await extractDocument(await corpusBytes("pptx/docling-sample-table-notes.pptx"), "sample.pptx"),
    );
    assert.deepEqual(
      pdf.value,
      await extractDocument(await corpusBytes("pdf/hebrew-rtl-word365.pdf"), "hebrew.pdf"),
    );
    assert.ok(
      refused.status === "rejected" && refused.reason.message === "This PDF needs a password to open.",
    );
  } finally {
    await pool.close();
  }
});
