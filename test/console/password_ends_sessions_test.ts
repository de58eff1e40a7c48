/**
 * A new password ends the person's sessions signed in before it: a session
 * stolen before a reset does not survive it, whether the password is set
 * through a reset link or by the CLI, and replaying the log keeps it ended.
 * Taking an administrator's rights away ends their sessions too.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import {
  addPerson,
  issuePasswordLink,
  makeAdministrator,
  removeAdministrator,
  setPasswordHash,
} from "../../src/domain/people.ts";
import { runCli, tempDir } from "../helpers/temp.ts";
import { Browser } from "../auth/_oauth.ts";

const EMAIL = "ava@example.com";
const FIRST = "correct horse battery staple";
const SECOND = "a long passphrase of my own";

/** Whether the browser's session still opens a console page (a 303 to sign-in when it does not). */
async function signedIn(browser: Browser): Promise<boolean> {
  const response = await browser.fetch("/documents");
  await response.body?.cancel();
  if (response.status === 200) return true;
  assert.equal(response.status, 303);
  assert.match(response.headers.get("location")!, /^\/sign-in/);
  return false;
}

Deno.test("a password set through a reset link ends the sessions signed in before it; the one the link signs in works", async () => {
  await using dir = await tempDir("sergo-reset-");
  const cookies = { stolen: "", last: "" };
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const app = running.app;
    const ava = await addPerson(app, { name: "Ava Bennett", email: EMAIL });
    await setPasswordHash(app, ava.person_id, await hashPassword(FIRST));
    const last = new Browser(running.url);
    const stolen = new Browser(running.url);
    await stolen.signIn(EMAIL, FIRST);
    const laptop = new Browser(running.url);
    await laptop.signIn(EMAIL, FIRST);
    assert.equal(await signedIn(stolen), true);

    // An administrator hands Ava a reset link; she sets a new password with it.
    const { token } = await issuePasswordLink(app, { personId: ava.person_id, purpose: "reset" }, "cli");
    const resetting = new Browser(running.url);
    const page = await resetting.fetch(`/password?token=${token}`);
    assert.equal(page.status, 200);
    await page.body?.cancel();
    const set = await resetting.post("/password", [["token", token], ["password", SECOND], [
      "password2",
      SECOND,
    ]]);
    await set.body?.cancel();
    assert.equal(set.status, 303);
    assert.equal(set.headers.get("location"), "/documents");

    assert.equal(await signedIn(stolen), false, "a session from before the reset is ended");
    assert.equal(await signedIn(laptop), false, "every session from before the reset is ended");
    assert.equal(await signedIn(resetting), true, "the reset link's own sign-in works");
    // The old session stays ended for the REST API as well.
    const api = await stolen.fetch("/api/me");
    assert.equal(api.status, 401);
    await api.body?.cancel();

    // Signing in again with the new password works.
    const again = new Browser(running.url);
    await again.signIn(EMAIL, SECOND);
    assert.equal(await signedIn(again), true);

    // The CLI's set-password ends them too.
    await setPasswordHash(app, ava.person_id, await hashPassword(FIRST));
    assert.equal(await signedIn(again), false);
    assert.equal(await signedIn(resetting), false);
    await last.signIn(EMAIL, FIRST);
    assert.equal(await signedIn(last), true);
    cookies.stolen = stolen.cookie("sergo_session")!;
    cookies.last = last.cookie("sergo_session")!;
  } finally {
    await running.stop();
  }

  // Replayed from the log, the projections bring back no session from before a password.
  const replayed = await runCli(["replay", "--data", dir.path]);
  assert.equal(replayed.code, 0, replayed.stderr);
  const reopened = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    for (const [cookie, expected] of [[cookies.stolen, 303], [cookies.last, 200]] as const) {
      const response = await fetch(`${reopened.url}/documents`, {
        headers: { cookie: `sergo_session=${cookie}` },
        redirect: "manual",
      });
      await response.body?.cancel();
      assert.equal(response.status, expected);
    }
  } finally {
    await reopened.stop();
  }
});

Deno.test("taking an administrator's rights away ends their sessions; signed in again, the People page is refused; the last one keeps them", async () => {
  await using dir = await tempDir("sergo-demote-");
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const app = running.app;
    const ava = await addPerson(app, { name: "Ava Bennett", email: EMAIL });
    await setPasswordHash(app, ava.person_id, await hashPassword(FIRST));
    await makeAdministrator(app, ava.person_id);
    await assert.rejects(
      removeAdministrator(app, ava.person_id),
      /^DomainError: Cannot remove the last administrator's rights: make another person an administrator first$/,
    );
    const bob = await addPerson(app, { name: "Bob Okafor", email: "bob@example.com" });
    await makeAdministrator(app, bob.person_id);
    const browser = new Browser(running.url);
    await browser.signIn(EMAIL, FIRST);
    const people = await browser.fetch("/people");
    assert.equal(people.status, 200);
    await people.body?.cancel();

    // Bob takes Ava's rights away: her session ends with them.
    await removeAdministrator(app, ava.person_id, `person-${bob.person_id}`);
    assert.equal(await signedIn(browser), false, "the session from before is ended");
    // Signed in again, she is a person like any other: the People page is not there for her.
    const again = new Browser(running.url);
    await again.signIn(EMAIL, FIRST);
    assert.equal(await signedIn(again), true);
    const refused = await again.fetch("/people");
    assert.equal(refused.status, 404);
    await refused.body?.cancel();
  } finally {
    await running.stop();
  }
  // Bob is the last administrator now: the CLI refuses to take his rights, in one sentence.
  const cli = await runCli(["person", "admin", "--email", "bob@example.com", "--remove", "--data", dir.path]);
  assert.notEqual(cli.code, 0);
  assert.match(
    cli.stderr,
    /Cannot remove the last administrator's rights: make another person an administrator first/,
  );
});
