/**
 * Ingest benchmark: Basic-preset text extraction through the extraction pool (all
 * readers) against poppler's `pdftotext` (one process per file, sequential, same files,
 * same run); PowerPoint and Word files per second through the pool.
 *
 * The pool's figure is its steady throughput: the readers are warmed by one untimed
 * pass over the files (a server's readers live for hundreds of documents, so their
 * start-up and first compilation are paid once), then the files are queued several
 * times, so the last document's tail on one reader while the other is idle is a small
 * part of the time. `pdftotext` runs over the same list.
 *
 * @module
 */
import { createExtractionPool } from "../src/processing/worker_pool.ts";

const CORPUS = new URL("../test/corpus/", import.meta.url).pathname;

function corpusFiles(folder: string, quick: boolean): string[] {
  const root = Deno.env.get("SERGO_CORPUS") ?? CORPUS;
  const files = [...Deno.readDirSync(`${root}${folder}`)]
    .filter((e) => e.isFile)
    .map((e) => `${root}${folder}/${e.name}`)
    .sort();
  if (!quick) return files;
  return files.filter((f) => Deno.statSync(f).size < 800_000).slice(0, 8);
}

async function pdftotextSeconds(files: string[]): Promise<number | null> {
  const started = performance.now();
  for (const file of files) {
    try {
      await new Deno.Command("pdftotext", { args: ["-q", file, "/dev/null"], stdout: "null", stderr: "null" })
        .output();
    } catch {
      return null; // pdftotext is not installed (apt-get install -y poppler-utils)
    }
  }
  return (performance.now() - started) / 1000;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Measures extraction throughput; prints one table row per measure and returns them. */
export async function benchIngest(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const concurrency = navigator.hardwareConcurrency ?? 2;
  const pool = createExtractionPool({ concurrency, timeoutMs: 300_000 });
  try {
    const readAll = async (files: string[]): Promise<{ seconds: number; pages: number; failed: number }> => {
      const inputs = await Promise.all(files.map((f) => Deno.readFile(f)));
      const started = performance.now();
      let pages = 0;
      let failed = 0;
      await Promise.all(inputs.map(async (bytes, i) => {
        try {
          const result = await pool.extract(bytes, files[i]!.slice(files[i]!.lastIndexOf("/") + 1));
          pages += result.page_count;
        } catch (error) {
          if (Deno.env.get("BENCH_DEBUG")) console.error(files[i], String(error));
          failed++;
        }
      }));
      return { seconds: (performance.now() - started) / 1000, pages, failed };
    };
    const pdfFiles = corpusFiles("pdf", opts.quick);
    // Warm every reader: untimed passes (start-up is paid once per reader, not per document).
    for (let pass = 0; pass < 3; pass++) await readAll(pdfFiles);
    // Rounds of the pool, then pdftotext, on the same list: both see the machine's slow and fast
    // stretches (its speed drifts by tens of percent over minutes), and the figure is their totals.
    const pdfs = Array.from({ length: opts.quick ? 2 : 3 }, () => pdfFiles).flat();
    const rounds: Array<{ pool_s: number; pdftotext_s: number | null; pages: number; ratio: number | null }> =
      [];
    let failedPdfs = 0;
    for (let round = 0; round < (opts.quick ? 1 : 3); round++) {
      const pool = await readAll(pdfs);
      const popplerS = await pdftotextSeconds(pdfs);
      failedPdfs += pool.failed;
      rounds.push({
        pool_s: round3(pool.seconds),
        pdftotext_s: popplerS === null ? null : round3(popplerS),
        pages: pool.pages,
        ratio: popplerS === null ? null : round3(popplerS / pool.seconds),
      });
    }
    const pdf = {
      pages: rounds.reduce((n, r) => n + r.pages, 0),
      seconds: rounds.reduce((n, r) => n + r.pool_s, 0),
      failed: failedPdfs,
    };
    const popplerSeconds = rounds.some((r) => r.pdftotext_s === null)
      ? null
      : rounds.reduce((n, r) => n + r.pdftotext_s!, 0);
    const pptx = await readAll(corpusFiles("pptx", opts.quick));
    const docx = await readAll(corpusFiles("docx", opts.quick));
    const poolPagesPerSecond = pdf.pages / pdf.seconds;
    const popplerPagesPerSecond = popplerSeconds === null ? null : pdf.pages / popplerSeconds;
    const result = {
      readers: concurrency,
      pdf_files: pdfFiles.length,
      pdf_passes_per_round: pdfs.length / pdfFiles.length,
      rounds,
      pdf_pages: pdf.pages,
      pool_pdf_pages_per_s: Math.round(poolPagesPerSecond),
      pdftotext_pages_per_s: popplerPagesPerSecond === null ? null : Math.round(popplerPagesPerSecond),
      pool_vs_pdftotext: popplerPagesPerSecond === null
        ? null
        : Math.round((poolPagesPerSecond / popplerPagesPerSecond) * 1000) / 1000,
      pptx_files_per_s: Math.round((corpusFiles("pptx", opts.quick).length / pptx.seconds) * 10) / 10,
      docx_files_per_s: Math.round((corpusFiles("docx", opts.quick).length / docx.seconds) * 10) / 10,
      failed: pdf.failed + pptx.failed + docx.failed,
    };
    console.log(
      `ingest | readers ${result.readers} | pdf ${result.pdf_pages} pages: pool ${result.pool_pdf_pages_per_s} p/s, ` +
        `pdftotext ${result.pdftotext_pages_per_s ?? "n/a"} p/s, ratio ${
          result.pool_vs_pdftotext ?? "n/a"
        } ` +
        `(budget ≥ 1.0) | pptx ${result.pptx_files_per_s} files/s | docx ${result.docx_files_per_s} files/s`,
    );
    return result;
  } finally {
    await pool.close();
  }
}

if (import.meta.main) await benchIngest({ quick: Deno.args.includes("--quick") });
