/**
 * view_page cost: the first render of a page through `PageViews` (cold cache,
 * warm worker) against poppler's `pdftoppm -r 110 -png` for the same pages in
 * the same run, and the cached view against the first render.
 * Budgets: first ÷ pdftoppm ≤ 0.5, cached ÷ first ≤ 0.02.
 *
 * Run: `deno task bench` or `deno run -A bench/page_views.ts [--quick]`.
 *
 * @module
 */
import { join } from "node:path";
import { BlobStore } from "../src/blob_store.ts";
import { PageViews } from "../src/render/page_cache.ts";
import { createRenderPool } from "../src/render/render_pool.ts";
import { CORPUS_DIR } from "../test/helpers/corpus.ts";

const CORPUS = `${CORPUS_DIR}/pdf`;

/** Pages of the corpus, of every kind: slides, papers, scans, tables, a long manual. */
const PAGES: [file: string, page: number][] = [
  ["cncf-standards-next-gen-cloud-slides.pdf", 2],
  ["tracemonkey-pldi-paper.pdf", 1],
  ["scanned-ru-inspection-certificate.pdf", 1],
  ["irs-internal-revenue-manual-2-3-59-400p.pdf", 120],
  ["kcd-ebpf-service-mesh-slides-zh.pdf", 3],
  ["cncf-introduction-linux-summit-slides.pdf", 4],
  ["dense-passage-retrieval-paper.pdf", 2],
  ["ca-warn-report-landscape-tables.pdf", 1],
  ["chelsea-active-transport-plan-fr.pdf", 5],
  ["cjk-zh-quarterly-report.pdf", 3],
  ["ibm-redbook-db2-rcac-sampled.pdf", 1],
  ["federal-register-2020-17221.pdf", 2],
];

async function pdftoppmMs(path: string, page: number, outDir: string): Promise<number | null> {
  const started = performance.now();
  try {
    const out = await new Deno.Command("pdftoppm", {
      args: ["-r", "110", "-f", String(page), "-l", String(page), "-png", path, join(outDir, "page")],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success ? performance.now() - started : null;
  } catch {
    return null;
  }
}

const round = (value: number, places = 2): number => Math.round(value * 10 ** places) / 10 ** places;

/** Measures first and cached page views against pdftoppm; prints one table row. */
export async function benchPageViews(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const pages = opts.quick ? PAGES.slice(0, 4) : PAGES;
  const dir = await Deno.makeTempDir({ prefix: "sergo-bench-page-views-" });
  const blobs = new BlobStore(join(dir, "blobs"));
  const cache = new BlobStore(join(dir, "cache"));
  const pool = createRenderPool({ concurrency: 1 });
  try {
    const views = new PageViews(blobs, pool, { cache });
    // Warm the worker (module load, JIT) on a page that is not measured, as a running server would be.
    const warm = await blobs.write(await Deno.readFile(`${CORPUS}/picture-classification-figures.pdf`));
    await views.view(warm, 1, "image");
    await views.view(warm, 2, "image");

    let firstMs = 0;
    let popplerMs = 0;
    let cachedMs = 0;
    let popplerMissing = false;
    const rows: Record<string, unknown>[] = [];
    for (const [file, page] of pages) {
      const path = `${CORPUS}/${file}`;
      const sha = await blobs.write(await Deno.readFile(path));
      let started = performance.now();
      const png = await views.view(sha, page, "image");
      const first = performance.now() - started;
      started = performance.now();
      await views.view(sha, page, "image");
      const cached = performance.now() - started;
      const poppler = await pdftoppmMs(path, page, dir);
      if (poppler === null) popplerMissing = true;
      firstMs += first;
      cachedMs += cached;
      popplerMs += poppler ?? 0;
      rows.push({
        file,
        page,
        first_ms: round(first, 1),
        pdftoppm_ms: poppler === null ? null : round(poppler, 1),
        cached_ms: round(cached, 2),
        png_kb: Math.round(png.length / 1024),
      });
    }
    const result = {
      pages: pages.length,
      first_render_ms: round(firstMs / pages.length, 1),
      pdftoppm_ms: popplerMissing ? null : round(popplerMs / pages.length, 1),
      first_vs_pdftoppm: popplerMissing ? null : round(firstMs / popplerMs),
      cached_ms: round(cachedMs / pages.length, 2),
      cached_vs_first: round(cachedMs / firstMs, 4),
      per_page: rows,
    };
    console.log(
      `page_views | ${result.pages} pages | first ${result.first_render_ms} ms, pdftoppm ${
        result.pdftoppm_ms ?? "n/a"
      } ms, ratio ${result.first_vs_pdftoppm ?? "n/a"} (budget ≤ 0.5) | cached ${result.cached_ms} ms, ` +
        `ratio ${result.cached_vs_first} (budget ≤ 0.02)`,
    );
    return result;
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const result = await benchPageViews({ quick: Deno.args.includes("--quick") });
  if (Deno.args.includes("--json")) console.log(JSON.stringify(result, null, 2));
  else console.table(result.per_page);
}
