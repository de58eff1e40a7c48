import assert from "node:assert/strict";
import { join } from "node:path";
import { BlobStore } from "../../src/blob_store.ts";
import { PageViews } from "../../src/render/page_cache.ts";
import { createRenderPool, type RenderJob, type RenderPool } from "../../src/render/render_pool.ts";
import { pngSize } from "./_png.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const CORPUS = `${CORPUS_DIR}`;

/** A real pool that counts the jobs it is given. */
function countingPool(): RenderPool & { jobs: RenderJob[] } {
  const pool = createRenderPool({ concurrency: 2 });
  const jobs: RenderJob[] = [];
  return {
    jobs,
    render(job: RenderJob): Promise<Uint8Array> {
      jobs.push(job);
      return pool.render(job);
    },
    close: () => pool.close(),
    load: () => pool.load(),
  };
}

async function setup(): Promise<{ dir: string; blobs: BlobStore; cache: BlobStore; sha: string }> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-page-cache-" });
  const blobs = new BlobStore(join(dir, "blobs"));
  const cache = new BlobStore(join(dir, "cache"));
  const sha = await blobs.write(
    await Deno.readFile(`${CORPUS}/pdf/cncf-standards-next-gen-cloud-slides.pdf`),
  );
  return { dir, blobs, cache, sha };
}

Deno.test("a cached page view returns identical bytes, fast, without drawing again", async () => {
  const { dir, blobs, cache, sha } = await setup();
  const pool = countingPool();
  try {
    const views = new PageViews(blobs, pool, { cache });
    let started = performance.now();
    const first = await views.view(sha, 2, "image");
    const firstMs = performance.now() - started;
    assert.deepEqual(pngSize(first), { width: 1100, height: 619 });
    started = performance.now();
    const second = await views.view(sha, 2, "image");
    const secondMs = performance.now() - started;
    assert.deepEqual(second, first);
    assert.equal(pool.jobs.length, 1);
    assert.ok(secondMs < firstMs / 5, `cached ${secondMs} ms vs first ${firstMs} ms`);
    // A new PageViews over the same cache (a restarted server) still finds it.
    assert.deepEqual(await new PageViews(blobs, pool, { cache }).view(sha, 2, "image"), first);
    assert.equal(pool.jobs.length, 1);
    // The PDF format is cached separately.
    const pdf = await views.view(sha, 2, "pdf");
    assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
    assert.equal(pool.jobs.length, 2);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deleting the cache folder is harmless: the page is drawn again, the same", async () => {
  const { dir, blobs, cache, sha } = await setup();
  const pool = countingPool();
  try {
    const views = new PageViews(blobs, pool, { cache });
    const first = await views.view(sha, 3, "image");
    await Deno.remove(cache.root, { recursive: true });
    const again = await views.view(sha, 3, "image");
    assert.deepEqual(again, first);
    assert.equal(pool.jobs.length, 2);
    assert.ok(await cache.has(cache.derivedName(`page-view:v1:${sha}:3:image:110dpi`)));
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two concurrent views of the same page draw it once", async () => {
  const { dir, blobs, cache, sha } = await setup();
  const pool = countingPool();
  try {
    const views = new PageViews(blobs, pool, { cache });
    const [a, b, c] = await Promise.all([
      views.view(sha, 4, "image"),
      views.view(sha, 4, "image"),
      views.view(sha, 5, "image"),
    ]);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.deepEqual(pool.jobs.map((job) => job.page).sort(), [4, 5]);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failed view is not cached, and a missing source says so", async () => {
  const { dir, blobs, cache, sha } = await setup();
  const pool = countingPool();
  try {
    const views = new PageViews(blobs, pool, { cache });
    await assert.rejects(views.view(sha, 99, "image"), {
      message: "Page 99 is past the end: the PDF has 18 pages",
    });
    await assert.rejects(views.view(sha, 99, "image"), {
      name: "PageRenderError",
      message: "Page 99 is past the end: the PDF has 18 pages",
    });
    assert.equal(pool.jobs.length, 2);
    await assert.rejects(views.view("0".repeat(64), 1, "image"), /is not in the blob store/);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});
