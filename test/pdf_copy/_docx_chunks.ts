/**
 * Test helper: a Word file's paragraphs in reading order, grouped into chunks
 * of about `size` characters, read straight from `word/document.xml`.
 *
 * @module
 */
import { strFromU8, unzipSync } from "fflate";

function decodeXml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n))).replace(/&amp;/g, "&");
}

/** The non-empty paragraphs of the document body, in order. */
export function docxParagraphs(docx: Uint8Array): string[] {
  const files = unzipSync(docx, { filter: (file) => file.name === "word/document.xml" });
  const xml = strFromU8(files["word/document.xml"]!);
  const paragraphs: string[] = [];
  for (const match of xml.matchAll(/<w:p[ >][\s\S]*?<\/w:p>/g)) {
    const text = [...match[0].matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>|<w:tab\/>/g)]
      .map((part) => part[1] === undefined ? " " : decodeXml(part[1])).join("").trim();
    if (text) paragraphs.push(text);
  }
  return paragraphs;
}

/** Paragraphs grouped into chunks of at least `size` characters. */
export function docxChunks(docx: Uint8Array, size = 800): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const paragraph of docxParagraphs(docx)) {
    current = current ? `${current}\n${paragraph}` : paragraph;
    if (current.length >= size) {
      chunks.push(current);
      current = "";
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
