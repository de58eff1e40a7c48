/**
 * Planted bugs for issue 26's Standard, vision, drawing and read_document
 * limits (branch h-standard); see `mutations.ts` for the shape.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const DECLARED_SIZE = "test/render/declared_size_test.ts";
const HEADINGS = "test/mcp/heading_lookalikes_test.ts";

/** This branch's mutations. */
export const MUTATIONS_STANDARD: Mutation[] = [
  {
    name: "drawing: the declared-size guard reads only the raw bytes (no resolved values)",
    file: "src/render/image_size_guard.ts",
    from: "if (!(object instanceof PDFRawStream)) continue;",
    to: "if (object) continue;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "drawing: the declared-size guard ignores what pdf-lib resolved",
    file: "src/render/image_size_guard.ts",
    from: "return larger(raw, parsed);",
    to: "return raw;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "read_document: heading look-alikes in page text left as they are",
    file: "src/mcp/tools/read_document.ts",
    from: "    : escapeHeadingLookalikes(page.text);",
    to: "    : page.text;",
    tests: [HEADINGS],
  },
  {
    name: "read_document: only ASCII dashes taken for a heading look-alike",
    file: "src/mcp/tools/read_document.ts",
    from: "(?=[-\\u2010-\\u2015\\u2212\\ufe58\\ufe63\\uff0d]{3,}",
    to: "(?=[-]{3,}",
    tests: [HEADINGS],
  },
];
