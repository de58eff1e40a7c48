/**
 * The first-run setup address `serve` prints: it makes the first person (an
 * administrator) while Sergo has nobody, once. After that, or once a person
 * exists some other way (the CLI beside `serve`), it is the not-valid page,
 * for a look and for a post alike.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { addPerson } from "../../src/domain/people.ts";
import { getPersonByEmail, isAdministrator } from "../../projections/catalogue.ts";
import { tempDir } from "../helpers/temp.ts";
import { Browser } from "../auth/_oauth.ts";

const NOT_VALID =
  "This setup address is not valid: it works once, while Sergo has nobody, from the line serve printed.";
const PASSWORD = "a long passphrase of my own";

async function serving() {
  const dir = await tempDir("sergo-setup-");
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  const setup = new URL(running.setupUrl!);
  return {
    running,
    path: `${setup.pathname}${setup.search}`,
    token: setup.searchParams.get("token")!,
    async [Symbol.asyncDispose]() {
      await running.stop();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function status(response: Response): Promise<[number, boolean]> {
  return [response.status, (await response.text()).includes(NOT_VALID)];
}

Deno.test("the setup address makes the first administrator once; a second look or post finds the not-valid page", async () => {
  await using s = await serving();
  const browser = new Browser(s.running.url);
  assert.deepEqual(await status(await browser.fetch(s.path)), [200, false]);
  const form = (email: string): Array<[string, string]> => [
    ["token", s.token],
    ["name", "Ava Bennett"],
    ["email", email],
    ["password", PASSWORD],
    ["password2", PASSWORD],
  ];
  const made = await browser.post("/setup", form("ava@example.com"));
  assert.equal(made.status, 303);
  assert.equal(made.headers.get("location"), "/documents");
  await made.body?.cancel();
  const ava = getPersonByEmail(s.running.app.db, "ava@example.com")!;
  assert.equal(isAdministrator(s.running.app.db, ava.person_id), true);

  const other = new Browser(s.running.url);
  assert.deepEqual(await status(await other.fetch(s.path)), [404, true]);
  assert.deepEqual(await status(await other.post("/setup", form("eve@example.com"))), [404, true]);
  assert.equal(getPersonByEmail(s.running.app.db, "eve@example.com"), undefined);
});

Deno.test("once a person is added beside serve (the CLI), the setup address it printed is the not-valid page", async () => {
  await using s = await serving();
  await addPerson(s.running.app, { name: "Ben Okafor", email: "ben@example.com" });
  const browser = new Browser(s.running.url);
  assert.deepEqual(await status(await browser.fetch(s.path)), [404, true]);
});
