/**
 * Estimated pages: chunks of text, each under its section heading, are laid onto pages
 * of about {@link CHARS_PER_PAGE} characters in reading order.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";
import { CHARS_PER_PAGE } from "./basic_rules.ts";

/** A run of text under its heading (`null` before the first heading). */
export interface Chunk {
  section: string | null;
  text: string;
}

/** A chunk to lay out; `marked` marks the page on which the chunk ends. */
export interface LayoutChunk extends Chunk {
  marked?: boolean;
}

/** Where to cut text longer than `limit`: the last paragraph, line or word boundary in the first two thirds or more. */
function cutIndex(text: string, limit: number): number {
  const window = text.slice(0, limit);
  const floor = limit / 3;
  let cut = window.lastIndexOf("\n\n");
  if (cut < floor) cut = window.lastIndexOf("\n");
  if (cut < floor) cut = window.search(/\s\S*$/);
  return cut < floor ? limit : cut;
}

/**
 * Lays chunks onto estimated pages in order. A chunk that does not fit the rest of a page
 * is split at paragraph or line boundaries so pages stay near {@link CHARS_PER_PAGE}.
 * With `withChunks` each page lists its chunks; otherwise the page is one chunk.
 */
export function paginate(chunks: LayoutChunk[], options: { withChunks: boolean }): ProcessedPage[] {
  const pages: ProcessedPage[] = [];
  let current: Chunk[] = [];
  let used = 0;
  let marked = false;
  const flush = (): void => {
    if (current.length === 0) return;
    const text = current.map((c) => c.text).join("\n\n");
    pages.push({
      page: pages.length + 1,
      text,
      ...(options.withChunks ? { chunks: current } : {}),
      marked,
      image_only: false,
    });
    current = [];
    used = 0;
    marked = false;
  };
  for (const chunk of chunks) {
    const text = chunk.text.trim();
    if (!text) continue;
    let rest = text;
    while (rest.length > 0) {
      const room = CHARS_PER_PAGE - used;
      if (rest.length <= room) {
        current.push({ section: chunk.section, text: rest });
        used += rest.length + 2;
        marked ||= chunk.marked === true;
        break;
      }
      if (room < CHARS_PER_PAGE / 4 && current.length > 0) {
        flush();
        continue;
      }
      const cut = cutIndex(rest, Math.max(room, 1));
      const head = rest.slice(0, cut).trim();
      if (head) current.push({ section: chunk.section, text: head });
      flush();
      rest = rest.slice(cut).trim();
    }
    if (used >= CHARS_PER_PAGE) flush();
  }
  flush();
  return pages;
}
