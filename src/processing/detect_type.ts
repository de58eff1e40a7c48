/**
 * Decides a document's type by its content (magic bytes, zip parts, text encoding) and
 * refuses files that are not what their name claims, with a one-sentence reason.
 *
 * @module
 */
import type { DocumentType } from "../../events/types.ts";
import { findMainPart } from "./_opc.ts";
import { looksLikeZip, openZip } from "./_zip.ts";
import { ProcessingError } from "./processing_error.ts";
import { decodeText } from "./text_extract.ts";

/** Content-type markers of the main parts Sergo reads. */
export const WORD_MAIN = "wordprocessingml.document.main+xml";
/** PowerPoint main part content type (presentation, slideshow, template, macro-enabled). */
export const POWERPOINT_MAIN =
  /presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroEnabled\.main\+xml/;

const EXTENSIONS: Record<string, DocumentType | "text"> = {
  pdf: "pdf",
  pptx: "pptx",
  pptm: "pptx",
  ppsx: "pptx",
  potx: "pptx",
  docx: "docx",
  docm: "docx",
  dotx: "docx",
  txt: "text",
  text: "text",
  md: "text",
  markdown: "text",
};

const NAMES: Record<DocumentType, string> = {
  pdf: "a PDF",
  pptx: "a PowerPoint presentation",
  docx: "a Word document",
  txt: "a text file",
  md: "a text file",
};

function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf(".");
  return dot < 0 ? "" : fileName.slice(dot + 1).toLowerCase();
}

function findPdfHeader(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length - 5, 1024);
  for (let i = 0; i <= end; i++) {
    if (
      bytes[i] === 0x25 && bytes[i + 1] === 0x50 && bytes[i + 2] === 0x44 && bytes[i + 3] === 0x46 &&
      bytes[i + 4] === 0x2d
    ) {
      return true;
    }
  }
  return false;
}

function containsUtf16(bytes: Uint8Array, word: string): boolean {
  const needle = new Uint8Array(word.length * 2);
  for (let i = 0; i < word.length; i++) needle[i * 2] = word.charCodeAt(i);
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

function oleReason(bytes: Uint8Array): string {
  if (containsUtf16(bytes, "EncryptedPackage")) {
    return "This file is a password-protected Office document (an encrypted container), which Sergo cannot open: remove the password and upload it again.";
  }
  if (containsUtf16(bytes, "WordDocument")) {
    return "This file is a legacy Word 97–2003 document (.doc), not a .docx: save it as .docx and upload it again.";
  }
  if (containsUtf16(bytes, "PowerPoint Document")) {
    return "This file is a legacy PowerPoint 97–2003 presentation (.ppt), not a .pptx: save it as .pptx and upload it again.";
  }
  if (containsUtf16(bytes, "Workbook") || containsUtf16(bytes, "Book")) {
    return "This file is a legacy Excel workbook (.xls), which Sergo does not read.";
  }
  return "This file is a legacy Microsoft Office (OLE) file, which Sergo does not read.";
}

function zipType(bytes: Uint8Array): DocumentType {
  const zip = openZip(bytes);
  if (zip.has("ppt/presentation.xml")) return "pptx";
  if (zip.has("word/document.xml")) return "docx";
  const names = [...zip.entries.keys()];
  if (findMainPart(zip, WORD_MAIN)) return "docx";
  for (const name of names) {
    if (/^ppt\/[^/]+\.xml$/.test(name) && zip.has("ppt/slides/slide1.xml")) return "pptx";
  }
  if (zip.has("xl/workbook.xml") || names.some((n) => n.startsWith("xl/"))) {
    throw new ProcessingError("This file is an Excel workbook, which Sergo does not read.");
  }
  if (zip.has("mimetype") && new TextDecoder().decode(zip.read("mimetype")).includes("opendocument")) {
    throw new ProcessingError(
      "This file is an OpenDocument file, which Sergo does not read: save it as .docx or .pptx.",
    );
  }
  throw new ProcessingError("This zip archive holds no Word document or PowerPoint presentation part.");
}

/**
 * Decides the type of a file from its bytes; the name only tells `md` from `txt` and is
 * checked against the content.
 *
 * @example detectType(await Deno.readFile("deck.pptx"), "deck.pptx") // "pptx"
 */
export function detectType(bytes: Uint8Array, fileName: string): DocumentType {
  if (bytes.length === 0) throw new ProcessingError("This file is empty (0 bytes).");
  const ext = extensionOf(fileName);
  const claimed = EXTENSIONS[ext];
  let type: DocumentType;
  if (findPdfHeader(bytes)) {
    type = "pdf";
  } else if (
    bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0 && bytes[4] === 0xa1 &&
    bytes[5] === 0xb1 && bytes[6] === 0x1a && bytes[7] === 0xe1
  ) {
    throw new ProcessingError(oleReason(bytes));
  } else if (looksLikeZip(bytes)) {
    type = zipType(bytes);
  } else {
    let text: string;
    try {
      text = decodeText(bytes);
    } catch (error) {
      if (claimed && claimed !== "text") {
        throw new ProcessingError(
          `This file is not ${NAMES[claimed]}: its content is neither that nor text.`,
        );
      }
      throw error;
    }
    if (text.trim() === "") throw new ProcessingError("This file is empty: it holds only whitespace.");
    type = ext === "md" || ext === "markdown" ? "md" : "txt";
  }
  if (claimed !== undefined) {
    const matches = claimed === "text" ? type === "txt" || type === "md" : claimed === type;
    if (!matches) {
      throw new ProcessingError(`This file is ${NAMES[type]}, but its name "${fileName}" says otherwise.`);
    }
  }
  return type;
}
