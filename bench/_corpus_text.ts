/**
 * The corpus as pages of text for the search benchmark: PDFs through
 * pdftotext, slides and Word paragraphs from their XML, text files cut at form
 * feeds or every few thousand characters. Cached in `bench/data/`.
 *
 * @module
 */
import { unzipSync } from "fflate";
import { CORPUS_DIR } from "../test/helpers/corpus.ts";

/** One corpus file as pages of text. */
export interface CorpusFile {
  /** Path inside the corpus, such as `pdf/tracemonkey-pldi-paper.pdf`. */
  file: string;
  /** Text of each page, page 1 first. */
  pages: string[];
}

/** Where the real test files are. */
export { CORPUS_DIR };
const CACHE = new URL("./data/corpus_pages.json", import.meta.url);
const ESTIMATED_PAGE_CHARS = 3000;

/** Reads every non-hostile corpus file as pages (cached after the first run). */
export async function loadCorpus(): Promise<CorpusFile[]> {
  try {
    return JSON.parse(await Deno.readTextFile(CACHE)) as CorpusFile[];
  } catch {
    // Not cached yet.
  }
  const files: CorpusFile[] = [];
  for (const folder of ["pdf", "pptx", "docx", "text"]) {
    const names = [...Deno.readDirSync(`${CORPUS_DIR}/${folder}`)].map((entry) => entry.name).sort();
    for (const name of names) {
      const file = `${folder}/${name}`;
      const pages = await readPages(file).catch(() => [] as string[]);
      if (pages.some((page) => page.trim().length > 0)) files.push({ file, pages });
    }
  }
  await Deno.mkdir(new URL("./data/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(CACHE, JSON.stringify(files));
  return files;
}

async function readPages(file: string): Promise<string[]> {
  const path = `${CORPUS_DIR}/${file}`;
  if (file.endsWith(".pdf")) {
    const output = await new Deno.Command("pdftotext", { args: [path, "-"], stdout: "piped", stderr: "null" })
      .output();
    if (output.code !== 0) return [];
    const pages = new TextDecoder().decode(output.stdout).split("\f");
    if (pages.at(-1)?.trim() === "") pages.pop();
    return pages;
  }
  if (file.endsWith(".pptx")) {
    const entries = unzipSync(await Deno.readFile(path), {
      filter: (entry) => /^ppt\/slides\/slide\d+\.xml$/.test(entry.name),
    });
    const numbers = Object.keys(entries).map((name) => Number(name.match(/(\d+)\.xml$/)![1])).sort((a, b) =>
      a - b
    );
    return numbers.map((n) => xmlText(new TextDecoder().decode(entries[`ppt/slides/slide${n}.xml`]), "a"));
  }
  if (file.endsWith(".docx")) {
    const entries = unzipSync(await Deno.readFile(path), {
      filter: (entry) => entry.name === "word/document.xml",
    });
    const xml = entries["word/document.xml"];
    return xml ? cut(xmlText(new TextDecoder().decode(xml), "w")) : [];
  }
  const text = await Deno.readTextFile(path);
  return text.includes("\f") ? text.split("\f") : cut(text);
}

/** The text of `<x:t>` runs, one line per `<x:p>` paragraph. */
function xmlText(xml: string, prefix: string): string {
  const paragraphs = xml.split(new RegExp(`</${prefix}:p>`));
  return paragraphs
    .map((paragraph) =>
      [...paragraph.matchAll(new RegExp(`<${prefix}:t(?: [^>]*)?>([^<]*)</${prefix}:t>`, "g"))].map((m) =>
        m[1]
      ).join("")
    )
    .filter((line) => line.trim())
    .join("\n")
    .replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'");
}

/** Cuts long text into estimated pages at line ends. */
function cut(text: string): string[] {
  const pages: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (current.length + line.length > ESTIMATED_PAGE_CHARS && current) {
      pages.push(current);
      current = "";
    }
    current += `${line}\n`;
  }
  if (current.trim()) pages.push(current);
  return pages;
}
