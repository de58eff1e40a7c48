/**
 * PDF copies of Office and text files, made by LibreOffice headless
 * (`soffice --convert-to pdf`) in a subprocess: each conversion has its own
 * temporary profile and folders (removed afterwards), a memory limit and a
 * CPU-time limit set by `prlimit` before LibreOffice starts (so a file that
 * LibreOffice inflates without end is stopped by the kernel, not by the
 * machine running out), a wall-clock time limit, and waits its turn behind a
 * small module-wide concurrency limit, since LibreOffice is heavy. Every
 * failure is a `PdfCopyError` with a one-sentence reason.
 *
 * @module
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** A PDF copy that could not be made or was refused, with a one-sentence reason. */
export class PdfCopyError extends Error {
  override name = "PdfCopyError";
}

/** The kinds of files LibreOffice copies to PDF. */
export type PdfCopySourceType = "pptx" | "docx" | "txt" | "md";

/** How one conversion runs. */
export interface ConvertOptions {
  /** Time the conversion may take before LibreOffice is stopped; default 120,000 ms. */
  timeoutMs?: number;
  /** The address space LibreOffice may use, in bytes; default 2 GiB. */
  memoryBytes?: number;
  /** The PATH `soffice` is looked for on; default the server's own. */
  searchPath?: string;
}

/** What to say when `soffice` is missing. */
export const NOT_INSTALLED =
  "LibreOffice is not installed: install the Debian packages libreoffice-impress-nogui and libreoffice-writer-nogui";

/** How long one conversion may take, in milliseconds (wall clock; CPU time is held to the same). */
export const PDF_COPY_TIMEOUT_MS = 120_000;

/**
 * The address space one LibreOffice may use. A 2 MB deck or a 480 KB Word file
 * from the corpus peaks at about 380 MB resident and 1 GB of address space; a
 * Word file inflating to 406 MB of XML grew past 11 GB without a limit.
 */
export const PDF_COPY_MEMORY_BYTES = 2 * 1024 ** 3;

/** What to say when `prlimit` is missing. */
export const NO_PRLIMIT =
  "LibreOffice is not started without a memory limit, and prlimit is missing: install the Debian package util-linux";
const KILL_GRACE_MS = 3_000;

// Impress leaves hidden slides out of a PDF unless told otherwise; a copy needs one page per slide.
const IMPRESS_FILTER = 'pdf:impress_pdf_Export:{"ExportHiddenSlides":{"type":"boolean","value":"true"}}';
const TEXT_INPUT_FILTER = "Text (encoded):UTF8,LF,,,";

let limit = 1;
let running = 0;
const waiting: (() => void)[] = [];

/** Sets how many conversions may run at once (default 1; each LibreOffice takes 200–500 MiB). */
export function setPdfCopyConcurrency(concurrency: number): void {
  limit = Math.max(1, Math.floor(concurrency));
  while (running < limit && waiting.length > 0) {
    running++;
    waiting.shift()!();
  }
}

async function acquire(): Promise<void> {
  if (running < limit) {
    running++;
    return;
  }
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

function spawnError(error: unknown, program = "soffice"): PdfCopyError {
  if (error instanceof Deno.errors.NotFound) return new PdfCopyError(NOT_INSTALLED);
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return new PdfCopyError(`LibreOffice cannot be started: the server needs "--allow-run=${program}"`);
  }
  return new PdfCopyError(`LibreOffice cannot be started: ${String((error as Error).message ?? error)}`);
}

/**
 * Converts an Office or text file to PDF with LibreOffice and returns the
 * PDF's bytes; rejects with a `PdfCopyError`.
 */
export async function convertToPdf(
  bytes: Uint8Array,
  type: PdfCopySourceType,
  options: ConvertOptions = {},
): Promise<Uint8Array> {
  const timeoutMs = options.timeoutMs ?? PDF_COPY_TIMEOUT_MS;
  const memoryBytes = options.memoryBytes ?? PDF_COPY_MEMORY_BYTES;
  await acquire();
  const dir = await Deno.makeTempDir({ prefix: "sergo-pdf-copy-" });
  try {
    const inDir = join(dir, "in");
    const outDir = join(dir, "out");
    await Deno.mkdir(inDir);
    await Deno.mkdir(outDir);
    // Markdown is read as plain text; LibreOffice has no Markdown import.
    const inputName = `source.${type === "md" ? "txt" : type}`;
    await Deno.writeFile(join(inDir, inputName), bytes);
    const args = [
      // The limits are set before LibreOffice runs and are inherited by soffice.bin.
      `--as=${memoryBytes}`,
      `--cpu=${Math.ceil(timeoutMs / 1000)}`,
      "--",
      "soffice",
      "--headless",
      "--norestore",
      "--nologo",
      "--nodefault",
      "--nolockcheck",
      `-env:UserInstallation=${pathToFileURL(join(dir, "profile")).href}`,
    ];
    if (type === "txt" || type === "md") args.push(`--infilter=${TEXT_INPUT_FILTER}`);
    args.push(
      "--convert-to",
      type === "pptx" ? IMPRESS_FILTER : "pdf",
      "--outdir",
      outDir,
      join(inDir, inputName),
    );

    let child: Deno.ChildProcess;
    try {
      const env = options.searchPath === undefined ? undefined : { PATH: options.searchPath };
      child = new Deno.Command("prlimit", {
        args,
        env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        cwd: dir,
      })
        .spawn();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw spawnError(error, "prlimit");
      // Say what is missing: LibreOffice itself, or only the program that limits it.
      throw new PdfCopyError(onPath("soffice") === false ? NOT_INSTALLED : NO_PRLIMIT);
    }
    let timedOut = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      // SIGTERM lets oosplash take soffice.bin down with it; SIGKILL if it lingers.
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      killTimer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, KILL_GRACE_MS);
    }, timeoutMs);
    const result = await child.output();
    clearTimeout(timer);
    clearTimeout(killTimer);
    if (timedOut) {
      throw new PdfCopyError(`LibreOffice took longer than ${timeoutMs} ms to copy the ${type} file to PDF`);
    }
    if (result.signal === "SIGXCPU" || result.code === 128 + 24) {
      throw new PdfCopyError(
        `LibreOffice used more than ${
          Math.ceil(timeoutMs / 1000)
        } s of CPU time to copy the ${type} file to PDF`,
      );
    }
    const said = lastLine(result.stderr) || lastLine(result.stdout);
    if (result.code === 127 && /failed to execute/.test(said)) throw new PdfCopyError(NOT_INSTALLED);
    let pdf: Uint8Array;
    try {
      pdf = await Deno.readFile(join(outDir, "source.pdf"));
    } catch {
      if (!result.success && (result.signal !== null || result.code > 128)) {
        // Out of its address space, LibreOffice dies of a failed allocation (SIGSEGV or SIGABRT).
        throw new PdfCopyError(
          `LibreOffice stopped while copying the ${type} file to PDF (${
            result.signal ?? `exit code ${result.code}`
          }), most likely at its ${Math.round(memoryBytes / 1024 ** 2)} MB memory limit`,
        );
      }
      throw new PdfCopyError(
        `LibreOffice could not copy the ${type} file to PDF: ${said || `exit code ${result.code}`}`,
      );
    }
    if (pdf.length < 5 || new TextDecoder().decode(pdf.subarray(0, 5)) !== "%PDF-") {
      throw new PdfCopyError(`LibreOffice wrote something that is not a PDF for the ${type} file`);
    }
    return pdf;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    release();
  }
}

/** Whether a program is on PATH; undefined when PATH cannot be read. */
function onPath(program: string): boolean | undefined {
  try {
    const path = Deno.env.get("PATH") ?? "";
    return path.split(":").some((dir) => {
      try {
        return dir !== "" && Deno.statSync(join(dir, program)).isFile;
      } catch {
        return false;
      }
    });
  } catch {
    return undefined;
  }
}

function lastLine(bytes: Uint8Array): string {
  const lines = new TextDecoder().decode(bytes).split("\n").map((line) => line.trim())
    .filter((line) => line && !line.startsWith("Warning: failed to launch javaldx"));
  return (lines.at(-1) ?? "").replace(/\.$/, "");
}

let availability: { at: number; answer: { ok: boolean; detail: string } } | undefined;

/**
 * Whether LibreOffice can make PDF copies here, with a one-line detail (its
 * version, or what to install). A positive answer is remembered for a minute.
 */
export function converterAvailable(): Promise<{ ok: boolean; detail: string }> {
  if (availability && availability.answer.ok && Date.now() - availability.at < 60_000) {
    return Promise.resolve(availability.answer);
  }
  // Callers at the same moment (serve starts the check early, then waits for it) share one `soffice`.
  checking ??= checkConverter().finally(() => checking = undefined);
  return checking;
}

let checking: Promise<{ ok: boolean; detail: string }> | undefined;

async function checkConverter(): Promise<{ ok: boolean; detail: string }> {
  let answer: { ok: boolean; detail: string };
  try {
    const child = new Deno.Command("soffice", {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, 15_000);
    const result = await child.output();
    clearTimeout(timer);
    const version = new TextDecoder().decode(result.stdout).trim().split("\n")[0] ?? "";
    answer = result.success && version ? { ok: true, detail: version } : {
      ok: false,
      detail: `LibreOffice does not start: "soffice --version" ended with exit code ${result.code}`,
    };
  } catch (error) {
    answer = { ok: false, detail: spawnError(error).message };
  }
  availability = { at: Date.now(), answer };
  return answer;
}

/**
 * Checks a PDF copy before it is kept and returns its page count: a deck's
 * copy must have one page per slide, any other copy at least one page.
 * Throws a `PdfCopyError` saying why a copy is refused.
 */
export async function checkCopy(
  type: PdfCopySourceType,
  expectedPages: number | null,
  pdfBytes: Uint8Array,
): Promise<number> {
  let pages: number;
  try {
    // Loaded when a copy is checked, not at start-up: pdf.js and its canvas are heavy to load.
    const { openPdf } = await import("../render/pdfjs_loader.ts");
    const doc = await openPdf(pdfBytes);
    pages = doc.numPages;
    await doc.destroy();
  } catch (error) {
    throw new PdfCopyError(`The PDF copy of the ${type} file cannot be read: ${(error as Error).message}`);
  }
  if (pages < 1) throw new PdfCopyError(`The PDF copy of the ${type} file has no pages`);
  if (type === "pptx" && expectedPages !== null && pages !== expectedPages) {
    throw new PdfCopyError(
      `The PDF copy has ${pages} pages but the deck has ${expectedPages} slides, so its page numbers would not match the slides`,
    );
  }
  return pages;
}
