/**
 * The probe that tests and `.ci/run` use to find their programs: a slow first
 * start is retried rather than taken for a missing program, a program that
 * never answers is reported with the time it was given, and a missing one
 * says what to install.
 */
import assert from "node:assert/strict";
import { type Dependency, probe } from "./dependencies.ts";

async function fakeProgram(
  script: string,
): Promise<{ dir: string; command: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-fake-program-" });
  const command = `sergo-fake-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir}/${command}`, `#!/usr/bin/env bash\n${script}\n`, { mode: 0o755 });
  return { dir, command, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function spec(dir: string, command: string, timeoutMs: number, attempts: number): Dependency {
  return {
    commands: [command],
    folders: [dir],
    versionArgs: ["--version"],
    timeoutMs,
    attempts,
    install: "nothing",
  };
}

Deno.test("a program whose first start is slower than the probe's time is asked again and found", async () => {
  // Sleeps 5 s on its first start, answers at once on the next.
  await using fake = await fakeProgram(
    `d="$(dirname "$0")"; if [ ! -e "$d/started" ]; then touch "$d/started"; exec sleep 5; fi; echo "Fake 1.2"`,
  );
  const found = await probe("soffice", spec(fake.dir, fake.command, 800, 3));
  assert.deepEqual(found, {
    ok: true,
    name: "soffice",
    path: `${fake.dir}/${fake.command}`,
    version: "Fake 1.2",
  });
});

Deno.test("a program that never answers in time is not found, and the reason says how long it was given", async () => {
  await using fake = await fakeProgram("exec sleep 5");
  const found = await probe("soffice", spec(fake.dir, fake.command, 300, 2));
  assert.deepEqual(found, {
    ok: false,
    name: "soffice",
    reason:
      `${fake.dir}/${fake.command} --version failed 2 times (did not answer within 0.3 s; did not answer within 0.3 s)`,
  });
});

Deno.test("a program that is not there is reported with what to install; one that fails with its exit code", async () => {
  const missing = await probe("soffice", { ...spec("/nonexistent", "sergo-no-such-program", 1000, 1) });
  assert.equal(missing.ok, false);
  assert.match(
    (missing as { reason: string }).reason,
    /^soffice is not installed \(looked for sergo-no-such-program on PATH and in \/nonexistent\): nothing$/,
  );
  await using fake = await fakeProgram("exit 3");
  assert.deepEqual(await probe("soffice", spec(fake.dir, fake.command, 1000, 1)), {
    ok: false,
    name: "soffice",
    reason: `${fake.dir}/${fake.command} --version failed 1 times (ended with exit code 3)`,
  });
});

Deno.test("a program without the data the tests need (Tesseract without a language) is not found, and says what to install", async () => {
  await using fake = await fakeProgram(
    `if [ "$1" = "--list-langs" ]; then printf 'List of available languages (3):\\neng\\nosd\\nfra\\n'; else echo "Fake 5"; fi`,
  );
  const dependency = (lines: string[]): Dependency => ({
    ...spec(fake.dir, fake.command, 5000, 1),
    lists: { args: ["--list-langs"], lines, install: (missing) => `install ${missing.join(" and ")}` },
  });
  const lacking = await probe("tesseract", dependency(["eng", "rus", "fra", "chi_sim"]));
  assert.deepEqual(lacking, {
    ok: false,
    name: "tesseract",
    reason: `${fake.dir}/${fake.command} lacks rus, chi_sim (--list-langs): install rus and chi_sim`,
  });
  const whole = await probe("tesseract", dependency(["eng", "osd", "fra"]));
  assert.deepEqual(whole, {
    ok: true,
    name: "tesseract",
    path: `${fake.dir}/${fake.command}`,
    version: "Fake 5",
  });
});
