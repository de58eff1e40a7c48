/**
 * `deno task test` runs test files in parallel inside one process, so a file
 * that changes what the whole process shares — its environment, its working
 * folder — or measures the process's own memory must be in the serial group
 * the task runs first. This test finds such files and fails on any that the
 * task would run in parallel.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PROCESS_WIDE = /Deno\.(env\.set|env\.delete|chdir|umask)\(|Deno\.memoryUsage\(\)/;

function testFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      if (path !== "test/corpus" && path !== "test/artifacts") files.push(...testFiles(path));
    } else if (entry.name.endsWith("_test.ts")) files.push(path);
  }
  return files;
}

Deno.test("test files that change process-wide state run in the serial group, not in parallel", () => {
  const task: string = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.test;
  const ignored = /--parallel --ignore=(\S+)/.exec(task)?.[1]?.split(",") ?? [];
  assert.ok(
    ignored.length > 0,
    "the test task runs a serial group, then the rest with --parallel --ignore=…",
  );
  for (const file of ignored) assert.ok(task.includes(` ${file} `), `${file} is run in the serial group`);
  const self = relative(ROOT, fileURLToPath(import.meta.url));
  const offenders = testFiles("test").filter((file) =>
    file !== self && PROCESS_WIDE.test(Deno.readTextFileSync(join(ROOT, file))) && !ignored.includes(file)
  );
  assert.deepEqual(offenders, []);
});
