/**
 * The second evaluation set's documents: Debian's own manuals as their
 * packages install them (listed in `search_debian_docs.tsv` with package,
 * version, license and checksum), read through pdftotext like the corpus.
 * Only the chapters the manifest names are kept (other pages stay empty),
 * so each language holds different chapters and a translation never
 * answers for another. The files are GPL-2+ and a megabyte or more each,
 * so they are read from `/usr/share`, not copied here; `.ci/run` installs them.
 *
 * @module
 */
import { gunzipSync } from "fflate";
import type { CorpusFile } from "./_corpus_text.ts";

interface DebianDocument {
  file: string;
  source_package: string;
  version: string;
  installed_path: string;
  pages_used: string;
  sha256: string;
}

/** The manifest's documents. */
async function manifest(): Promise<DebianDocument[]> {
  const text = await Deno.readTextFile(new URL("./search_debian_docs.tsv", import.meta.url));
  const [header, ...lines] = text.trim().split("\n");
  const names = header!.split("\t");
  return lines.map((line) => {
    const cells = line.split("\t");
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? ""])) as unknown as DebianDocument;
  });
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The set's documents as pages (pages outside the chapters used are empty). */
export async function loadDebianDocs(): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const document of await manifest()) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(document.installed_path);
    } catch {
      throw new Error(
        `The second evaluation set needs the Debian package "${document.source_package}": ${document.installed_path} is missing`,
      );
    }
    if (await sha256(bytes) !== document.sha256) {
      throw new Error(
        `The evaluation file ${document.installed_path} is not the one its questions were written from: expected "${document.source_package}" ${document.version}`,
      );
    }
    const pdf = document.installed_path.endsWith(".gz") ? gunzipSync(bytes) : bytes;
    const child = new Deno.Command("pdftotext", { args: ["-", "-"], stdin: "piped", stdout: "piped" })
      .spawn();
    const writer = child.stdin.getWriter();
    await writer.write(pdf);
    await writer.close();
    const output = await child.output();
    if (!output.success) throw new Error(`pdftotext could not read ${document.installed_path}`);
    const pages = new TextDecoder().decode(output.stdout).split("\f");
    if (pages.at(-1)?.trim() === "") pages.pop();
    const kept = new Set<number>();
    for (const range of document.pages_used.split(",")) {
      const [from, to] = range.split("-").map(Number) as [number, number];
      for (let page = from; page <= to; page++) kept.add(page);
    }
    out.push({ file: document.file, pages: pages.map((text, i) => kept.has(i + 1) ? text : "") });
  }
  return out;
}
