import assert from "node:assert/strict";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingError } from "../../src/processing/processing_error.ts";
import { processedPageSchema } from "../../events/types.ts";
import { CORPUS } from "./_corpus.ts";
import { HOSTILE_OUTCOMES as EXPECTED } from "./_hostile_outcomes.ts";

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
