import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempDir } from "../helpers/temp.ts";

Deno.test("audit verify without --public-key does not say Intact: it names the key it checked against and exits 3", async () => {
  await using dir = await tempDir("sergo-verify-trust-");
  const installs = [join(dir.path, "ours"), join(dir.path, "theirs")];
  for (const data of installs) {
    const person = await runCli([
      "person",
      "add",
      "--data",
      data,
      "--name",
      "Ava Bennett",
      "--email",
      "ava@example.com",
    ]);
    assert.equal(person.code, 0, person.stderr);
    const exported = await runCli(
      ["audit", "export", "--data", data, "--person", "ava@example.com", "--out", join(data, "ava.jsonl")],
    );
    assert.equal(exported.code, 0, exported.stderr);
  }
  const ours = await runCli(["audit", "public-key", "--data", installs[0]!]);
  const key = join(dir.path, "ours.pem");
  await Deno.writeTextFile(key, ours.stdout);
  const foreign = join(installs[1]!, "ava.jsonl");

  // Signed by another install, checked with no key: consistent, but not verified.
  const untrusted = await runCli(["audit", "verify", "--data", installs[0]!, foreign]);
  assert.equal(untrusted.code, 3);
  assert.doesNotMatch(untrusted.stdout, /Intact/);
  assert.match(
    untrusted.stdout,
    /^Not verified: the records are consistent \(1 records, .+\), but the signature was checked only against the key inside the export \([0-9a-f]{64}\), which anyone could have made; pass --public-key with the install's key \(sergo audit public-key\) to check who signed it\n$/,
  );
  // Against our key, the foreign export fails; our own export is intact.
  const wrong = await runCli(["audit", "verify", foreign, "--public-key", key]);
  assert.equal(wrong.code, 1);
  assert.equal(wrong.stderr, "Not intact: The manifest is not signed by the given public key\n");
  const right = await runCli(["audit", "verify", join(installs[0]!, "ava.jsonl"), "--public-key", key]);
  assert.equal(right.code, 0, right.stderr);
  assert.match(right.stdout, /^Intact: 1 records, .+; signed by the given key\n$/);
  const help = await runCli(["audit", "verify", "--help"]);
  assert.match(
    help.stdout,
    /without --public-key the signature was checked only against the key inside the export/,
  );
});
