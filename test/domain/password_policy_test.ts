import assert from "node:assert/strict";
import { join } from "node:path";
import { passwordProblem } from "../../src/domain/password_policy.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const COMMON =
  "This password is one of the most common passwords, which are guessed first: a few words make a good one";

Deno.test("the most common passwords are refused whatever their case; long passphrases are welcome", async () => {
  for (
    const password of ["password", "Password1", "12345678", "iloveyou", "qwertyuiop", "sunshine1", "PASSWORD"]
  ) {
    assert.equal(await passwordProblem(password), COMMON, password);
  }
  assert.equal(
    await passwordProblem("short"),
    "The password must have at least 8 characters: a few words make a good one",
  );
  assert.equal(await passwordProblem("x".repeat(1025)), "The password must have at most 1024 characters");
  assert.equal(
    await passwordProblem("Ava.Bennett@example.com", "ava.bennett@example.com"),
    "The password must not be the email address: a few words make a good one",
  );
  for (
    const password of [
      "correct horse battery staple",
      "Τρεις λέξεις αρκούν για έναν καλό κωδικό",
      "the quick brown fox jumps over the lazy dog ".repeat(20).trim(),
      "vMq7-Lrw2-Xe9p",
    ]
  ) {
    assert.equal(await passwordProblem(password, "ava@example.com"), null, password);
  }
});

Deno.test("person password refuses a common password with one sentence, and takes a passphrase", async () => {
  await using dir = await tempDir("sergo-password-");
  const data = join(dir.path, "data");
  const add = await runCli([
    "person",
    "add",
    "--data",
    data,
    "--name",
    "Ava Bennett",
    "--email",
    "ava@example.com",
  ]);
  assert.equal(add.code, 0, add.stderr);
  const common = await runCli(["person", "password", "--data", data, "--email", "ava@example.com"], {
    stdin: "password\n",
  });
  assert.equal(common.code, 2);
  assert.match(common.stderr, /^This password is one of the most common passwords, which are guessed first/);
  assert.equal(common.stderr.trim().split("\n").length, 1);
  const good = await runCli(["person", "password", "--data", data, "--email", "ava@example.com"], {
    stdin: "Τρεις λέξεις αρκούν για έναν καλό κωδικό\n",
  });
  assert.equal(good.code, 0, good.stderr);
  assert.equal(good.stdout.trim(), "Password set for ava@example.com.");
});
