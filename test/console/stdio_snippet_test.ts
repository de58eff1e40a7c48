/**
 * The stdio snippet names paths of the server's machine (deno, main.ts, the data
 * directory): the keys page gives them to administrators, who run commands there,
 * and to nobody else.
 */
import assert from "node:assert/strict";
import { consoleUnderTest } from "../e2e/_console_server.ts";
import { issueLoginToken } from "../../src/domain/keys.ts";
import { makeAdministrator } from "../../src/domain/people.ts";
import { SESSION_COOKIE } from "../../src/auth/api_auth.ts";

Deno.test("only an administrator's keys page carries the stdio snippet's absolute paths", async () => {
  await using world = await consoleUnderTest();
  const login = await issueLoginToken(world.app, { personId: world.personId }, `person-${world.personId}`);
  const keysPage = async () => {
    const response = await world.fetch("/keys", { headers: { cookie: `${SESSION_COOKIE}=${login.value}` } });
    assert.equal(response.status, 200);
    return await response.text();
  };
  assert.doesNotMatch(await keysPage(), /data-stdio=/, "a person who is not an administrator gets no paths");
  await makeAdministrator(world.app, world.personId);
  const stdio = /data-stdio="([^"]+)"/.exec(await keysPage())?.[1];
  assert.ok(stdio, "an administrator gets the stdio snippet");
  const paths = JSON.parse(stdio.replaceAll("&quot;", '"'));
  for (const name of ["deno", "config", "main", "data"]) assert.ok(paths[name].startsWith("/"), name);
  assert.ok(paths.main.endsWith("/main.ts"));
});
