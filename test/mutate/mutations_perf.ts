/**
 * Mutations of the hot-path changes of issue 32 (h-perf): the plain
 * `tools/list` answered without the SDK, a body of a declared length read
 * whole under its deadline, the declared-image-size guard's fast scan, and
 * JPEGs decoded natively for page views, and the document kept open between
 * pages of one file; the audit view's own thread and the read cache that ignores
 * its commits (h-audit3).
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const DECLARED_SIZE = "test/render/declared_size_test.ts";
const NATIVE_JPEG = "test/render/native_jpeg_test.ts";

/** The planted bugs and the test files that must fail with each. */
export const MUTATIONS_PERF: Mutation[] = [
  {
    name: "plain tools/list: params with fields taken as plain (a cursor of the wrong type answered)",
    file: "src/mcp/json_rpc.ts",
    from: "for (const _field in params) return false;",
    to: "for (const _field in params) break;",
    tests: ["test/mcp/reference_bytes_test.ts"],
  },
  {
    name: "a body of a declared length read with no deadline",
    file: "src/http/read_body.ts",
    from: 'const done = deadlines.start(() => reject(slowBody(timeoutMs, "arrive in full")));',
    to: "const done = deadlines.start(() => {});",
    tests: ["test/http/slow_body_test.ts"],
  },
  {
    name: "declared-size scan: references left unresolved",
    file: "src/render/_pdf_object_scan.ts",
    from: 'const n = typeof value === "object" && "ref" in value ? numbers.get(value.ref) : value;',
    to: "const n = value;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "declared-size scan: /W and /H not read as pdf.js reads them",
    file: "src/render/_pdf_object_scan.ts",
    from: 'const width = value.get("Width") ?? value.get("W");',
    to: 'const width = value.get("Width");',
    tests: [DECLARED_SIZE],
  },
  {
    name: "declared-size scan: object streams not read",
    file: "src/render/_pdf_object_scan.ts",
    from: "if (!readObjectStream(bytes, value, dataStart, found.numbers)) found.unsure = true;",
    to: "",
    tests: [DECLARED_SIZE],
  },
  {
    name: "declared-size scan: an object number it cannot read taken for sure (no full parse)",
    file: "src/render/_pdf_object_scan.ts",
    from: "if (number === null) found.unsure = true;",
    to: "if (number === null) continue;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "native JPEG: Exif left in (the native decoder turns the picture, pdf.js does not)",
    file: "src/render/_native_jpeg.ts",
    from: "if (marker === 0xe1 || marker === 0xe2) blank.push([start, end]);",
    to: "",
    tests: [NATIVE_JPEG],
  },
  {
    name: "native JPEG: JFIF's YCbCr against Adobe's RGB not seen (colours read otherwise than pdf.js)",
    file: "src/render/_native_jpeg.ts",
    from: "const libjpeg = jfif || (adobeTransform",
    to: "const libjpeg = (adobeTransform",
    tests: [NATIVE_JPEG],
  },
  {
    name: "kept document: the one drawn last used for any file",
    file: "src/render/render_png.ts",
    from: "if (kept?.key === key) {",
    to: "if (kept) {",
    tests: ["test/render/render_png_test.ts"],
  },
  {
    name: "start-up: a stopped server leaves the dictionaries' subprocess running",
    file: "src/search/installed_dictionaries.ts",
    from: "if (holders === 0 && !settled) reading?.abort();",
    to: "if (holders < 0 && !settled) reading?.abort();",
    tests: ["test/search/dictionaries_stop_test.ts"],
  },
  {
    name: "audit view's thread: a read through the app does not wait for the entries handed to it",
    file: "src/app.ts",
    from: "this.#auditThread.finish();",
    to: "// not waited for",
    tests: ["test/mcp/audit_settle_test.ts"],
  },
  {
    name: "read cache: another process's commit never empties it (the stamp taken as unchanged)",
    file: "src/mcp/read_cache.ts",
    from: "if (stamp === this.#stamp) return;",
    to: "return;",
    tests: ["test/mcp/read_cache_test.ts"],
  },
];
