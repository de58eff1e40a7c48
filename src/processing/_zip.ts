/**
 * A bounded view of a zip package (docx, pptx): the central directory is read first,
 * entry count and declared sizes are checked, then single entries are inflated on demand.
 *
 * @module
 */
import { unzipSync } from "fflate";
import { ProcessingError } from "./processing_error.ts";
import { MAX_ZIP_ENTRIES, MAX_ZIP_ENTRY_BYTES, MAX_ZIP_RATIO, MAX_ZIP_TOTAL_BYTES } from "./basic_rules.ts";

/** One entry of a zip's central directory. */
export interface ZipEntry {
  name: string;
  size: number;
  originalSize: number;
}

/** A zip package whose directory has been checked against the limits. */
export interface ZipPackage {
  entries: Map<string, ZipEntry>;
  has(name: string): boolean;
  /** The inflated bytes of an entry, or undefined when absent. */
  read(name: string): Uint8Array | undefined;
  /** The entry decoded as UTF-8 (or UTF-16 with a BOM), or undefined when absent. */
  readText(name: string): string | undefined;
}

/** True when the bytes start like a zip archive. */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b &&
    ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6) ||
      (bytes[2] === 7 && bytes[3] === 8));
}

function zipFailure(error: unknown): ProcessingError {
  if (error instanceof ProcessingError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/invalid zip data/i.test(message)) {
    return new ProcessingError(
      "This file is a damaged zip archive: its central directory (the end of the file) is missing or broken.",
    );
  }
  return new ProcessingError(`This file is a damaged zip archive: ${message.replace(/\.$/, "")}.`);
}

/** Decodes XML bytes: UTF-16 with BOM, otherwise UTF-8 (BOM dropped). */
export function decodeXmlBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  return new TextDecoder("utf-8").decode(bytes);
}

/** Opens a zip package, refusing it when it is damaged or exceeds the entry and size limits. */
export function openZip(bytes: Uint8Array): ZipPackage {
  const entries = new Map<string, ZipEntry>();
  let total = 0;
  try {
    unzipSync(bytes, {
      filter(file) {
        if (entries.size >= MAX_ZIP_ENTRIES) {
          throw new ProcessingError(
            `This zip archive has more than ${MAX_ZIP_ENTRIES} entries, too many to read.`,
          );
        }
        total += file.originalSize;
        if (file.originalSize > MAX_ZIP_ENTRY_BYTES) {
          throw new ProcessingError(
            `This zip archive would expand to more than ${
              MAX_ZIP_ENTRY_BYTES / 1e6
            } MB in one part, too large to read.`,
          );
        }
        if (total > MAX_ZIP_TOTAL_BYTES) {
          throw new ProcessingError(
            `This zip archive would expand to more than ${MAX_ZIP_TOTAL_BYTES / 1e6} MB, too large to read.`,
          );
        }
        if (file.originalSize > 1_000_000 && file.originalSize > file.size * MAX_ZIP_RATIO) {
          throw new ProcessingError(
            `This zip archive looks like a zip bomb: "${file.name}" expands ${
              Math.round(file.originalSize / Math.max(1, file.size))
            } times.`,
          );
        }
        entries.set(file.name, { name: file.name, size: file.size, originalSize: file.originalSize });
        return false;
      },
    });
  } catch (error) {
    throw zipFailure(error);
  }
  const read = (name: string): Uint8Array | undefined => {
    if (!entries.has(name)) return undefined;
    try {
      return unzipSync(bytes, { filter: (file) => file.name === name })[name];
    } catch (error) {
      throw new ProcessingError(
        `The entry "${name}" of this zip archive cannot be inflated: ${
          error instanceof Error ? error.message.replace(/\.$/, "") : String(error)
        }.`,
      );
    }
  };
  return {
    entries,
    has: (name) => entries.has(name),
    read,
    readText(name) {
      const data = read(name);
      return data === undefined ? undefined : decodeXmlBytes(data);
    },
  };
}

/** Resolves a relationship target against the folder of the part that refers to it. */
export function resolvePartPath(fromPart: string, target: string): string {
  if (target.startsWith("/")) return target.slice(1);
  const base = fromPart.includes("/") ? fromPart.slice(0, fromPart.lastIndexOf("/")).split("/") : [];
  for (const seg of target.split("/")) {
    if (seg === "..") base.pop();
    else if (seg !== "." && seg !== "") base.push(seg);
  }
  return base.join("/");
}

/** The path of a part's relationships file (`ppt/slides/slide1.xml` → `ppt/slides/_rels/slide1.xml.rels`). */
export function relsPathOf(part: string): string {
  const slash = part.lastIndexOf("/");
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}
