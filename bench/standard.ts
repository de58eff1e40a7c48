/**
 * The Standard preset (issue 16), beside `ocrmypdf` in the same run:
 *
 * - **Throughput.** Every scanned PDF of the corpus processed with Standard by a
 *   processing worker with all its slots (Tesseract per page, one core each), in
 *   pages transcribed per second, ÷ `ocrmypdf --force-ocr` over the same files,
 *   one process at a time (it runs one Tesseract per core itself), with the same
 *   languages (`-l` all of Sergo's default languages: ocrmypdf has no per-page
 *   script detection, so that is what reading these files without knowing their
 *   language takes).
 * - **Accuracy.** Word error rate of Sergo's text and of ocrmypdf's text
 *   (`--sidecar`) against hand-checked transcripts (`bench/transcripts/`), page by
 *   page; Chinese is compared character by character.
 * - **Born-digital cost.** A born-digital PDF whose pages need no transcription,
 *   processed with Standard ÷ with Basic (alternating rounds, same warm pool).
 * - **Search.** `search_questions_scanned.json`: questions whose answers are only
 *   on scanned pages, over the whole corpus, with the scanned files as Basic reads
 *   them (pdftotext) and as Standard reads them; evidence is checked against the
 *   transcripts, not against what Sergo reads.
 *
 * @module
 */
import { join } from "node:path";
import { openApp, type SergoApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { uploadFile } from "../src/domain/documents.ts";
import { addPerson } from "../src/domain/people.ts";
import { openStandard } from "../src/processing/transcribers/choose.ts";
import { DEFAULT_LANGUAGES } from "../src/processing/transcribers/tesseract.ts";
import { createExtractionPool, type ExtractionPool } from "../src/processing/worker_pool.ts";
import { ProcessingWorker, type StandardReading } from "../src/workers/processing_worker.ts";
import type { ProcessedPage } from "../events/types.ts";
import { CORPUS_DIR, loadCorpus } from "./_corpus_text.ts";
import { buildQualityIndexes, type QualityQuestion, scoreSearch } from "./_search_quality.ts";

const SCANS = [
  "pdf/scanned-ru-inspection-certificate.pdf",
  "pdf/scanned-ru-tax-form-bad-ocr.pdf",
  "pdf/scanned-text-page-image-only.pdf",
  "pdf/scanned-zh-penalty-decision-ccitt.pdf",
];
const BORN_DIGITAL = "pdf/cancer-council-breast-cancer-guide.pdf";
const OCRMYPDF_AT_NORMAL_PRIORITY =
  "import os, sys; os.nice = lambda n: 0; sys.argv[0] = 'ocrmypdf'; from ocrmypdf.__main__ import run; sys.exit(run())";
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Words (or, for Chinese and Japanese, characters) of a text, lower-cased, without punctuation. */
export function tokens(text: string): string[] {
  return text.normalize("NFKC").toLowerCase()
    .replace(/([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}])/gu, " $1 ")
    .split(/\s+/)
    .map((t) => t.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, ""))
    .filter((t) => t.length > 0);
}

/** Word error rate: (substitutions + deletions + insertions) ÷ reference words. */
export function wordErrorRate(reference: string, hypothesis: string): { errors: number; words: number } {
  const ref = tokens(reference);
  const hyp = tokens(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return { errors: previous[hyp.length]!, words: ref.length };
}

async function uploadAll(
  app: SergoApp,
  personId: string,
  files: string[],
  preset: string,
): Promise<string[]> {
  const ids: string[] = [];
  for (const file of files) {
    const temp = await app.blobs.tempPath();
    await Deno.copyFile(join(CORPUS_DIR, file), temp);
    const doc = await uploadFile(app, {
      personId,
      folderId: null,
      name: file.split("/")[1]!,
      tempPath: temp,
      preset,
    }, "bench");
    ids.push(doc.document_id);
  }
  return ids;
}

function recordedPages(app: SergoApp, id: string): ProcessedPage[] {
  const processed = app.store.readStream(`document-${id}`).findLast((e) => e.type === "DocumentProcessed");
  return processed?.type === "DocumentProcessed" ? processed.data.pages : [];
}

async function processTimed(
  app: SergoApp,
  pool: ExtractionPool,
  standard: StandardReading,
  ids: string[],
): Promise<number> {
  const worker = new ProcessingWorker(app, pool, { workerId: "bench", only: new Set(ids), standard });
  const started = performance.now();
  worker.kick();
  await worker.drain();
  return (performance.now() - started) / 1000;
}

async function ocrmypdf(
  files: string[],
  dir: string,
): Promise<{ seconds: number; pages: Map<string, string[]> } | null> {
  const pages = new Map<string, string[]>();
  let seconds = 0;
  for (const file of files) {
    const sidecar = join(dir, "sidecar.txt");
    const args = [
      "--force-ocr",
      "-l",
      DEFAULT_LANGUAGES.join("+"),
      "--sidecar",
      sidecar,
      join(CORPUS_DIR, file),
      join(dir, "out.pdf"),
    ];
    const started = performance.now();
    let out;
    try {
      // ocrmypdf lowers its own priority (os.nice(5) in its main); on a shared machine that would slow it
      // beside Sergo's readers, so it runs here at the same priority, otherwise unchanged.
      out = await new Deno.Command(await ocrmypdfPython(), {
        args: ["-c", OCRMYPDF_AT_NORMAL_PRIORITY, ...args],
        stdout: "null",
        stderr: "piped",
      }).output();
    } catch {
      return null; // ocrmypdf is not installed (apt-get install ocrmypdf)
    }
    seconds += (performance.now() - started) / 1000;
    if (!out.success) {
      throw new Error(`ocrmypdf failed on ${file}: ${new TextDecoder().decode(out.stderr).slice(-300)}`);
    }
    pages.set(file, (await Deno.readTextFile(sidecar)).split("\f"));
  }
  return { seconds, pages };
}

/** The Python that runs the installed `ocrmypdf` (its script's `#!` line). */
async function ocrmypdfPython(): Promise<string> {
  for (const folder of (Deno.env.get("PATH") ?? "/usr/bin").split(":")) {
    const head = await Deno.readTextFile(join(folder, "ocrmypdf")).catch(() => null);
    if (head !== null) return /^#!\s*(\S+)/.exec(head)?.[1] ?? "python3";
  }
  throw new Deno.errors.NotFound("ocrmypdf is not installed (apt-get install ocrmypdf)");
}

/** Runs the Standard benchmark. */
export async function benchStandard(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const files = opts.quick
    ? ["pdf/scanned-zh-penalty-decision-ccitt.pdf", "pdf/scanned-ru-inspection-certificate.pdf"]
    : SCANS;
  const dir = await Deno.makeTempDir({ prefix: "sergo-bench-standard-" });
  const app = await openApp(join(dir, "data"));
  const standard = await openStandard(loadConfig([]).transcribe);
  const pool = createExtractionPool({ timeoutMs: 600_000 });
  try {
    if (!standard.reading.transcriber) throw new Error(`No transcriber: ${standard.missing}`);
    const person = await addPerson(app, { name: "Bench", email: "bench@example.com" });
    // Warm the readers and the page-drawing pool on a page that is not measured.
    await processTimed(
      app,
      pool,
      standard.reading,
      await uploadAll(app, person.person_id, ["pdf/scanned-zh-penalty-decision-ccitt.pdf"], "basic"),
    );

    // Throughput.
    const ids = await uploadAll(app, person.person_id, files, "standard");
    const sergoSeconds = await processTimed(app, pool, standard.reading, ids);
    const sergoPages = new Map(files.map((file, i) => [file, recordedPages(app, ids[i]!)]));
    const transcribed = [...sergoPages.values()].flat().filter((p) =>
      p.transcription && !p.transcription.error
    ).length;
    const baseline = await ocrmypdf(files, dir);
    const sergoRate = transcribed / sergoSeconds;
    const baseRate = baseline
      ? files.reduce((n, f) => n + sergoPages.get(f)!.length, 0) / baseline.seconds
      : null;

    // Accuracy against the transcripts.
    const transcripts = JSON.parse(
      await Deno.readTextFile(new URL("./transcripts/index.json", import.meta.url)),
    ) as Array<
      { file: string; page: number; language: string; transcript: string }
    >;
    const perPage: Array<Record<string, unknown>> = [];
    const totals = { words: 0, sergo: 0, ocrmypdf: 0 };
    for (const t of transcripts) {
      if (!files.includes(t.file)) continue;
      const reference = await Deno.readTextFile(new URL(`./transcripts/${t.transcript}`, import.meta.url));
      const sergo = wordErrorRate(reference, sergoPages.get(t.file)?.[t.page - 1]?.text ?? "");
      const theirs = baseline
        ? wordErrorRate(reference, baseline.pages.get(t.file)?.[t.page - 1] ?? "")
        : null;
      totals.words += sergo.words;
      totals.sergo += sergo.errors;
      totals.ocrmypdf += theirs?.errors ?? 0;
      perPage.push({
        page: `${t.file}#${t.page}`,
        language: t.language,
        words: sergo.words,
        sergo_wer: round(sergo.errors / sergo.words),
        ocrmypdf_wer: theirs ? round(theirs.errors / theirs.words) : null,
      });
    }

    // Born-digital cost: Standard ÷ Basic on a PDF none of whose pages is transcribed.
    const rounds: Array<{ basic_s: number; standard_s: number }> = [];
    for (let i = 0; i < (opts.quick ? 1 : 3); i++) {
      const basic = await processTimed(
        app,
        pool,
        standard.reading,
        await uploadAll(app, person.person_id, [BORN_DIGITAL], "basic"),
      );
      const stdIds = await uploadAll(app, person.person_id, [BORN_DIGITAL], "standard");
      const std = await processTimed(app, pool, standard.reading, stdIds);
      if (recordedPages(app, stdIds[0]!).some((p) => p.transcription)) {
        throw new Error(`${BORN_DIGITAL}: a page was transcribed`);
      }
      rounds.push({ basic_s: round(basic), standard_s: round(std) });
    }
    const basicTotal = rounds.reduce((n, r) => n + r.basic_s, 0);
    const standardTotal = rounds.reduce((n, r) => n + r.standard_s, 0);

    // Search questions answered only on scanned pages.
    const search = await searchScanned(sergoPages);

    return {
      transcriber: standard.reading.transcriber.label,
      throughput: {
        files: files.length,
        pages_transcribed: transcribed,
        sergo_s: round(sergoSeconds),
        sergo_pages_per_s: round(sergoRate),
        ocrmypdf_s: baseline ? round(baseline.seconds) : null,
        ocrmypdf_pages_per_s: baseRate === null ? null : round(baseRate),
        ocrmypdf_command: `ocrmypdf --force-ocr -l ${DEFAULT_LANGUAGES.join("+")} --sidecar`,
        ratio: baseRate === null ? null : round(sergoRate / baseRate),
      },
      accuracy: {
        pages: perPage.length,
        words: totals.words,
        sergo_wer: round(totals.sergo / totals.words),
        ocrmypdf_wer: baseline ? round(totals.ocrmypdf / totals.words) : null,
        per_page: perPage,
      },
      born_digital: { file: BORN_DIGITAL, rounds, ratio: round(standardTotal / basicTotal) },
      search,
    };
  } finally {
    await pool.close();
    standard.close();
    await app.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function searchScanned(standardPages: Map<string, ProcessedPage[]>): Promise<Record<string, unknown>> {
  const questions = JSON.parse(
    await Deno.readTextFile(new URL("./search_questions_scanned.json", import.meta.url)),
  ) as QualityQuestion[];
  const transcripts = JSON.parse(
    await Deno.readTextFile(new URL("./transcripts/index.json", import.meta.url)),
  ) as Array<
    { file: string; page: number; transcript: string }
  >;
  const norm = (s: string) => s.normalize("NFC").replace(/\s+/g, " ").trim();
  for (const q of questions) {
    const first = q.answers[0]!;
    const t = transcripts.find((x) => x.file === first.file && x.page === first.pages[0]);
    const text = t ? await Deno.readTextFile(new URL(`./transcripts/${t.transcript}`, import.meta.url)) : "";
    if (!norm(text).includes(norm(q.evidence))) {
      throw new Error(
        `Scanned question ${q.id}: "${q.evidence}" is not in the transcript of ${first.file} page ${
          first.pages[0]
        }`,
      );
    }
  }
  // The text corpus leaves out files pdftotext finds no text in (the image-only scans): as Basic reads them
  // they are pages without text, as Standard reads them they are its pages.
  const loaded = await loadCorpus();
  const missing = [...standardPages.keys()].filter((file) => !loaded.some((f) => f.file === file));
  const corpus = [
    ...loaded,
    ...missing.map((file) => ({ file, pages: standardPages.get(file)!.map(() => "") })),
  ];
  const withStandard = corpus.map((f) =>
    standardPages.has(f.file) ? { file: f.file, pages: standardPages.get(f.file)!.map((p) => p.text) } : f
  );
  const scores: Record<string, unknown> = {};
  for (const [name, pages] of [["basic", corpus], ["standard", withStandard]] as const) {
    const indexes = buildQualityIndexes(pages);
    try {
      const s = scoreSearch(questions, indexes.sergo);
      scores[name] = { overall: s.overall, held_out: s.held_out };
    } finally {
      indexes.close();
    }
  }
  return { questions: questions.length, ...scores };
}
