/**
 * How a processed document becomes search passages: a page is one passage,
 * a long page is split at paragraphs, then lines, then spaces; a Word page
 * gives one passage per chunk, each with its section.
 *
 * @module
 */
import type { ProcessedPage } from "../events/types.ts";

/** Pages longer than this many characters are split into several passages. */
export const MAX_PASSAGE_CHARS = 1800;

/** One passage of a document, before it gets its row id. */
export interface PassageDraft {
  /** Page number of the passage. */
  page: number;
  /** Index of its chunk in reading order over the whole result (for re-paging after a PDF copy). */
  chunk: number;
  /** The heading above the passage (Word), or null. */
  section: string | null;
  /** The page's text may miss a figure, chart or table. */
  marked: boolean;
  /** The text as extracted: what the excerpt shows. */
  text: string;
  /** Speaker notes, searchable but not shown (first passage of a slide only). */
  notes: string | null;
}

/**
 * The passages of a processing result, in reading order. Every `chunks` entry
 * counts as one chunk, and a page without `chunks` counts as one, matching the
 * order of `PdfCopyMade.chunk_pages`.
 */
export function passagesOf(pages: readonly ProcessedPage[]): PassageDraft[] {
  const out: PassageDraft[] = [];
  let chunk = 0;
  for (const page of pages) {
    const notes = page.notes?.trim() ? page.notes : null;
    if (page.chunks) {
      let first = true;
      for (const entry of page.chunks) {
        for (const text of splitText(entry.text)) {
          out.push({
            page: page.page,
            chunk,
            section: entry.section,
            marked: page.marked,
            text,
            notes: null,
          });
          if (first && notes) out[out.length - 1]!.notes = notes;
          first = false;
        }
        chunk++;
      }
      continue;
    }
    const parts = splitText(page.text);
    if (parts.length === 0 && notes) parts.push(notes);
    parts.forEach((text, index) => {
      const withNotes = index === 0 && notes !== null && text !== notes ? notes : null;
      out.push({ page: page.page, chunk, section: null, marked: page.marked, text, notes: withNotes });
    });
    chunk++;
  }
  return out;
}

/**
 * Splits text longer than {@linkcode MAX_PASSAGE_CHARS} at paragraph breaks,
 * then line breaks, then spaces; shorter text comes back whole. Blank text
 * gives no parts.
 */
export function splitText(text: string, max = MAX_PASSAGE_CHARS): string[] {
  if (text.trim() === "") return [];
  if (text.length <= max) return [text];
  const out: string[] = [];
  for (const piece of pack(text, [/\n[ \t]*\n/g, /\n/g, /[ \t]+/g], max)) {
    const trimmed = piece.trim();
    if (trimmed) out.push(trimmed);
  }
  return out;
}

/** Packs `text` into pieces of at most `max` characters, cutting at the first separator that works. */
function pack(text: string, separators: readonly RegExp[], max: number): string[] {
  if (text.length <= max) return [text];
  const [separator, ...finer] = separators;
  if (!separator) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += max) out.push(text.slice(i, i + max));
    return out;
  }
  const segments: string[] = [];
  let start = 0;
  for (const match of text.matchAll(separator)) {
    const end = match.index + match[0].length;
    segments.push(text.slice(start, end));
    start = end;
  }
  segments.push(text.slice(start));
  const out: string[] = [];
  let current = "";
  for (const segment of segments) {
    if (current.length + segment.length <= max) {
      current += segment;
      continue;
    }
    if (current) out.push(current);
    current = "";
    if (segment.length <= max) current = segment;
    else out.push(...pack(segment, finer, max));
  }
  if (current) out.push(current);
  return out;
}
