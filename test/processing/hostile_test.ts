import assert from "node:assert/strict";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingError } from "../../src/processing/processing_error.ts";
import { processedPageSchema } from "../../events/types.ts";
import { CORPUS } from "./_corpus.ts";

/** Every hostile file's outcome: refused (with the reason), or read. */
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
  // The rest, as Sergo answers them today: a change of outcome must be a decision, not an accident.
  "deeply-nested-arrays.pdf": /^This PDF cannot be read: /,
  "garbage-dictionary-keys.pdf": /structure is damaged beyond repair/,
  "missing-endstream-no-trailer.pdf": /structure is damaged beyond repair/,
  "pages-tree-too-deep.pdf": /^This PDF cannot be read: /,
  "xxe-external-entity-in-body.docx": /External entities are not supported/,
  "fuzzed-bad-central-directory.docx": /no Word document or PowerPoint presentation part/,
  "fuzzed-bad-central-directory.pptx": /would expand to more than 500 MB/,
  "broken-lzw-stream.pdf": "read",
  "broken-xref-needs-reconstruction.pdf": "read",
  "fuzzed-ghostscript-698804.pdf": "read",
  "huge-jpeg-40000x512.pdf": "read",
  "huge-smask-34862x4332.pdf": "read",
  "javascript-openaction-alert.pdf": "read",
  "jpeg-claims-7300x7600-in-4-bytes.pdf": "read",
  "malformed-pptx.pptx": "read",
  "page-count-213-million.pdf": "read",
  "page-count-negative.pdf": "read",
  "pages-tree-loop.pdf": "read",
  "self-referencing-stream-length.pdf": "read",
  "truncated-in-trailer.pdf": "read",
  "type3-content-stream-cycle.pdf": "read",
  "xref-prev-loop.pdf": "read",
  "xxe-dtd-in-content-types.docx": "read",
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
    assert.deepEqual(
      files.filter((name) => !(name in EXPECTED)),
      [],
      "every hostile file has its outcome stated",
    );
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
