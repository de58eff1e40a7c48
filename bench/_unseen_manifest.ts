/**
 * What the unseen evaluation sets' loaders share (`_debian_docs.ts`, `_handbook_docs.ts`, `_guides_docs.ts`): a
 * manifest of files installed by Debian packages, each checked by its sha256, and the page ranges a set keeps
 * (the other pages are left empty, so each language's chapters answer only their own questions).
 *
 * @module
 */

/** One document of a set's manifest (a TSV with these columns). */
export interface UnseenDocument {
  file: string;
  source_package: string;
  version: string;
  installed_path: string;
  pages_used: string;
  sha256: string;
}

/** The documents of the manifest `name` beside this file. */
export async function readManifest(name: string): Promise<UnseenDocument[]> {
  const text = await Deno.readTextFile(new URL(`./${name}`, import.meta.url));
  const [header, ...lines] = text.trim().split("\n");
  const names = header!.split("\t");
  return lines.map((line) => {
    const cells = line.split("\t");
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? ""])) as unknown as UnseenDocument;
  });
}

/** The SHA-256 of some bytes, in hex. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The pages with those outside `pagesUsed` ("3-7,12" or "12") left empty. */
export function keptPages(pages: string[], pagesUsed: string): string[] {
  const kept = new Set<number>();
  for (const range of pagesUsed.split(",")) {
    const [from, to] = range.split("-").map(Number) as [number, number | undefined];
    for (let page = from; page <= (to ?? from); page++) kept.add(page);
  }
  return pages.map((text, i) => kept.has(i + 1) ? text : "");
}
