import assert from "node:assert/strict";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingError } from "../../src/processing/processing_error.ts";
import { processedPageSchema } from "../../events/types.ts";
import { CORPUS } from "./_corpus.ts";

/** Hostile files whose MANIFEST entry states an outcome: refused (with the reason), or read. */
const EXPECTED: Record<string, RegExp | "read"> = {
  "empty-zero-bytes.pdf": /empty \(0 bytes\)/,
  "empty-zero-bytes.txt": /empty \(0 bytes\)/,
  "whitespace-only.txt": /only whitespace/,
  "password-required-user-pw-test.pdf": /^This PDF needs a password to open\.$/,
  "legacy-word97-doc-named.docx": /legacy Word 97–2003 document/,
  "encrypted-ole2-container-named.docx": /password-protected/,
  "xml-bomb-xlsx-named.docx": /Excel workbook/,
  "zip-without-document-part.docx": /no Word document/,
  "truncated-zip.docx": /damaged zip archive/,
  "truncated-real-deck-no-eocd.pptx": /damaged zip archive/,
  "fuzzed-not-a-zip.pptx": /damaged zip archive/,
  "main-part-named-document2.docx": "read",
  "outlines-loop.pdf": "read",
  "pptx-malformed-pictures.pptx": "read",
};

const TIMEOUT_MS = 20_000;

Deno.test("every hostile file ends in a clear refusal or a valid result, in time, without crashing", async () => {
  const pool = createExtractionPool({ concurrency: 2, timeoutMs: TIMEOUT_MS, memoryMb: 512 });
  try {
    const files = [...Deno.readDirSync(CORPUS + "hostile")].map((e) => e.name).sort();
    assert.ok(files.length >= 30);
    const outcomes = await Promise.all(files.map(async (name) => {
      const started = performance.now();
      try {
        const result = await pool.extract(await Deno.readFile(`${CORPUS}hostile/${name}`), name);
        return { name, result, ms: performance.now() - started };
      } catch (error) {
        return { name, error, ms: performance.now() - started };
      }
    }));
    for (const o of outcomes) {
      assert.ok(o.ms < TIMEOUT_MS + 5_000, `${o.name} took ${o.ms} ms`);
      const expected = EXPECTED[o.name];
      if ("error" in o) {
        assert.ok(o.error instanceof ProcessingError, `${o.name}: ${o.error}`);
        assert.match(o.error.message, /^[A-Z].*\.$/s, `${o.name}: one sentence`);
        assert.ok(o.error.message.length < 400);
        if (expected === "read") assert.fail(`${o.name} should be read: ${o.error.message}`);
        if (expected) assert.match(o.error.message, expected, o.name);
      } else {
        if (expected instanceof RegExp) assert.fail(`${o.name} should be refused`);
        assert.equal(o.result.page_count, o.result.pages.length, o.name);
        for (const page of o.result.pages) processedPageSchema.parse(page);
      }
    }
    const outlines = outcomes.find((o) => o.name === "outlines-loop.pdf");
    assert.equal(outlines && "result" in outlines ? outlines.result?.page_count : undefined, 30);
  } finally {
    await pool.close();
  }
});
