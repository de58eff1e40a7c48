/**
 * Tesseract 5 (Debian's `tesseract-ocr`; its LSTM recognizer is a neural
 * transcribing model) as a transcriber, run as a sandboxed subprocess per page.
 *
 * How a page is read, after what `ocrmypdf` does well:
 * - **Resolution.** The page is drawn at 300 dpi (`SERGO_TRANSCRIBE_DPI`), the
 *   resolution Tesseract's models are trained for, and the drawing's dpi is passed
 *   on (`--dpi`), as ocrmypdf passes the rasterized resolution.
 * - **Script and rotation.** Tesseract's orientation and script detection (OSD,
 *   `--psm 0`) runs first. A page it finds turned (with ocrmypdf's default
 *   confidence of 14) is turned upright before it is read. The script picks the
 *   languages: a Chinese page is read with `chi_sim`, not with the Arabic model;
 *   ocrmypdf instead reads every page with every language given, which is slower
 *   and mixes models (measured: one Russian form, `rus+eng` 9.4 s, all eight
 *   default languages 28 s, with worse digits). Where OSD cannot tell (too little
 *   text), the script of the document's other pages is used, else every language.
 * - **Skew.** Tesseract's layout analysis finds the skew of text lines and reads
 *   along them, so a page is not deskewed first (ocrmypdf's `--deskew` only
 *   straightens the output image).
 * - **Sandbox.** Each run has a wall-clock limit (killed past it), and through
 *   `prlimit` an address-space limit, a CPU-time limit, a file-size limit and a
 *   cap on open files; it starts with an empty environment (only
 *   `OMP_THREAD_LIMIT=1`, so that each page takes one core and pages run side by
 *   side, as ocrmypdf runs one Tesseract per core) in a temporary directory that
 *   is removed after the page.
 *
 * @module
 */
import { join } from "node:path";
import {
  abortReason,
  Limiter,
  type PageImage,
  TranscribeError,
  type TranscribeHint,
  type Transcriber,
  type Transcription,
} from "./transcriber.ts";

/** Tesseract as installed: its version and languages. */
export interface TesseractInstall {
  version: string;
  languages: string[];
  /** Whether `prlimit` is there to limit each run's memory and CPU time. */
  prlimit: boolean;
}

/** The languages read by default, where installed: English, Russian, simplified Chinese, Arabic, Persian, French, Spanish, German. */
export const DEFAULT_LANGUAGES = ["eng", "rus", "chi_sim", "ara", "fas", "fra", "spa", "deu"] as const;

/** OSD orientation confidence from which a page is turned upright (ocrmypdf's `--rotate-pages-threshold`). */
export const ROTATE_CONFIDENCE = 14;

/**
 * Below {@link ROTATE_CONFIDENCE} and from this confidence, a page OSD finds turned is
 * read both ways and the reading Tesseract is surer of is kept: on the corpus's
 * upside-down scan (`scanned-text-page-image-only.pdf`, pages 2 and 4, three lines
 * of text) OSD says 180° with a confidence of only 2.4, and ocrmypdf's threshold
 * alone would read it upside down.
 */
export const ROTATE_TRY_CONFIDENCE = 1;

/** The mean word confidence (0–100) in Tesseract's hOCR output; 0 when it found no word. */
export function meanWordConfidence(hocr: string): number {
  let sum = 0;
  let n = 0;
  for (const m of hocr.matchAll(/x_wconf (\d+)/g)) {
    sum += Number(m[1]);
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

/**
 * A page whose layout analysis finds pictures covering at least this fraction of it
 * holds a figure (the same fraction as Basic's large picture).
 */
export const FIGURE_PICTURE_FRACTION = 0.12;

/**
 * A page with at least this many separator lines (rules, box edges) holds a table or
 * a form. Text pages of the corpus's scans have none to four; the ruled Russian forms
 * have dozens.
 */
export const TABLE_SEPARATORS = 12;

/** The script of each language Sergo knows, as Tesseract's OSD names scripts. */
const SCRIPT_OF: Record<string, string> = {
  eng: "Latin",
  fra: "Latin",
  spa: "Latin",
  deu: "Latin",
  ita: "Latin",
  por: "Latin",
  nld: "Latin",
  pol: "Latin",
  ces: "Latin",
  tur: "Latin",
  vie: "Latin",
  ron: "Latin",
  hun: "Latin",
  swe: "Latin",
  dan: "Latin",
  nor: "Latin",
  fin: "Latin",
  cat: "Latin",
  ind: "Latin",
  msa: "Latin",
  rus: "Cyrillic",
  ukr: "Cyrillic",
  bel: "Cyrillic",
  bul: "Cyrillic",
  srp: "Cyrillic",
  mkd: "Cyrillic",
  kaz: "Cyrillic",
  chi_sim: "Han",
  chi_tra: "Han",
  jpn: "Japanese",
  kor: "Hangul",
  ara: "Arabic",
  fas: "Arabic",
  urd: "Arabic",
  pus: "Arabic",
  heb: "Hebrew",
  yid: "Hebrew",
  ell: "Greek",
  hin: "Devanagari",
  mar: "Devanagari",
  nep: "Devanagari",
  tha: "Thai",
};

/** OSD's names for scripts that share a language's models. */
const SCRIPT_ALIASES: Record<string, string> = { Katakana: "Japanese", Hiragana: "Japanese" };

let probed: Promise<TesseractInstall | null> | undefined;

/** Whether Tesseract is installed, with its version and languages; null when it is not. */
export function probeTesseract(): Promise<TesseractInstall | null> {
  probed ??= (async () => {
    // The three checks run side by side: serve waits for them before it listens.
    const run = async (command: string, args: string[]) => {
      try {
        return await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
      } catch {
        return null;
      }
    };
    const [version, list, prlimit] = await Promise.all([
      run("tesseract", ["--version"]),
      run("tesseract", ["--list-langs"]),
      run("prlimit", ["--version"]),
    ]);
    if (!version || !list) return null;
    const first = new TextDecoder().decode(version.stdout).split("\n")[0] ?? "";
    const match = /^tesseract\s+v?(\S+)/.exec(first);
    if (!version.success || !match) return null;
    const languages = new TextDecoder().decode(list.stdout).split("\n").slice(1).map((l) => l.trim())
      .filter((l) => /^[a-z_]+$/.test(l));
    return { version: match[1]!, languages, prlimit: prlimit?.success ?? false };
  })();
  return probed;
}

/** The languages to read with: the wanted ones that are installed (a page cannot use the OSD model). */
export function installedLanguages(wanted: readonly string[], install: TesseractInstall): string[] {
  return wanted.filter((l) => l !== "osd" && install.languages.includes(l));
}

/**
 * The languages for a page in `script`, from those configured: the languages of that
 * script, with English beside Cyrillic and Greek (forms and certificates mix them);
 * every configured language when the script is unknown or none of them writes it.
 */
export function languagesForScript(script: string | undefined, configured: readonly string[]): string[] {
  const wanted = script ? SCRIPT_ALIASES[script] ?? script : undefined;
  const own = wanted ? configured.filter((l) => SCRIPT_OF[l] === wanted) : [];
  if (own.length === 0) return [...configured];
  if ((wanted === "Cyrillic" || wanted === "Greek") && configured.includes("eng")) own.push("eng");
  return own;
}

/** What OSD said about a page. */
export interface Osd {
  rotate: number;
  orientationConfidence: number;
  script: string;
  scriptConfidence: number;
}

/** Parses `tesseract --psm 0` output; null when OSD found too little to say. */
export function parseOsd(output: string): Osd | null {
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(output)?.[1];
  const rotate = Number(field("Rotate"));
  const script = field("Script");
  if (!Number.isFinite(rotate) || !script) return null;
  return {
    rotate,
    orientationConfidence: Number(field("Orientation confidence")) || 0,
    script,
    scriptConfidence: Number(field("Script confidence")) || 0,
  };
}

/** What hOCR's layout analysis found on a page. */
export interface HocrLayout {
  /** Fraction of the page covered by picture blocks (`ocr_photo`). */
  pictureFraction: number;
  /** Separator lines (`ocr_separator`). */
  separators: number;
}

/** Picture and line areas from Tesseract's hOCR output. */
export function parseHocrLayout(hocr: string): HocrLayout {
  const box = (title: string) => {
    const m = /bbox (\d+) (\d+) (\d+) (\d+)/.exec(title);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] as const : null;
  };
  const page = /class='ocr_page'[^>]*title='([^']*)'/.exec(hocr) ??
    /class="ocr_page"[^>]*title="([^"]*)"/.exec(hocr);
  const pageBox = page ? box(page[1]!) : null;
  const pageArea = pageBox ? Math.max(1, (pageBox[2] - pageBox[0]) * (pageBox[3] - pageBox[1])) : 1;
  let pictures = 0;
  let separators = 0;
  for (const m of hocr.matchAll(/class=['"](ocr_photo|ocr_separator)['"][^>]*title=['"]([^'"]*)['"]/g)) {
    if (m[1] === "ocr_separator") {
      separators++;
      continue;
    }
    const b = box(m[2]!);
    if (b) pictures += (b[2] - b[0]) * (b[3] - b[1]);
  }
  return { pictureFraction: Math.min(1, pictures / pageArea), separators };
}

/** Turns a binary PGM by 90, 180 or 270 degrees clockwise. */
export function rotatePgm(pgm: Uint8Array, degrees: number): Uint8Array {
  const head = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(new TextDecoder("latin1").decode(pgm.subarray(0, 40)));
  if (!head) throw new TranscribeError("The page image is not a grey PGM");
  const width = Number(head[1]);
  const height = Number(head[2]);
  const offset = head[0].length;
  const turn = ((degrees % 360) + 360) % 360;
  if (turn === 0) return pgm;
  const [w, h] = turn === 180 ? [width, height] : [height, width];
  const header = new TextEncoder().encode(`P5\n${w} ${h}\n255\n`);
  const out = new Uint8Array(header.length + width * height);
  out.set(header);
  const src = pgm.subarray(offset);
  const dst = out.subarray(header.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = src[y * width + x]!;
      if (turn === 90) dst[x * w + (w - 1 - y)] = v;
      else if (turn === 180) dst[(h - 1 - y) * w + (w - 1 - x)] = v;
      else dst[(h - 1 - x) * w + y] = v;
    }
  }
  return out;
}

/** Options of {@link createTesseract}. */
export interface TesseractOptions {
  /** Languages to read with (only installed ones are used). */
  languages?: readonly string[];
  /** Wall-clock limit per page, for OSD and recognition together (default 120 s). */
  timeoutMs?: number;
  /** Address-space limit per run in megabytes (default 1,536). */
  memoryMb?: number;
  /** Resolution pages are drawn at (default 300). */
  dpi?: number;
  /** Pages read at once (default: the number of cores). */
  concurrency?: number;
}

/**
 * A Tesseract transcriber over an installation found by {@link probeTesseract}.
 *
 * @example
 * const install = await probeTesseract();
 * if (install) console.log((await createTesseract(install)).label);
 */
export function createTesseract(install: TesseractInstall, options: TesseractOptions = {}): Transcriber {
  const languages = installedLanguages(options.languages ?? DEFAULT_LANGUAGES, install);
  if (languages.length === 0) {
    throw new TranscribeError(
      `None of the languages ${
        (options.languages ?? DEFAULT_LANGUAGES).join(", ")
      } is installed for Tesseract`,
    );
  }
  const timeoutMs = options.timeoutMs ?? 120_000;
  const memoryMb = options.memoryMb ?? 1536;
  const dpi = options.dpi ?? 300;
  const concurrency = Math.max(1, options.concurrency ?? navigator.hardwareConcurrency ?? 2);
  // Every document's pages share these slots: one core per page.
  const slots = new Limiter(concurrency);

  const run = async (
    args: string[],
    cwd: string,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<string> => {
    if (signal?.aborted) throw abortReason(signal);
    const left = deadline - Date.now();
    if (left <= 0) throw new TranscribeError(`Reading the page took longer than ${timeoutMs / 1000} s`);
    const limits = install.prlimit
      ? [
        "prlimit",
        `--as=${memoryMb * 1024 * 1024}`,
        `--cpu=${Math.ceil(timeoutMs / 1000) + 1}`,
        `--fsize=${256 * 1024 * 1024}`,
        "--nofile=64",
        "--",
      ]
      : [];
    const argv = [...limits, "tesseract", ...args];
    const child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      cwd,
      clearEnv: true,
      env: { OMP_THREAD_LIMIT: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let timedOut = false;
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, left);
    // A document deleted, or a server stopping, ends the run at once.
    signal?.addEventListener("abort", kill, { once: true });
    try {
      const out = await child.output();
      if (signal?.aborted) throw abortReason(signal);
      if (timedOut) throw new TranscribeError(`Reading the page took longer than ${timeoutMs / 1000} s`);
      const stderr = new TextDecoder().decode(out.stderr);
      if (!out.success) {
        if (out.signal === "SIGXCPU") {
          throw new TranscribeError(`Reading the page took more than ${timeoutMs / 1000} s of CPU time`);
        }
        if (/alloc|memory|bad_alloc/i.test(stderr) || out.signal === "SIGABRT" || out.signal === "SIGSEGV") {
          throw new TranscribeError(`Reading the page needed more than ${memoryMb} MB of memory`);
        }
        const line = stderr.split("\n").map((l) => l.trim()).filter((l) =>
          l && !/^Warning|^Estimating/.test(l)
        )
          .pop();
        throw new TranscribeError(
          `Tesseract stopped on this page (${out.signal ? `signal ${out.signal}` : `exit code ${out.code}`})${
            line ? `: ${line.slice(0, 200)}` : ""
          }`,
        );
      }
      return new TextDecoder().decode(out.stdout);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", kill);
    }
  };

  return {
    engine: "tesseract",
    version: install.version,
    label: `Tesseract ${install.version} (${languages.join(", ")})`,
    image: { format: "pgm", dpi },
    concurrency,
    transcribe(image: PageImage, hint: TranscribeHint, signal?: AbortSignal): Promise<Transcription> {
      return slots.run(() => read(image, hint, signal), signal);
    },
  };

  async function read(image: PageImage, hint: TranscribeHint, signal?: AbortSignal): Promise<Transcription> {
    if (image.format !== "pgm") throw new TranscribeError("Tesseract reads grey page images");
    const deadline = Date.now() + timeoutMs;
    const dir = await Deno.makeTempDir({ prefix: "sergo-tesseract-" });
    try {
      const input = join(dir, "page.pgm");
      await Deno.writeFile(input, image.bytes);
      const density = String(Math.round(image.dpi));
      let osd: Osd | null = null;
      try {
        osd = parseOsd(await run([input, "stdout", "--psm", "0", "--dpi", density], dir, deadline, signal));
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        // OSD gives up on pages with too little text ("Too few characters"); the page is still read.
        if (error instanceof TranscribeError && /longer than|memory|CPU/.test(error.message)) throw error;
      }
      const script = osd?.script ?? hint.documentScript;
      const langs = languagesForScript(script, languages).join("+");
      const recognize = async (pgm: Uint8Array, name: string) => {
        const path = join(dir, `${name}.pgm`);
        await Deno.writeFile(path, pgm);
        const base = join(dir, name);
        await run(
          [path, base, "-l", langs, "--psm", "3", "--dpi", density, "txt", "hocr"],
          dir,
          deadline,
          signal,
        );
        const hocr = await Deno.readTextFile(`${base}.hocr`);
        const text = (await Deno.readTextFile(`${base}.txt`)).replace(/\f/g, "").replace(/[ \t]+\n/g, "\n")
          .replace(/\n{3,}/g, "\n\n").trim();
        return { text, hocr, confidence: meanWordConfidence(hocr) };
      };
      let rotated = 0;
      let read;
      if (osd && osd.rotate !== 0 && osd.orientationConfidence >= ROTATE_CONFIDENCE) {
        rotated = osd.rotate;
        read = await recognize(rotatePgm(image.bytes, osd.rotate), "turned");
      } else if (osd && osd.rotate !== 0 && osd.orientationConfidence >= ROTATE_TRY_CONFIDENCE) {
        // OSD is unsure (a short text): read both ways and keep the one Tesseract is surer of.
        const upright = await recognize(image.bytes, "as-is");
        const turned = await recognize(rotatePgm(image.bytes, osd.rotate), "turned");
        if (turned.confidence > upright.confidence) {
          rotated = osd.rotate;
          read = turned;
        } else {
          read = upright;
        }
      } else {
        read = await recognize(image.bytes, "as-is");
      }
      const text = read.text;
      const layout = parseHocrLayout(read.hocr);
      return {
        text,
        figure: layout.pictureFraction >= FIGURE_PICTURE_FRACTION || layout.separators >= TABLE_SEPARATORS,
        languages: langs,
        ...(osd ? { script: osd.script } : {}),
        ...(rotated ? { rotated } : {}),
      };
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}
