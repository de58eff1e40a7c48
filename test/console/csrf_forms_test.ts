/**
 * Every form of the console carries its CSRF token, and a post without it,
 * with another one, or from another site's page changes nothing: the People
 * page's "add person" and "reset link", the password page, sign-in and
 * sign-out, and the REST API called with the session cookie. Each is sent
 * first as a forged post (403, nothing changed), then as the console's own
 * page sends it (it works), against the real `serve`.
 */
import assert from "node:assert/strict";
import { getPersonByEmail } from "../../projections/catalogue.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { startServer } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { addPerson, issuePasswordLink, makeAdministrator, setPasswordHash } from "../../src/domain/people.ts";
import { Browser } from "../auth/_oauth.ts";
import { tempDir } from "../helpers/temp.ts";

const PASSWORD = "a long passphrase of my own";
const EXPIRED = "This form has expired — try again.";

/** The ways a post is forged: no token, another token, the right token from another site's page. */
function forgeries(
  browser: Browser,
  own: string,
): Array<{ how: string; csrf: string | null; origin: string }> {
  return [
    { how: "without the token", csrf: null, origin: own },
    { how: "with another token", csrf: "A".repeat(43), origin: own },
    { how: "from another site", csrf: browser.cookie("sergo_csrf")!, origin: "https://evil.example.com" },
  ];
}

async function post(
  browser: Browser,
  path: string,
  fields: Array<[string, string]>,
  forged: { csrf: string | null; origin: string },
): Promise<{ status: number; text: string; location: string | null }> {
  const body = new URLSearchParams([...(forged.csrf === null ? [] : [["csrf", forged.csrf]]), ...fields]);
  const response = await browser.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: forged.origin },
    body,
  });
  return { status: response.status, text: await response.text(), location: response.headers.get("location") };
}

Deno.test("console forms: a post without the CSRF token, with another one or from another site changes nothing", async (t) => {
  await using dir = await tempDir("sergo-csrf-");
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const app = running.app;
    const own = new URL(running.url).origin;
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    await makeAdministrator(app, ava.person_id);
    await setPasswordHash(app, ava.person_id, await hashPassword(PASSWORD));
    const ben = await addPerson(app, { name: "Ben Okafor", email: "ben@example.com" });
    const browser = new Browser(running.url);
    await browser.signIn("ava@example.com", PASSWORD);
    const links = () => app.store.readFrom(0, 100_000).filter((e) => e.type === "PasswordLinkIssued").length;

    await t.step("People: adding a person", async () => {
      const fields: Array<[string, string]> = [["action", "add"], ["name", "Cleo Park"], [
        "email",
        "cleo@example.com",
      ]];
      for (const forged of forgeries(browser, own)) {
        const answer = await post(browser, "/people", fields, forged);
        assert.equal(answer.status, 403, forged.how);
        assert.ok(answer.text.includes(EXPIRED), forged.how);
        assert.equal(getPersonByEmail(app.db, "cleo@example.com"), undefined, `${forged.how}: nobody added`);
      }
      assert.equal(links(), 0, "no invitation link made");
      const added = await browser.post("/people", fields);
      assert.equal(added.status, 201);
      await added.body?.cancel();
      assert.ok(getPersonByEmail(app.db, "cleo@example.com"));
    });

    await t.step("People: a password reset link", async () => {
      const before = links();
      const fields: Array<[string, string]> = [["action", "reset"], ["person_id", ben.person_id]];
      for (const forged of forgeries(browser, own)) {
        const answer = await post(browser, "/people", fields, forged);
        assert.equal(answer.status, 403, forged.how);
        assert.ok(!answer.text.includes("/password?token="), `${forged.how}: no link shown`);
      }
      assert.equal(links(), before, "no link made");
      const made = await browser.post("/people", fields);
      assert.equal(made.status, 200);
      assert.ok((await made.text()).includes("/password?token="));
      assert.equal(links(), before + 1);
    });

    await t.step("the password page of an invitation", async () => {
      const { token } = await issuePasswordLink(app, { personId: ben.person_id, purpose: "invite" }, "cli");
      const fields: Array<[string, string]> = [["token", token], ["password", PASSWORD], [
        "password2",
        PASSWORD,
      ]];
      for (const forged of forgeries(browser, own)) {
        const answer = await post(browser, "/password", fields, forged);
        assert.equal(answer.status, 403, forged.how);
        assert.equal(
          getPersonByEmail(app.db, "ben@example.com")!.password_hash,
          null,
          `${forged.how}: no password`,
        );
      }
      const set = await browser.post("/password", fields);
      assert.equal(set.status, 303);
      await set.body?.cancel();
      assert.ok(getPersonByEmail(app.db, "ben@example.com")!.password_hash);
    });

    await t.step("sign-in and sign-out", async () => {
      const stranger = new Browser(running.url);
      await (await stranger.fetch("/sign-in")).body?.cancel();
      const fields: Array<[string, string]> = [["email", "ava@example.com"], ["password", PASSWORD]];
      for (const forged of forgeries(stranger, own)) {
        const answer = await post(stranger, "/sign-in", fields, forged);
        assert.equal(answer.status, 403, forged.how);
        assert.equal(stranger.cookie("sergo_session"), undefined, `${forged.how}: nobody signed in`);
      }
      const session = browser.cookie("sergo_session");
      for (const forged of forgeries(browser, own)) {
        const answer = await post(browser, "/sign-out", [], forged);
        assert.equal(answer.location, "/sign-in", forged.how);
        assert.equal(browser.cookie("sergo_session"), session, `${forged.how}: still signed in`);
        const page = await browser.fetch("/documents");
        assert.equal(page.status, 200, `${forged.how}: the session still works`);
        await page.body?.cancel();
      }
    });

    await t.step("the REST API called with the session cookie", async () => {
      const create = (headers: Record<string, string>) =>
        browser.fetch("/api/folders", {
          method: "POST",
          headers: { "content-type": "application/json", origin: own, ...headers },
          body: JSON.stringify({ name: "Forged" }),
        });
      for (const headers of [{}, { "x-csrf-token": "A".repeat(43) }] as Record<string, string>[]) {
        const answer = await create(headers);
        assert.equal(answer.status, 403, JSON.stringify(headers));
        assert.equal((await answer.json()).code, "csrf");
      }
      const folders = () => app.store.readFrom(0, 100_000).filter((e) => e.type === "FolderCreated").length;
      assert.equal(folders(), 0);
      const made = await create({ "x-csrf-token": browser.cookie("sergo_csrf")! });
      assert.equal(made.status, 201);
      await made.body?.cancel();
      assert.equal(folders(), 1);
    });
  } finally {
    await running.stop();
  }
});
