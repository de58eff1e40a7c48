/**
 * view_page cost: the first render of a page through `PageViews` (cold cache,
 * warm worker) against poppler's `pdftoppm -r 110 -png` for the same pages in
 * the same run, and the cached view against the first render. Beside the
 * wall-clock times, the CPU time of each side (this process's, all threads,
 * the render worker's included; pdftoppm's from this process's reaped
 * children in /proc), which a busy machine moves far less.
 * Budgets: first ÷ pdftoppm ≤ 0.4, cached ÷ first ≤ 0.02.
 *
 * Run: `deno task bench` or `deno run -A bench/page_views.ts [--quick]`.
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
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

/** This process's CPU ms, all threads. */
function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** The CPU ms of this process's children that have ended and been waited for (/proc, 10 ms ticks). */
function childrenCpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
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
    let firstCpuMs = 0;
    let popplerMs = 0;
    let popplerCpuMs = 0;
    let cachedMs = 0;
    let popplerMissing = false;
    const rows: Record<string, unknown>[] = [];
    for (const [file, page] of pages) {
      const path = `${CORPUS}/${file}`;
      const sha = await blobs.write(await Deno.readFile(path));
      const cpuBefore = ownCpuMs();
      let started = performance.now();
      const png = await views.view(sha, page, "image");
      const first = performance.now() - started;
      const firstCpu = ownCpuMs() - cpuBefore;
      started = performance.now();
      await views.view(sha, page, "image");
      const cached = performance.now() - started;
      const childrenBefore = childrenCpuMs();
      const poppler = await pdftoppmMs(path, page, dir);
      const popplerCpu = childrenCpuMs() - childrenBefore;
      if (poppler === null) popplerMissing = true;
      firstMs += first;
      firstCpuMs += firstCpu;
      popplerCpuMs += popplerCpu;
      cachedMs += cached;
      popplerMs += poppler ?? 0;
      rows.push({
        file,
        page,
        first_ms: round(first, 1),
        pdftoppm_ms: poppler === null ? null : round(poppler, 1),
        first_cpu_ms: Math.round(firstCpu),
        pdftoppm_cpu_ms: popplerCpu,
        cached_ms: round(cached, 2),
        png_kb: Math.round(png.length / 1024),
      });
    }
    const result = {
      pages: pages.length,
      first_render_ms: round(firstMs / pages.length, 1),
      pdftoppm_ms: popplerMissing ? null : round(popplerMs / pages.length, 1),
      first_vs_pdftoppm: popplerMissing ? null : round(firstMs / popplerMs),
      first_cpu_ms: round(firstCpuMs / pages.length, 1),
      pdftoppm_cpu_ms: popplerMissing ? null : round(popplerCpuMs / pages.length, 1),
      first_vs_pdftoppm_cpu: popplerMissing || popplerCpuMs === 0 ? null : round(firstCpuMs / popplerCpuMs),
      cached_ms: round(cachedMs / pages.length, 2),
      cached_vs_first: round(cachedMs / firstMs, 4),
      per_page: rows,
    };
    console.log(
      `page_views | ${result.pages} pages | first ${result.first_render_ms} ms, pdftoppm ${
        result.pdftoppm_ms ?? "n/a"
      } ms, ratio ${
        result.first_vs_pdftoppm ?? "n/a"
      } (budget ≤ 0.4); CPU ${result.first_cpu_ms} ms, pdftoppm ${
        result.pdftoppm_cpu_ms ?? "n/a"
      } ms, ratio ${result.first_vs_pdftoppm_cpu ?? "n/a"} | cached ${result.cached_ms} ms, ` +
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
