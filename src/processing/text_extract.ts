/**
 * Plain text and Markdown: decoded (UTF-8 with or without BOM, UTF-16 with BOM) and
 * split into estimated pages. Markdown pages carry chunks whose `section` is the nearest
 * heading above; plain text pages are one chunk each (no `chunks`).
 *
 * @module
 */
import { MAX_TEXT_BYTES } from "./basic_rules.ts";
import type { ExtractResult } from "./extract_result.ts";
import { type Chunk, paginate } from "./_paginate.ts";
import { ProcessingError } from "./processing_error.ts";

/** Decodes text bytes, refusing binary content; the result has normalized line ends. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes.length > MAX_TEXT_BYTES) {
    throw new ProcessingError(`This text file is larger than ${MAX_TEXT_BYTES / 1e6} MB, too large to read.`);
  }
  let text: string;
  try {
    if (bytes[0] === 0xff && bytes[1] === 0xfe) {
      text = new TextDecoder("utf-16le", { fatal: true }).decode(bytes.subarray(2));
    } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
      text = new TextDecoder("utf-16be", { fatal: true }).decode(bytes.subarray(2));
    } else {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    }
  } catch {
    throw new ProcessingError(
      "This file is not text: it is neither valid UTF-8 nor UTF-16 with a byte-order mark.",
    );
  }
  // deno-lint-ignore no-control-regex
  const binary = text.match(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/);
  if (binary) {
    const code = binary[0].charCodeAt(0).toString(16).padStart(2, "0");
    throw new ProcessingError(`This file is not text: it holds the binary control byte 0x${code}.`);
  }
  return text.replace(/\r\n?/g, "\n");
}

function markdownChunks(text: string): Chunk[] {
  const chunks: Chunk[] = [];
  let section: string | null = null;
  let lines: string[] = [];
  let fence = false;
  const flush = (): void => {
    const body = lines.join("\n").trim();
    if (body) chunks.push({ section, text: body });
    lines = [];
  };
  for (const line of text.split("\n")) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fence = !fence;
    const heading = fence ? null : line.match(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      section = heading[1] ?? "";
    }
    lines.push(line);
  }
  flush();
  return chunks;
}

/** Extracts a text or Markdown file into estimated pages. */
export function extractText(bytes: Uint8Array, type: "txt" | "md"): Promise<ExtractResult> {
  const text = decodeText(bytes).replace(/\f/g, "\n\n");
  if (text.trim() === "") throw new ProcessingError("This file is empty: it holds only whitespace.");
  const chunks = type === "md"
    ? markdownChunks(text)
    : [{ section: null, text: text.replace(/\n{3,}/g, "\n\n") }];
  const pages = paginate(chunks, { withChunks: type === "md" });
  return Promise.resolve({ type, page_count: pages.length, pages_estimated: true, pages });
}
