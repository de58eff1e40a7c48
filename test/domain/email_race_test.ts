/**
 * People's emails are unique, also when two additions of one email happen at
 * the same moment. In one process (two requests) they take turns, so the
 * later one is refused before anything is appended. Across processes (the
 * CLI beside `serve`; here also apps opened beside each other on one data
 * directory) both may reach the log: the first in log order is the person,
 * the later one is refused with the usual sentence, and the projections go on
 * (they stopped for good on the duplicate before: "UNIQUE constraint failed:
 * cat_people.email").
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { addPerson } from "../../src/domain/people.ts";
import { listPeople } from "../../projections/catalogue.ts";
import { testServer } from "../http/_server.ts";
import { appsBeside } from "../helpers/apps_beside.ts";
import { runCli, tempApp } from "../helpers/temp.ts";

const TAKEN = 'A person with email "ava@example.com" already exists';

Deno.test("three additions of one email at the same moment in one process: one person, two refusals, nothing recorded for them", async () => {
  await using t = await tempApp();
  const results = await Promise.allSettled(
    ["Ava Bennett", "Ava B.", "A. Bennett"].map((name) =>
      addPerson(t.app, { name, email: "ava@example.com" })
    ),
  );
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(
    results.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []),
    [TAKEN, TAKEN],
  );
  assert.deepEqual(t.app.store.readFrom(0, 1000).map((e) => e.type), ["PersonAdded"]);
});

Deno.test("three additions of one email at the same moment in three processes: one person, two refusals, and the projections go on and replay", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 2);
  const results = await Promise.allSettled(
    ["Ava Bennett", "Ava B.", "A. Bennett"].map((name, i) =>
      addPerson([server.app, ...beside.apps][i]!, { name, email: "ava@example.com" })
    ),
  );
  server.app.catchUp();
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(
    results.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []),
    [TAKEN, TAKEN],
  );
  const added = server.app.store.readFrom(0, 1000).filter((e) => e.type === "PersonAdded").length;
  assert.equal(added, 3, "all three passed the check before any was appended: the race happened");
  assert.deepEqual(listPeople(server.app.db).map((p) => p.email), ["ava@example.com"]);
  // The projections were not stopped: the next command works, and a replay gives the same people.
  await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const replay = await runCli(["replay", "--data", server.dir]);
  assert.equal(replay.code, 0, replay.stderr);
  const list = await runCli(["document", "list", "--person", "ava@example.com", "--data", server.dir]);
  assert.equal(list.code, 0, list.stderr);
});

Deno.test("two `main.ts person add` processes of one email beside the server: exit codes 0 and 2, one person", async () => {
  const server = await testServer();
  await using _ = server;
  // The test holds the log's write lock while both start, so both check the email before either appends.
  const lock = new DatabaseSync(join(server.dir, "events.db"));
  lock.exec("BEGIN IMMEDIATE");
  const running = Promise.all(
    ["Ava Bennett", "Ava B."].map((name) =>
      runCli(["person", "add", "--name", name, "--email", "ava@example.com", "--data", server.dir])
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 5000));
  lock.exec("COMMIT");
  lock.close();
  const clis = await running;
  assert.deepEqual(clis.map((cli) => cli.code).sort(), [0, 2], clis.map((cli) => cli.stderr).join("\n"));
  assert.equal(clis.find((cli) => cli.code === 2)!.stderr.trim(), TAKEN);
  server.app.catchUp();
  assert.deepEqual(listPeople(server.app.db).map((p) => p.email), ["ava@example.com"]);
});
