/**
 * The fifth evaluation set's documents: the Debian New Maintainers' Guide (`maint-guide` and its
 * translations), the aptitude user's manual (`aptitude-doc-*`) and the Debian Reference's Spanish, French and
 * Portuguese translations (`debian-reference-*`, HTML; the second set reads other languages' PDFs), all
 * DocBook HTML as their packages install them (listed in `search_maint_docs.tsv` with package, version,
 * license and a checksum over the files read). Each language's files are read in the manual's order (from its
 * index, following the `next` links), turned into plain text and laid onto estimated pages as Sergo reads an
 * uploaded text file, so each manual and language is one long document (the Debian Reference runs past 200
 * pages).
 *
 * Only the pages the manifest names are kept (other pages stay empty): each language of a manual keeps
 * different chapters, so a translation never answers for another language's question. The files are GPL-2+,
 * so they are read from `/usr/share`, not copied here; `.ci/run` installs them.
 *
 * @module
 */
import type { CorpusFile } from "./_corpus_text.ts";
import { guideText } from "./_guides_docs.ts";
import { loadManuals } from "./_manual_html.ts";

/** The set's documents as pages (pages outside the chapters used are empty). */
export function loadMaintDocs(): Promise<CorpusFile[]> {
  return loadManuals("search_maint_docs.tsv", "fifth", guideText);
}
