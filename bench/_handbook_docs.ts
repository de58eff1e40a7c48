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
import type { CorpusFile } from "./_corpus_text.ts";
import { bodyText, loadManuals } from "./_manual_html.ts";

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
export function loadHandbookDocs(): Promise<CorpusFile[]> {
  return loadManuals("search_handbook_docs.tsv", "third", handbookText);
}
