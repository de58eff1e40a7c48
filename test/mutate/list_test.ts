/**
 * The mutation list stays plantable while the code moves: every entry's
 * `from` text occurs exactly once in its file, its bug changes the text, and
 * every test it names exists. A refactor that moves or rewrites a guarded line
 * fails here, in the suite, instead of in a `deno task mutate` run hours later.
 *
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_MUTATIONS } from "./all.ts";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));

function problemsOf(): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const mutation of ALL_MUTATIONS) {
    if (names.has(mutation.name)) problems.push(`"${mutation.name}" is listed twice`);
    names.add(mutation.name);
    for (const site of [mutation, ...(mutation.also ?? [])]) {
      let text: string;
      try {
        text = Deno.readTextFileSync(join(ROOT, site.file));
      } catch {
        problems.push(`"${mutation.name}" names ${site.file}, which does not exist`);
        continue;
      }
      const count = text.split(site.from).length - 1;
      if (count !== 1) problems.push(`"${mutation.name}": its text occurs ${count} times in ${site.file}`);
      if (site.from === site.to) problems.push(`"${mutation.name}" changes nothing in ${site.file}`);
    }
    if (mutation.tests.length === 0) problems.push(`"${mutation.name}" names no test`);
    for (const test of mutation.tests) {
      try {
        Deno.statSync(join(ROOT, test));
      } catch {
        problems.push(`"${mutation.name}" names the test ${test}, which does not exist`);
      }
    }
  }
  return problems;
}

Deno.test("every planted bug can still be planted: its text occurs once in its file and its tests exist", () => {
  assert.deepEqual(problemsOf(), []);
});
