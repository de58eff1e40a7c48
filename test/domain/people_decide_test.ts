/**
 * The rules about people as specifications, without a database or a clock:
 * given what a command's caller loads, when the command is decided, then
 * these appends, or this refusal.
 */
import assert from "node:assert/strict";
import { hashSecret } from "../../src/domain/key_format.ts";
import {
  decideAddPerson,
  decideFirstAdministrator,
  decideMakeAdministrator,
  decidePasswordLink,
  decideRemoveAdministrator,
  decideSetPassword,
  decideUsePasswordLink,
  FIRST_PERSON_ID,
} from "../../src/domain/people_decide.ts";

const metadata = { now: new Date("2026-03-01T09:30:00.000Z"), actor: "person-admin" };
const meta = { time: "2026-03-01T09:30:00.000Z", actor: "person-admin" };
const TOKEN = "a".repeat(43);

Deno.test("add person: given a new email, then PersonAdded with the name and email trimmed; an email in use is refused", () => {
  const add = (name: string, email: string, emailTaken = false) =>
    decideAddPerson({ personId: "P1", name, email, metadata }, { emailTaken });
  assert.deepEqual(add("  Ava Bennett ", " ava@example.com "), [{
    stream: "person-P1",
    events: [{
      type: "PersonAdded",
      data: { person_id: "P1", name: "Ava Bennett", email: "ava@example.com" },
      metadata: meta,
    }],
    expectedVersion: "no_stream",
  }]);
  assert.throws(() => add("Ava", "ava@example.com", true), {
    code: "conflict",
    message: 'A person with email "ava@example.com" already exists',
  });
  assert.throws(() => add("Ava", "ava@example"), {
    code: "invalid",
    message: '"ava@example" is not an email address',
  });
  assert.throws(() => add("   ", "ava@example.com"), { code: "invalid", message: "Name cannot be empty" });
  assert.throws(() => add("A".repeat(201), "ava@example.com"), {
    message: "Name is too long: at most 200 characters, got 201",
  });
});

Deno.test("first administrator: added, given a password and made an administrator in one write as the fixed first id; refused once anyone exists", () => {
  const first = { name: "Ava Bennett", email: "ava@example.com", passwordHash: "scrypt$x", metadata };
  const self = { time: meta.time, actor: `person-${FIRST_PERSON_ID}` };
  assert.deepEqual(decideFirstAdministrator(first, { anyPerson: false }), [{
    stream: "person-000000000001",
    events: [
      {
        type: "PersonAdded",
        data: { person_id: "000000000001", name: "Ava Bennett", email: "ava@example.com" },
        metadata: self,
      },
      {
        type: "PersonPasswordSet",
        data: { person_id: "000000000001", password_hash: "scrypt$x" },
        metadata: self,
      },
      { type: "PersonMadeAdministrator", data: { person_id: "000000000001" }, metadata: self },
    ],
    expectedVersion: "no_stream",
  }]);
  assert.throws(() => decideFirstAdministrator(first, { anyPerson: true }), {
    code: "conflict",
    message: "Sergo already has its first person",
  });
  assert.throws(() => decideFirstAdministrator({ ...first, email: "nope" }, { anyPerson: true }), {
    code: "invalid",
  }, "a bad form is told before the state");
});

Deno.test("passwords and administrator rights: recorded as asked; the last administrator keeps theirs", () => {
  assert.deepEqual(decideSetPassword({ personId: "P1", passwordHash: "scrypt$y", metadata }), [{
    stream: "person-P1",
    events: [{
      type: "PersonPasswordSet",
      data: { person_id: "P1", password_hash: "scrypt$y" },
      metadata: meta,
    }],
    expectedVersion: "stream_exists",
  }]);
  assert.deepEqual(decideMakeAdministrator({ personId: "P1", metadata })[0]!.events, [
    { type: "PersonMadeAdministrator", data: { person_id: "P1" }, metadata: meta },
  ]);
  const remove = (isAdministrator: boolean, administrators: number) =>
    decideRemoveAdministrator({ personId: "P1", metadata }, { isAdministrator, administrators });
  assert.deepEqual(remove(true, 2)[0]!.events, [
    { type: "PersonAdministratorRemoved", data: { person_id: "P1" }, metadata: meta },
  ]);
  assert.deepEqual(remove(false, 1), [], "one who is no administrator: nothing to record");
  assert.throws(() => remove(true, 1), {
    code: "conflict",
    message: "Cannot remove the last administrator's rights: make another person an administrator first",
  });
});

Deno.test("password links: an invitation works 7 days, a reset 24 hours; older open links are closed in the same write", () => {
  const link = (purpose: "invite" | "reset", openLinkIds: string[]) =>
    decidePasswordLink({ personId: "P1", linkId: "L3", token: TOKEN, purpose, metadata }, { openLinkIds });
  assert.deepEqual(link("invite", []), [{
    stream: "person-P1",
    events: [{
      type: "PasswordLinkIssued",
      data: {
        link_id: "L3",
        person_id: "P1",
        token_hash: hashSecret(TOKEN),
        purpose: "invite",
        expires_at: "2026-03-08T09:30:00.000Z",
      },
      metadata: meta,
    }],
    expectedVersion: "stream_exists",
  }]);
  const reset = link("reset", ["L1", "L2"])[0]!.events;
  assert.deepEqual(reset.slice(0, 2), [
    { type: "PasswordLinkUsed", data: { link_id: "L1" }, metadata: meta },
    { type: "PasswordLinkUsed", data: { link_id: "L2" }, metadata: meta },
  ]);
  assert.equal((reset[2]!.data as { expires_at: string }).expires_at, "2026-03-02T09:30:00.000Z");
});

Deno.test("using a password link: the person sets their own password and the link is used up", () => {
  const self = { time: meta.time, actor: "person-P1" };
  assert.deepEqual(
    decideUsePasswordLink({ personId: "P1", linkId: "L3", passwordHash: "scrypt$z", metadata }),
    [{
      stream: "person-P1",
      events: [
        { type: "PersonPasswordSet", data: { person_id: "P1", password_hash: "scrypt$z" }, metadata: self },
        { type: "PasswordLinkUsed", data: { link_id: "L3" }, metadata: self },
      ],
      expectedVersion: "stream_exists",
    }],
  );
});
