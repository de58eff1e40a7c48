import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { createRenderPool } from "../../src/render/render_pool.ts";
import { PageRenderError } from "../../src/render/render_png.ts";
import { pngSize } from "./_png.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const CORPUS = `${CORPUS_DIR}`;

Deno.test("hostile PDFs fail alone: every one answers, and the pool draws a good page afterwards", async () => {
  const pool = createRenderPool({ concurrency: 2, timeoutMs: 15_000 });
  try {
    const hostile = [...Deno.readDirSync(`${CORPUS}/hostile`)].filter((entry) => entry.name.endsWith(".pdf"))
      .map((entry) => entry.name).sort();
    assert.ok(hostile.length >= 20);
    const outcomes = await Promise.all(
      hostile.flatMap((name) =>
        (["image", "pdf"] as const).map(async (format) => {
          const pdfBytes = await Deno.readFile(`${CORPUS}/hostile/${name}`);
          try {
            const bytes = await pool.render({ pdfBytes, page: 1, format });
            if (format === "image") {
              const { width, height } = pngSize(bytes);
              assert.ok(width <= 1568 && height <= 1568, `${name}: ${width} x ${height}`);
            }
            return "drawn";
          } catch (error) {
            assert.ok(error instanceof PageRenderError, `${name} (${format}): ${error}`);
            assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
            return "refused";
          }
        })
      ),
    );
    assert.ok(outcomes.includes("refused") && outcomes.includes("drawn"));
    const good = await pool.render({
      pdfBytes: await Deno.readFile(`${CORPUS}/pdf/cncf-standards-next-gen-cloud-slides.pdf`),
      page: 5,
      format: "image",
    });
    assert.deepEqual(pngSize(good), { width: 1100, height: 619 });
  } finally {
    pool.close();
  }
});

Deno.test("a job past its time limit fails alone; its worker is replaced and the next job is drawn", async () => {
  const pool = createRenderPool({ concurrency: 1, timeoutMs: 30_000 });
  try {
    const scan = await Deno.readFile(`${CORPUS}/pdf/scanned-text-page-image-only.pdf`);
    await assert.rejects(
      pool.render({ pdfBytes: scan, page: 1, format: "image", timeoutMs: 5 }),
      { name: "PageRenderError", message: "Drawing page 1 took longer than 5 ms" },
    );
    const png = await pool.render({ pdfBytes: scan, page: 2, format: "image" });
    assert.deepEqual(pngSize(png), { width: 909, height: 1286 });
  } finally {
    pool.close();
  }
});

Deno.test("at most `concurrency` jobs run at once, on that many workers; all queued jobs finish, in both formats", async () => {
  const pool = createRenderPool({ concurrency: 2 });
  try {
    const pdfBytes = await Deno.readFile(`${CORPUS}/pdf/tracemonkey-pldi-paper.pdf`);
    const seen: Array<{ running: number; waiting: number; workers: number }> = [];
    const jobs = [1, 2, 3, 4, 5, 6].map((page) =>
      pool.render({ pdfBytes, page, format: page % 2 ? "image" : "pdf" }).finally(() =>
        seen.push(pool.load())
      )
    );
    // Settled together, so a failed check below leaves no job's rejection unhandled.
    const all = Promise.allSettled(jobs);
    const startedLoad = pool.load();
    const outcomes = await all;
    assert.deepEqual(startedLoad, { running: 2, waiting: 4, workers: 2 });
    const results = outcomes.map((outcome) => {
      assert.equal(outcome.status, "fulfilled", String((outcome as PromiseRejectedResult).reason));
      return (outcome as PromiseFulfilledResult<Uint8Array>).value;
    });
    // As each job ended, the next waiting one took its worker: never more than 2 running or alive.
    assert.equal(seen.length, 6);
    assertAll(seen, (load) => load.running <= 2 && load.workers <= 2, JSON.stringify(seen));
    // No job waited while a worker was free, and the queue only shrank to empty. (Not the exact sequence
    // 3, 2, 1, 0, 0, 0: two workers' answers can arrive in one turn of the event loop, and a job's
    // `finally` then sees both of their successors started.)
    assertAll(seen, (load) => load.waiting === 0 || load.running === 2, JSON.stringify(seen));
    const waiting = seen.map((load) => load.waiting);
    assert.ok(waiting.every((n, i) => i === 0 || n <= waiting[i - 1]!), `the queue never grew: ${waiting}`);
    assert.ok(waiting[0]! <= 3 && waiting.at(-1) === 0, `it emptied: ${waiting}`);
    results.forEach((bytes, index) => {
      if (index % 2 === 0) assert.deepEqual(pngSize(bytes), { width: 935, height: 1210 });
      else assert.equal(new TextDecoder().decode(bytes.subarray(0, 5)), "%PDF-");
    });
    assert.equal(pdfBytes.length, 1016315, "the caller keeps its bytes");
  } finally {
    pool.close();
  }
});

Deno.test("closing the pool rejects waiting jobs with one sentence", async () => {
  const pool = createRenderPool({ concurrency: 1 });
  const pdfBytes = await Deno.readFile(`${CORPUS}/pdf/tracemonkey-pldi-paper.pdf`);
  const first = pool.render({ pdfBytes, page: 1, format: "image" });
  const second = pool.render({ pdfBytes, page: 2, format: "image" });
  pool.close();
  await assert.rejects(first, { message: "Cannot draw the page: the render pool was closed" });
  await assert.rejects(second, { message: "Cannot draw the page: the render pool was closed" });
  await assert.rejects(pool.render({ pdfBytes, page: 1, format: "image" }), {
    message: "Cannot draw a page: the render pool is closed",
  });
});
