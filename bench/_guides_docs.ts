/**
 * The fourth evaluation set's documents: the Debian Installation Guide (`installation-guide-amd64`, one
 * DocBook HTML file per section and language) and the Debian Developer's Reference (`developers-reference`
 * and its translations, Sphinx HTML), as their packages install them (listed in `search_guides_docs.tsv`
 * with package, version, license and a checksum over the files read). Each language's files are read in the
 * manual's order (following their `next` links), turned into plain text and laid onto estimated pages as
 * Sergo reads an uploaded text file, so each manual and language is one long document.
 *
 * Only the pages the manifest names are kept (other pages stay empty): each language keeps different
 * chapters, so a translation never answers for another language's question. The files are GPL-2 and a
 * megabyte or more per language, so they are read from `/usr/share`, not copied here; `.ci/run` installs
 * them.
 *
 * @module
 */
import type { CorpusFile } from "./_corpus_text.ts";
import { bodyText, loadManuals } from "./_manual_html.ts";

/**
 * One file's text as a reader copies it from the browser: a DocBook section between its navigation header
 * and footer, or a Sphinx page's main body without its sidebar and its headings' permalink marks.
 */
export function guideText(html: string): string {
  const sphinx = html.indexOf('<div class="body" role="main">');
  if (sphinx >= 0) {
    const end = html.indexOf('<div class="sphinxsidebar"', sphinx);
    return bodyText(
      html.slice(sphinx, end < 0 ? undefined : end).replace(/<a class="headerlink"[^>]*>[^<]*<\/a>/g, ""),
    );
  }
  const header = html.indexOf('<div class="navheader">');
  const start = header < 0 ? -1 : html.indexOf("</div>", header);
  const end = html.lastIndexOf('<div class="navfooter">');
  return bodyText(html.slice(start < 0 ? 0 : start + 6, end < 0 ? undefined : end));
}

/** The set's documents as pages (pages outside the chapters used are empty). */
export function loadGuidesDocs(): Promise<CorpusFile[]> {
  return loadManuals("search_guides_docs.tsv", "fourth", guideText);
}
