/**
 * The third evaluation set's documents: The Debian Administrator's Handbook
 * as the `debian-handbook` package installs it, one HTML file per section and
 * language (listed in `search_handbook_docs.tsv` with package, version,
 * license and a checksum over the files read). Each language's files are read
 * in the book's order (following their `next` links), turned into plain text
 * and laid onto estimated pages as Sergo reads an uploaded text file, so each
 * language is one long document of about 500 pages.
 *
 * Only the pages the manifest names are kept (other pages stay empty): each
 * language keeps different chapters, so a translation never answers for
 * another language's question, and the index holds what the questions ask
 * about rather than eleven copies of one book. The files are GPL-2+ and
 * several megabytes per language, so they are read from `/usr/share`, not
 * copied here; `.ci/run` installs them.
 *
 * @module
 */
import { extractText } from "../src/processing/text_extract.ts";
import type { CorpusFile } from "./_corpus_text.ts";
import { bodyText, manualFiles, sha256Files } from "./_manual_html.ts";
import { keptPages, readManifest } from "./_unseen_manifest.ts";

/**
 * One section's text as a reader copies it from the browser: the body between the navigation bars,
 * headings and paragraphs apart, a table's row on one line with its cells between tabs, code as written.
 */
export function handbookText(html: string): string {
  const start = html.indexOf("</ul>", html.indexOf('<ul class="docnav top">'));
  const end = html.lastIndexOf('<ul class="docnav">');
  const body = html.slice(start < 0 ? 0 : start + 5, end < 0 ? undefined : end);
  return bodyText(body);
}

/** The set's documents as pages (pages outside the chapters used are empty). */
export async function loadHandbookDocs(): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const document of await readManifest("search_handbook_docs.tsv")) {
    let files: Uint8Array[];
    try {
      files = await manualFiles(document.installed_path);
    } catch {
      throw new Error(
        `The third evaluation set needs the Debian package "${document.source_package}": ${document.installed_path} is incomplete`,
      );
    }
    if (await sha256Files(files) !== document.sha256) {
      throw new Error(
        `The evaluation files in ${document.installed_path} are not the ones their questions were written from: expected "${document.source_package}" ${document.version}`,
      );
    }
    const text = files.map((file) => handbookText(new TextDecoder().decode(file))).join("\n\n");
    const { pages } = await extractText(new TextEncoder().encode(text), "txt");
    out.push({ file: document.file, pages: keptPages(pages.map(({ text }) => text), document.pages_used) });
  }
  return out;
}
