import assert from "node:assert/strict";
import { strFromU8, unzipSync } from "fflate";
import {
  checkCopy,
  converterAvailable,
  convertToPdf,
  NOT_INSTALLED,
  PdfCopyError,
} from "../../src/pdf_copy/libreoffice.ts";
import { extractPdf } from "../../src/processing/pdf_extract.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempDir } from "../helpers/temp.ts";

const CORPUS = `${CORPUS_DIR}`;

/** Slides listed in the deck's presentation.xml (hidden ones included). */
function slideCount(pptx: Uint8Array): number {
  const files = unzipSync(pptx, { filter: (file) => file.name === "ppt/presentation.xml" });
  return strFromU8(files["ppt/presentation.xml"]!).match(/<p:sldId\b/g)?.length ?? 0;
}

/**
 * Runs `fn` with a private TMPDIR (Deno.makeTempDir reads it at each call), put back afterwards: the copy
 * folders and LibreOffice processes it counts are its own, never another test's or program's on the machine.
 */
async function inPrivateTmp(fn: (tmp: string) => Promise<void>): Promise<void> {
  await using tmp = await tempDir("sergo-libreoffice-test-");
  const before = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", tmp.path);
  try {
    await fn(tmp.path);
  } finally {
    if (before === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", before);
  }
}

function tempCopyDirs(tmp: string): string[] {
  return [...Deno.readDirSync(tmp)].filter((entry) => entry.name.startsWith("sergo-pdf-copy-"))
    .map((entry) => entry.name);
}

/** Live (not zombie) processes whose command line mentions a copy folder in `tmp`, from `ps`. */
async function liveCopyProcesses(tmp: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "stat=,args="], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(`${tmp}/sergo-pdf-copy-`) && !line.trim().startsWith("Z"));
}

Deno.test("converterAvailable names the installed LibreOffice's version", async () => {
  await needs("soffice");
  const answer = await converterAvailable();
  assert.equal(answer.ok, true, answer.detail);
  assert.match(answer.detail, /^LibreOffice \d+\.\d+/);
});

Deno.test("without soffice on PATH, converterAvailable and convertToPdf say what to install", async () => {
  // A PATH with prlimit (the copy's limits come first) and without soffice.
  await using bin = await tempDir("sergo-path-");
  await Deno.symlink(await needs("prlimit"), `${bin.path}/prlimit`);
  const script = `
    import { converterAvailable, convertToPdf } from ${
    JSON.stringify(import.meta.resolve("../../src/pdf_copy/libreoffice.ts"))
  };
    const answer = await converterAvailable();
    const copy = await convertToPdf(new Uint8Array([1]), "txt").then(() => "made", (error) => error.message);
    console.log(JSON.stringify({ answer, copy }));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    env: { PATH: bin.path },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    answer: { ok: false, detail: NOT_INSTALLED },
    copy: NOT_INSTALLED,
  });
});

Deno.test({
  name: "a deck's PDF copy has one page per slide, and its pages carry the slides' text",
  async fn() {
    await needs("soffice");
    const pptx = await Deno.readFile(`${CORPUS}/pptx/markitdown-test-deck-chart-table.pptx`);
    const slides = slideCount(pptx);
    assert.equal(slides, 6);
    await inPrivateTmp(async (tmp) => {
      const pdf = await convertToPdf(pptx, "pptx");
      assert.equal(await checkCopy("pptx", slides, pdf), 6);
      assert.deepEqual(tempCopyDirs(tmp), [], "temporary folders are removed");
      const texts = (await extractPdf(pdf)).pages.map((page) => page.text);
      assert.equal(texts.length, 6);
      assert.ok(texts.join(" ").length > 100);
    });
  },
});

Deno.test({
  name: "hidden slides are kept in a deck's copy, so page numbers are slide numbers",
  async fn() {
    await needs("soffice");
    const pptx = await Deno.readFile(`${CORPUS}/pptx/talent-review-hr-smartart-notes.pptx`);
    const slides = slideCount(pptx);
    assert.equal(slides, 28, "3 of them hidden");
    const pdf = await convertToPdf(pptx, "pptx");
    assert.equal(await checkCopy("pptx", slides, pdf), 28);
  },
});

Deno.test({
  name: "a copy with the wrong number of pages is refused with a reason",
  async fn() {
    await needs("soffice");
    const pdf = await convertToPdf(
      await Deno.readFile(`${CORPUS}/pptx/docling-sample-table-notes.pptx`),
      "pptx",
    );
    assert.equal(await checkCopy("pptx", 3, pdf), 3);
    await assert.rejects(checkCopy("pptx", 5, pdf), {
      name: "PdfCopyError",
      message:
        "The PDF copy has 3 pages but the deck has 5 slides, so its page numbers would not match the slides",
    });
    await assert.rejects(checkCopy("docx", null, new Uint8Array(0)), {
      name: "PdfCopyError",
      message:
        "The PDF copy of the docx file cannot be read: The PDF file is empty, i.e. its size is zero bytes.",
    });
  },
});

Deno.test({
  name: "a Word file and a text file get PDF copies",
  async fn() {
    await needs("soffice");
    const docx = await convertToPdf(await Deno.readFile(`${CORPUS}/docx/docling-word-sample.docx`), "docx");
    assert.ok(await checkCopy("docx", null, docx) >= 1);
    const text = await convertToPdf(await Deno.readFile(`${CORPUS}/text/markitdown-readme.md`), "md");
    const texts = (await extractPdf(text)).pages.map((page) => page.text);
    assert.ok(texts.length >= 2);
    assert.match(texts.join(" "), /MarkItDown/);
  },
});

Deno.test({
  name: "a deck that is not a zip fails with one sentence saying LibreOffice could not copy it",
  async fn() {
    await needs("soffice");
    const bytes = await Deno.readFile(`${CORPUS}/hostile/fuzzed-not-a-zip.pptx`);
    await assert.rejects(convertToPdf(bytes, "pptx", { timeoutMs: 60_000 }), (error: Error) => {
      assert.ok(error instanceof PdfCopyError, String(error));
      assert.match(error.message, /^LibreOffice could not copy the pptx file to PDF: [^\n]+$/);
      return true;
    });
  },
});

Deno.test({
  name: "a conversion past its time limit is stopped, leaves no LibreOffice running and no temporary folder",
  async fn() {
    await needs("soffice");
    const bytes = await Deno.readFile(`${CORPUS}/pptx/apache-performance-tuning-notes.pptx`);
    await inPrivateTmp(async (tmp) => {
      await assert.rejects(convertToPdf(bytes, "pptx", { timeoutMs: 1500 }), {
        name: "PdfCopyError",
        message: "LibreOffice took longer than 1500 ms to copy the pptx file to PDF",
      });
      assert.deepEqual(tempCopyDirs(tmp), []);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(await liveCopyProcesses(tmp), []);
    });
  },
});
