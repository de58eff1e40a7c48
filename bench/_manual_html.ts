/**
 * What the loaders of the unseen sets read from HTML manuals share (`_handbook_docs.ts`,
 * `_guides_docs.ts`): a manual's files in reading order (from `index.html`, each file's `next`
 * link), the SHA-256 over them, a body's text as a reader copies it from the browser, and a set's
 * documents read from its manifest and laid onto pages.
 *
 * @module
 */
import { extractText } from "../src/processing/text_extract.ts";
import type { CorpusFile } from "./_corpus_text.ts";
import { keptPages, readManifest, sha256Hex } from "./_unseen_manifest.ts";

/**
 * A manual's HTML files in reading order: `start` (`index.html` unless named), then each file's `next` link.
 * Manuals whose languages share a directory start from their language's index (`index.pt.html`).
 */
export async function manualFiles(directory: string, start = "index.html"): Promise<Uint8Array[]> {
  const files: Uint8Array[] = [];
  const seen = new Set<string>();
  for (let name: string | undefined = start; name && !seen.has(name);) {
    seen.add(name);
    const bytes = await Deno.readFile(`${directory}/${name}`);
    files.push(bytes);
    name = new TextDecoder().decode(bytes).match(/<link rel="next"[^>]*?\shref="([^"#]+)"/)?.[1];
  }
  return files;
}

/** The SHA-256 of the files one after another. */
export function sha256Files(files: Uint8Array[]): Promise<string> {
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
 * A page body's text as a reader copies it from the browser: headings and paragraphs apart, a table's row on
 * one line with its cells between tabs, code as written.
 */
export function bodyText(body: string): string {
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

/**
 * A set's documents as pages (pages outside the chapters used are empty): each manifest row's manual read
 * in order and checked against its sha256, each file's text by `textOf`, laid onto estimated pages as
 * Sergo reads an uploaded text file. An `installed_path` naming an `.html` file starts from that file in its
 * directory; a directory starts from its `index.html`. `set` names the set in the error when a package is missing.
 */
export async function loadManuals(
  manifest: string,
  set: string,
  textOf: (html: string) => string,
): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const document of await readManifest(manifest)) {
    let files: Uint8Array[];
    try {
      const path = document.installed_path;
      files = path.endsWith(".html")
        ? await manualFiles(path.slice(0, path.lastIndexOf("/")), path.slice(path.lastIndexOf("/") + 1))
        : await manualFiles(path);
    } catch {
      throw new Error(
        `The ${set} evaluation set needs the Debian package "${document.source_package}": ${document.installed_path} is incomplete`,
      );
    }
    if (await sha256Files(files) !== document.sha256) {
      throw new Error(
        `The evaluation files in ${document.installed_path} are not the ones their questions were written from: expected "${document.source_package}" ${document.version}`,
      );
    }
    const text = files.map((file) => textOf(new TextDecoder().decode(file))).join("\n\n");
    const { pages } = await extractText(new TextEncoder().encode(text), "txt");
    out.push({ file: document.file, pages: keptPages(pages.map(({ text }) => text), document.pages_used) });
  }
  return out;
}
