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
import { keptPages, readManifest, sha256Hex } from "./_unseen_manifest.ts";

/** The book's HTML files in reading order: `index.html`, then each page's `next` link. */
async function bookFiles(directory: string): Promise<Uint8Array[]> {
  const files: Uint8Array[] = [];
  const seen = new Set<string>();
  for (let name: string | undefined = "index.html"; name && !seen.has(name);) {
    seen.add(name);
    const bytes = await Deno.readFile(`${directory}/${name}`);
    files.push(bytes);
    name = new TextDecoder().decode(bytes).match(/<link rel="next" href="([^"#]+)"/)?.[1];
  }
  return files;
}

/** The SHA-256 of the files one after another. */
function sha256(files: Uint8Array[]): Promise<string> {
  const all = new Uint8Array(files.reduce((sum, file) => sum + file.length, 0));
  let at = 0;
  for (const file of files) {
    all.set(file, at);
    at += file.length;
  }
  return sha256Hex(all);
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

function unescape(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] !== "#") return ENTITIES[name] ?? whole;
    return String.fromCodePoint(
      name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1)),
    );
  });
}

/**
 * One section's text as a reader copies it from the browser: the body between the navigation bars,
 * headings and paragraphs apart, a table's row on one line with its cells between tabs, code as written.
 */
export function handbookText(html: string): string {
  const start = html.indexOf("</ul>", html.indexOf('<ul class="docnav top">'));
  const end = html.lastIndexOf('<ul class="docnav">');
  const body = html.slice(start < 0 ? 0 : start + 5, end < 0 ? undefined : end);
  return body
    .split(/(<pre[^>]*>[\s\S]*?<\/pre>)/)
    .map((part, i) => i % 2 ? `\n\n${part}\n\n` : part.replace(/\s+/g, " "))
    .join("")
    .replace(/<\/t[dh]>\s*(?=<t[dh][ >])/g, "\t")
    .replace(/<\/(?:tr|li|dt|dd)>|<br\s*\/?>/g, "\n")
    .replace(/<\/(?:div|p|h\d|table|dl|ul|ol|pre)>/g, "\n\n")
    .replace(/<[^>]*>/g, "")
    .split("\n")
    .map((line) => unescape(line).replace(/[ \u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The set's documents as pages (pages outside the chapters used are empty). */
export async function loadHandbookDocs(): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const document of await readManifest("search_handbook_docs.tsv")) {
    let files: Uint8Array[];
    try {
      files = await bookFiles(document.installed_path);
    } catch {
      throw new Error(
        `The third evaluation set needs the Debian package "${document.source_package}": ${document.installed_path} is incomplete`,
      );
    }
    if (await sha256(files) !== document.sha256) {
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
