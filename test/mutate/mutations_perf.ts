/**
 * Mutations of the hot-path changes of issue 32 (h-perf): the plain
 * `tools/list` answered without the SDK, and a body of a declared length read
 * whole under its deadline.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

/** The planted bugs and the test files that must fail with each. */
export const MUTATIONS_PERF: Mutation[] = [
  {
    name: "plain tools/list: params with fields taken as plain (a cursor of the wrong type answered)",
    file: "src/mcp/server.ts",
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
];
