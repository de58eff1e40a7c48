/**
 * `deno task test` (test/run.ts) runs test files in parallel inside one
 * process, so a file that changes what the whole process shares — its
 * environment, its working folder — or measures the process's own memory must
 * be in the serial group, which runs in a process of its own. This test finds
 * such files and fails on any that the task would run in parallel; and it
 * checks that every test file runs exactly once.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parallelOrder, SERIAL, SLOWEST_FIRST, testFiles } from "../run.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PROCESS_WIDE = /Deno\.(env\.set|env\.delete|chdir|umask)\(|Deno\.memoryUsage\(\)/;

Deno.test("test files that change process-wide state run in the serial group, not in parallel", () => {
  const all = testFiles();
  const parallel = parallelOrder(all);
  // Every test file runs once: in the serial group or in the parallel run, never both, never neither.
  assert.deepEqual([...SERIAL, ...parallel].sort(), all);
  assert.equal(new Set(parallel).size, parallel.length);
  for (const file of SERIAL) assert.ok(!parallel.includes(file), `${file} is not also run in parallel`);
  // The parallel run starts with the slowest files.
  assert.deepEqual(parallel.slice(0, SLOWEST_FIRST.length), [...SLOWEST_FIRST]);
  const self = relative(ROOT, fileURLToPath(import.meta.url));
  const offenders = parallel.filter((file) =>
    file !== self && PROCESS_WIDE.test(Deno.readTextFileSync(join(ROOT, file)))
  );
  assert.deepEqual(offenders, []);
});

Deno.test("a file named in the runner's lists that is not a test file stops the run with its name", () => {
  assert.throws(
    () => parallelOrder(testFiles().filter((file) => file !== SLOWEST_FIRST[0])),
    new RegExp(`names files that are not test files: ${SLOWEST_FIRST[0]!.replaceAll(".", "\\.")}`),
  );
});
