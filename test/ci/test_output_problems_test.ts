/**
 * `.ci/test_output_problems`, which decides from `deno task test`'s output
 * whether CI passes: ignored tests, skip messages, failures and a missing
 * summary each fail it.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../.ci/test_output_problems", import.meta.url));

async function judge(output: string, status = 0): Promise<{ code: number; lines: string[] }> {
  const log = await Deno.makeTempFile({ prefix: "sergo-ci-log-" });
  try {
    await Deno.writeTextFile(log, output);
    const out = await new Deno.Command("bash", { args: [SCRIPT, log, String(status)], stdout: "piped" })
      .output();
    return { code: out.code, lines: new TextDecoder().decode(out.stdout).trim().split("\n") };
  } finally {
    await Deno.remove(log);
  }
}

const GREEN = [
  "running 2 tests from ./test/a_test.ts",
  "a search that skips nothing ... ok (12ms)",
  "a page is drawn ... \x1b[0m\x1b[32mok\x1b[0m \x1b[38;5;245m(1m 2s)\x1b[0m",
  "",
  "\x1b[0m\x1b[32mok\x1b[0m | 2 passed | 0 failed \x1b[38;5;245m(1s)\x1b[0m",
].join("\n");

Deno.test("a green run with every test passed passes, and its counts are printed", async () => {
  assert.deepEqual(await judge(GREEN), { code: 0, lines: ["tests: 2 passed, 0 failed, 0 ignored"] });
});

Deno.test("one ignored test fails CI", async () => {
  const output = GREEN.replace("| 2 passed | 0 failed", "| 2 passed | 0 failed | 1 ignored");
  assert.deepEqual(await judge(output), {
    code: 1,
    lines: [
      "tests: 2 passed, 0 failed, 1 ignored",
      "CI fails: 1 tests were ignored: a test whose program is missing must fail",
    ],
  });
});

Deno.test("a message saying something was skipped fails CI, whatever its case", async () => {
  for (
    const message of ["!!! SKIPPING the console test", "tesseract missing, skipped", "skip: no postgres"]
  ) {
    const { code, lines } = await judge(GREEN.replace("a page is drawn", `${message}\na page is drawn`));
    assert.equal(code, 1, message);
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /^CI fails: the test output says something was skipped: \d+:/);
    assert.ok(lines[1]!.includes(message), lines[1]!);
  }
});

Deno.test("failed tests, a failing status or a missing summary each fail CI", async () => {
  const failed = GREEN.replace("ok\x1b[0m | 2 passed | 0 failed", "FAILED\x1b[0m | 1 passed | 1 failed");
  assert.deepEqual((await judge(failed, 1)).lines.slice(1), [
    "CI fails: deno task test exited with status 1",
    "CI fails: 1 tests failed",
  ]);
  assert.deepEqual(await judge("error: Module not found", 1), {
    code: 1,
    lines: [
      "tests: 0 passed, 0 failed, 0 ignored",
      "CI fails: deno task test exited with status 1",
      "CI fails: deno task test printed no summary line",
    ],
  });
  assert.equal((await judge(GREEN, 137)).code, 1);
});

Deno.test("filtered-out tests fail CI", async () => {
  const output = GREEN.replace("| 0 failed", "| 0 failed | 40 filtered out");
  assert.deepEqual((await judge(output)).lines, [
    "tests: 2 passed, 0 failed, 0 ignored",
    "CI fails: 40 tests were filtered out",
  ]);
});

Deno.test("the counts of every summary line are added up: the serial group's and the parallel run's", async () => {
  const second = [
    "./test/b_test.ts => a page is read ... ok (3ms)",
    "",
    "\x1b[0m\x1b[32mok\x1b[0m | 5 passed (2 steps) | 0 failed \x1b[38;5;245m(9s)\x1b[0m",
  ].join("\n");
  assert.deepEqual(await judge(`${GREEN}\n${second}`), {
    code: 0,
    lines: ["tests: 7 passed, 0 failed, 0 ignored"],
  });
  const failing = second.replace(
    "ok\x1b[0m | 5 passed (2 steps) | 0 failed",
    "FAILED\x1b[0m | 4 passed | 1 failed",
  );
  const judged = await judge(`${GREEN}\n${failing}`, 1);
  assert.equal(judged.code, 1);
  assert.equal(judged.lines[0], "tests: 6 passed, 1 failed, 0 ignored");
});
