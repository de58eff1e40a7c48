/**
 * The console's password links and forms: an invitation link opens its page
 * until it expires and is the not-valid page from then on (a look or a post);
 * a form is read only when it is sent as a form, so a body of another content
 * type (what a cross-site text/plain form sends) signs nobody in.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { addPerson, issuePasswordLink, setPasswordHash } from "../../src/domain/people.ts";
import { getPersonByEmail } from "../../projections/catalogue.ts";
import { tempDir } from "../helpers/temp.ts";
import { Browser } from "../auth/_oauth.ts";

const NOT_VALID = "This link is not valid: it works once and expires. Ask an administrator for a new one.";
const PASSWORD = "a long passphrase of my own";

async function serving(now: () => Date) {
  const dir = await tempDir("sergo-links-");
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true, now });
  // Someone exists, so serve offers no setup address.
  await addPerson(running.app, { name: "Ava Bennett", email: "ava@example.com" });
  return {
    running,
    async [Symbol.asyncDispose]() {
      await running.stop();
      await dir[Symbol.asyncDispose]();
    },
  };
}

Deno.test("an invitation link opens its page until the moment it expires; from then on a look or a post is the not-valid page", async () => {
  let now = Date.now();
  await using s = await serving(() => new Date(now));
  const ben = await addPerson(s.running.app, { name: "Ben Okafor", email: "ben@example.com" });
  const { token, expiresAt } = await issuePasswordLink(
    s.running.app,
    { personId: ben.person_id, purpose: "invite" },
    "cli",
  );
  const browser = new Browser(s.running.url);
  const look = async () => {
    const response = await browser.fetch(`/password?token=${token}`);
    return [response.status, (await response.text()).includes(NOT_VALID)];
  };
  now = Date.parse(expiresAt) - 1;
  assert.deepEqual(await look(), [200, false]);
  now = Date.parse(expiresAt);
  assert.deepEqual(await look(), [404, true]);
  const post = await browser.post("/password", [["token", token], ["password", PASSWORD], [
    "password2",
    PASSWORD,
  ]]);
  assert.equal(post.status, 404);
  assert.ok((await post.text()).includes(NOT_VALID));
  assert.equal(getPersonByEmail(s.running.app.db, "ben@example.com")!.password_hash, null);
});

Deno.test("a sign-in sent as text/plain or JSON is not read as a form: 403 'This form has expired', no session; sent as a form it signs in", async () => {
  await using s = await serving(() => new Date());
  const ava = getPersonByEmail(s.running.app.db, "ava@example.com")!;
  await setPasswordHash(s.running.app, ava.person_id, await hashPassword(PASSWORD));
  const browser = new Browser(s.running.url);
  await (await browser.fetch("/sign-in")).body?.cancel();
  const fields = new URLSearchParams([
    ["csrf", browser.cookie("sergo_csrf")!],
    ["email", "ava@example.com"],
    ["password", PASSWORD],
  ]);
  const origin = new URL(s.running.url).origin;
  const bodies: Array<[string, string]> = [
    ["text/plain", fields.toString()],
    ["application/json", JSON.stringify(Object.fromEntries(fields))],
  ];
  for (const [type, body] of bodies) {
    const response = await browser.fetch("/sign-in", {
      method: "POST",
      headers: { "content-type": type, origin },
      body,
    });
    assert.equal(response.status, 403, type);
    assert.ok((await response.text()).includes("This form has expired — try again."), type);
    assert.equal(browser.cookie("sergo_session"), undefined, type);
  }
  const form = await browser.fetch("/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin },
    body: fields,
  });
  assert.equal(form.status, 303);
  await form.body?.cancel();
  assert.ok(browser.cookie("sergo_session"), "signed in");
});

Deno.test("a sign-in form of 16 KB is read; one byte more is 403 'This form has expired' and signs nobody in", async () => {
  await using s = await serving(() => new Date());
  const ava = getPersonByEmail(s.running.app.db, "ava@example.com")!;
  await setPasswordHash(s.running.app, ava.person_id, await hashPassword(PASSWORD));
  const origin = new URL(s.running.url).origin;
  const signIn = async (bytes: number) => {
    const browser = new Browser(s.running.url);
    await (await browser.fetch("/sign-in")).body?.cancel();
    const fields = new URLSearchParams([
      ["csrf", browser.cookie("sergo_csrf")!],
      ["email", "ava@example.com"],
      ["password", PASSWORD],
      ["note", ""],
    ]).toString();
    const body = fields + "x".repeat(bytes - fields.length);
    assert.equal(new TextEncoder().encode(body).length, bytes);
    const response = await browser.fetch("/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin },
      body,
    });
    return { status: response.status, text: await response.text(), session: browser.cookie("sergo_session") };
  };
  const read = await signIn(16 * 1024);
  assert.equal(read.status, 303);
  assert.ok(read.session, "signed in");
  const large = await signIn(16 * 1024 + 1);
  assert.equal(large.status, 403);
  assert.ok(large.text.includes("This form has expired — try again."));
  assert.equal(large.session, undefined);
});

Deno.test("a password reset link works for 24 hours: its page opens until that moment, and is the not-valid page from then on", async () => {
  let now = Date.parse("2026-12-01T12:00:00Z");
  await using s = await serving(() => new Date(now));
  const ava = getPersonByEmail(s.running.app.db, "ava@example.com")!;
  const { token, expiresAt } = await issuePasswordLink(
    s.running.app,
    { personId: ava.person_id, purpose: "reset" },
    "cli",
  );
  assert.equal(Date.parse(expiresAt) - now, 24 * 3600_000);
  const browser = new Browser(s.running.url);
  const look = async () => {
    const response = await browser.fetch(`/password?token=${token}`);
    return [response.status, (await response.text()).includes(NOT_VALID)];
  };
  now = Date.parse(expiresAt) - 1;
  assert.deepEqual(await look(), [200, false]);
  now = Date.parse(expiresAt);
  assert.deepEqual(await look(), [404, true]);
});
