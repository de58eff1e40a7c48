import assert from "node:assert/strict";
import { generateSecret, hashSecret, maskKey, parseSecret } from "../../src/domain/key_format.ts";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

Deno.test("a new agent key has its prefix, 160+ random bits in base62 and a checksum that holds", () => {
  const key = generateSecret("agent");
  assert.match(key, /^sgk_s_[0-9A-Za-z]{33}$/);
  assert.deepEqual(parseSecret(key), { kind: "agent", valid: true });
  assert.deepEqual(parseSecret(generateSecret("personal")), { kind: "personal", valid: true });
  assert.deepEqual(parseSecret(generateSecret("login")), { kind: "login", valid: true });
  assert.ok(27 * Math.log2(62) >= 160);
  assert.notEqual(generateSecret("agent"), key);
});

Deno.test("the checksum catches every single-character change of a key", () => {
  const key = generateSecret("agent");
  let caught = 0;
  let tried = 0;
  for (let i = 0; i < key.length; i++) {
    for (const c of ALPHABET + "_") {
      if (c === key[i]) continue;
      const changed = key.slice(0, i) + c + key.slice(i + 1);
      tried++;
      if (!parseSecret(changed).valid) caught++;
    }
  }
  assert.equal(caught, tried);
});

Deno.test("the checksum catches every truncation and extension", () => {
  const key = generateSecret("personal");
  for (let n = 0; n < key.length; n++) assert.equal(parseSecret(key.slice(0, n)).valid, false, `length ${n}`);
  assert.equal(parseSecret(`${key}x`).valid, false);
  assert.equal(parseSecret(` ${key}`).valid, false);
});

Deno.test("only the sha256 is kept, and the mask shows the prefix and last four", () => {
  const key = generateSecret("agent");
  assert.match(hashSecret(key), /^[0-9a-f]{64}$/);
  assert.equal(maskKey("agent", key.slice(-4)), `sgk_s_…${key.slice(-4)}`);
});
