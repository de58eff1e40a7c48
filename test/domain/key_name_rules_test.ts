/** A key name that breaks several rules is told all of them at once (the console's check in console.js says the same). */
import assert from "node:assert/strict";
import { checkKeyName, keyNameProblems } from "../../src/domain/rules.ts";

Deno.test("'Research Papers' is told every rule it breaks, not only the first", () => {
  assert.throws(
    () => checkKeyName("Research Papers"),
    {
      message:
        'Key name "Research Papers" is not allowed: it must start with a lowercase letter a-z; it may use only a-z, 0-9 and - (not "R", " ", "P")',
    },
  );
  assert.deepEqual(keyNameProblems("a"), ["it has 1 character, and needs at least 2"]);
  assert.deepEqual(keyNameProblems("energy-outlooks"), []);
  assert.equal(keyNameProblems("X".repeat(40)).length, 3);
});
