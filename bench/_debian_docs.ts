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
import { keptPages, readManifest, sha256Hex } from "./_unseen_manifest.ts";

/** The set's documents as pages (pages outside the chapters used are empty). */
export async function loadDebianDocs(): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const document of await readManifest("search_debian_docs.tsv")) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(document.installed_path);
    } catch {
      throw new Error(
        `The second evaluation set needs the Debian package "${document.source_package}": ${document.installed_path} is missing`,
      );
    }
    if (await sha256Hex(bytes) !== document.sha256) {
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
    out.push({ file: document.file, pages: keptPages(pages, document.pages_used) });
  }
  return out;
}
