/**
 * The console's route table, called as a handler (no port): which path
 * answers which method, and who may open it. A page sends a visitor without
 * a session to the sign-in page (or answers 405 for a method it never
 * takes); the administrators' page is a missing page for everyone else,
 * whatever the method; an id that cannot be one, and any path outside the
 * table, is the bare 404 the server turns into its JSON 404.
 */
import assert from "node:assert/strict";
import { SESSION_COOKIE } from "../../src/auth/api_auth.ts";
import { createConsole } from "../../src/console/console.ts";
import { issueLoginToken } from "../../src/domain/keys.ts";
import { addPerson, makeAdministrator } from "../../src/domain/people.ts";
import { testServer } from "../http/_server.ts";

Deno.test("the console's routes: methods, sign-in redirects, the administrators' page and missing ids", async () => {
  await using server = await testServer();
  const consoleOf = createConsole(server.services);
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const bea = await addPerson(server.app, { name: "Bea Kowalski", email: "bea@example.com" });
  await makeAdministrator(server.app, ava.person_id);
  const cookieOf = async (personId: string) =>
    `${SESSION_COOKIE}=${(await issueLoginToken(server.app, { personId }, `person-${personId}`)).value}`;
  const admin = await cookieOf(ava.person_id);
  const person = await cookieOf(bea.person_id);
  /** Status, the redirect's location (if any), and whether the body links back to `back`. */
  const visit = async (method: string, path: string, cookie?: string, back?: string) => {
    const response = await consoleOf(
      new Request(`http://127.0.0.1:8787${path}`, { method, headers: cookie ? { cookie } : {} }),
    );
    const body = method === "HEAD" ? "" : await response.text();
    return [
      response.status,
      response.headers.get("location"),
      ...(back === undefined ? [] : [body.includes(`href="${back}"`)]),
    ];
  };

  // Without a session.
  assert.deepEqual(await visit("GET", "/"), [303, "/sign-in"]);
  assert.deepEqual(await visit("GET", "/documents?folder=x"), [
    303,
    "/sign-in?next=%2Fdocuments%3Ffolder%3Dx",
  ]);
  assert.deepEqual(await visit("HEAD", "/keys"), [303, "/sign-in?next=%2Fkeys"]);
  assert.deepEqual(await visit("PUT", "/documents"), [405, null]);
  assert.deepEqual(await visit("PUT", "/people"), [303, "/sign-in?next=%2Fpeople"]);
  assert.deepEqual(await visit("GET", "/sign-in"), [200, null]);
  assert.deepEqual(await visit("HEAD", "/sign-in"), [405, null]);
  assert.deepEqual(await visit("GET", "/sign-out"), [405, null]);
  assert.deepEqual(await visit("DELETE", "/password"), [405, null]);
  assert.deepEqual(await visit("POST", "/console/assets/console.css"), [404, null]);
  assert.deepEqual(await visit("GET", "/console/assets/no-such-file.css"), [404, null]);
  assert.deepEqual(await visit("GET", "/nowhere"), [404, null]);
  assert.deepEqual(await visit("GET", "/documents/"), [404, null]);
  assert.deepEqual(await visit("GET", `/documents/${"a".repeat(65)}`), [404, null]);

  // A person who is not an administrator.
  assert.deepEqual(await visit("GET", "/", person), [303, "/documents"]);
  assert.deepEqual(await visit("GET", "/documents", person), [200, null]);
  assert.deepEqual(await visit("POST", "/documents", person), [405, null]);
  assert.deepEqual(await visit("GET", "/people", person), [404, null]);
  assert.deepEqual(await visit("PUT", "/people", person), [404, null]);
  assert.deepEqual(await visit("GET", "/documents/no-such-id", person, "/documents"), [404, null, true]);
  assert.deepEqual(await visit("GET", "/keys/no-such-id", person, "/keys"), [404, null, true]);
  assert.deepEqual(await visit("GET", "/documents?folder=no-such-id", person, "/documents"), [
    404,
    null,
    true,
  ]);

  // An administrator.
  assert.deepEqual(await visit("GET", "/people", admin), [200, null]);
  assert.deepEqual(await visit("HEAD", "/people", admin), [200, null]);
  assert.deepEqual(await visit("PUT", "/people", admin), [405, null]);
});
