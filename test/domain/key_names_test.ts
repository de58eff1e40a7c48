/**
 * A person's agent keys have different names (`mcp-stdio`, the CLI and the
 * console find a key by its name): a name taken already is refused, also when
 * two creations or renames to one name happen at the same moment. In one
 * process they take turns, and the later one is refused before anything is
 * appended; across processes (the CLI beside `serve`; here also apps opened
 * beside each other on one data directory) the later one in log order is
 * taken back.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { changeAgentKey, createAgentKey } from "../../src/domain/keys.ts";
import { listAgentKeys } from "../../projections/key_scopes.ts";
import { addPerson } from "../../src/domain/people.ts";
import type { SergoApp } from "../../src/app.ts";
import { testServer } from "../http/_server.ts";
import { appsBeside } from "../helpers/apps_beside.ts";
import { runCli, tempApp } from "../helpers/temp.ts";

const TAKEN = (name: string) => `An agent key named "${name}" already exists`;
const NONE = { folders: [], documents: [] };

function refusals(results: PromiseSettledResult<unknown>[]): string[] {
  return results.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []);
}

Deno.test("five creations of one key name at the same moment in one process: one key, four refusals, nothing recorded for them", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const results = await Promise.allSettled(
    [1, 2, 3, 4, 5].map((i) =>
      createAgentKey(
        t.app,
        { personId: ava.person_id, name: "research", description: `${i}`, canRead: NONE },
        "t",
      )
    ),
  );
  assert.deepEqual(refusals(results), Array(4).fill(TAKEN("research")));
  const key = async (name: string) =>
    (await createAgentKey(t.app, { personId: ava.person_id, name, description: "", canRead: NONE }, "t")).key;
  const [first, second] = [await key("first"), await key("second")];
  const renames = await Promise.allSettled(
    [first, second].map((k) =>
      changeAgentKey(t.app, { personId: ava.person_id, keyId: k.key_id, name: "shared" }, "t")
    ),
  );
  assert.deepEqual(refusals(renames), [TAKEN("shared")]);
  assert.deepEqual(t.app.store.readFrom(0, 1000).map((e) => e.type), [
    "PersonAdded",
    "AgentKeyCreated",
    "AgentKeyCreated",
    "AgentKeyCreated",
    "AgentKeyChanged",
  ]);
});

Deno.test("five creations of one key name at the same moment in five processes leave one key of that name; the other four are refused with the name's sentence", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 4);
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const create = (personId: string, description: string, app: SergoApp = server.app) =>
    createAgentKey(app, { personId, name: "research", description, canRead: NONE }, "test");
  for (const app of beside.apps) app.catchUp();
  const results = await Promise.allSettled(
    [server.app, ...beside.apps].map((app, i) => create(ava.person_id, `try ${i}`, app)),
  );
  server.app.catchUp();
  const created = server.app.store.readFrom(0, 1000).filter((e) => e.type === "AgentKeyCreated").length;
  assert.equal(created, 5, "all five passed the check before any was appended: the race happened");
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(refusals(results), Array(4).fill(TAKEN("research")));
  const kept = listAgentKeys(server.app.db, ava.person_id);
  assert.deepEqual(kept.map((key) => key.name), ["research"]);
  // The key kept is the one the fulfilled creation returned.
  const won = results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<
    { key: { key_id: string } }
  >;
  assert.equal(kept[0]!.key_id, won.value.key.key_id);
  // Another person's names are their own.
  await create(ben.person_id, "ben's");
  assert.deepEqual(listAgentKeys(server.app.db, ben.person_id).map((key) => key.name), ["research"]);
  // A later creation of a name in use is refused as before.
  await assert.rejects(create(ava.person_id, "again"), { message: TAKEN("research") });
});

Deno.test("two renames to one name at the same moment in two processes: one key gets it, the other keeps its old name and description and is refused", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 1);
  const other = beside.apps[0]!;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const key = async (name: string) =>
    (await createAgentKey(server.app, {
      personId: ava.person_id,
      name,
      description: `${name} before`,
      canRead: NONE,
    }, "test")).key;
  const first = await key("first");
  const second = await key("second");
  other.catchUp();
  const results = await Promise.allSettled(
    ([[first, server.app], [second, other]] as const).map(([k, app]) =>
      changeAgentKey(app, {
        personId: ava.person_id,
        keyId: k.key_id,
        name: "shared",
        description: "after",
      }, "test")
    ),
  );
  server.app.catchUp();
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(refusals(results), [TAKEN("shared")]);
  const keys = listAgentKeys(server.app.db, ava.person_id);
  assert.deepEqual(
    keys.map((k) => [k.name, k.description]).sort(),
    results[0]!.status === "fulfilled"
      ? [["second", "second before"], ["shared", "after"]]
      : [["first", "first before"], ["shared", "after"]],
  );

  // A creation and a rename to one name at the same moment.
  const third = await key("third");
  other.catchUp();
  const race = await Promise.allSettled([
    changeAgentKey(server.app, { personId: ava.person_id, keyId: third.key_id, name: "fresh" }, "test"),
    createAgentKey(
      other,
      { personId: ava.person_id, name: "fresh", description: "", canRead: NONE },
      "t",
    ),
  ]);
  server.app.catchUp();
  assert.deepEqual(refusals(race), [TAKEN("fresh")]);
  assert.equal(listAgentKeys(server.app.db, ava.person_id).filter((k) => k.name === "fresh").length, 1);
});

Deno.test("the CLI beside the server: two `key add` processes of one name at once make one key; the other exits 2 with the name's sentence", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  // The test holds the log's write lock while both processes start, so both check the name before
  // either appends (their appends wait for the lock, up to the store's 10 s busy timeout).
  const lock = new DatabaseSync(join(server.dir, "events.db"));
  lock.exec("BEGIN IMMEDIATE");
  const running = Promise.all(
    [1, 2].map(() =>
      runCli(["key", "add", "--person", "ava@example.com", "--name", "from-cli", "--data", server.dir])
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 5000));
  lock.exec("COMMIT");
  lock.close();
  const clis = await running;
  assert.deepEqual(clis.map((cli) => cli.code).sort(), [0, 2], clis.map((cli) => cli.stderr).join("\n"));
  assert.equal(clis.find((cli) => cli.code === 2)!.stderr.trim(), TAKEN("from-cli"));
  server.app.catchUp();
  assert.deepEqual(listAgentKeys(server.app.db, ava.person_id).map((key) => key.name), ["from-cli"]);
});
