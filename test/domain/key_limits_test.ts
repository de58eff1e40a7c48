/**
 * A person may have at most 100 agent keys and 20 personal keys: the next
 * one is refused with one sentence, from the API (409) and the CLI alike,
 * and deleting one makes room again.
 */
import assert from "node:assert/strict";
import {
  createAgentKey,
  createPersonalKey,
  MAX_AGENT_KEYS,
  MAX_PERSONAL_KEYS,
} from "../../src/domain/keys.ts";
import { listAgentKeys, personalKeys } from "../../projections/key_scopes.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createFolder } from "../../src/domain/folders.ts";
import type { SergoApp } from "../../src/app.ts";
import { testServer } from "../http/_server.ts";
import { appsBeside } from "../helpers/apps_beside.ts";
import { runCli } from "../helpers/temp.ts";

const AGENT_CAP = "You have 100 agent keys, the most one person may have: delete one before making another";
const PERSONAL_CAP =
  "You have 20 personal keys, the most one person may have: delete one before making another";

Deno.test("the 101st agent key and the 21st personal key are refused by the API and the CLI and record nothing; a deletion makes room", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const { value: personal } = await createPersonalKey(server.app, { personId: ava.person_id }, "test");
  const none = { folders: [], documents: [] };
  for (let i = 0; i < MAX_AGENT_KEYS; i++) {
    await createAgentKey(server.app, {
      personId: ava.person_id,
      name: `agent-${i}`,
      description: "",
      canRead: none,
    }, "test");
  }
  const post = (name: string) =>
    server.fetch("/api/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${personal}`, "content-type": "application/json" },
      body: JSON.stringify({ name, description: "", can_read: none }),
    });
  const atCap = server.app.head().position;
  const refused = await post("one-more");
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).message, AGENT_CAP);
  assert.equal(server.app.head().position, atCap, "the refused 101st key records nothing");
  // Another person's keys are theirs to count.
  await createAgentKey(
    server.app,
    { personId: ben.person_id, name: "ben", description: "", canRead: none },
    "t",
  );

  for (let i = 1; i < 20; i++) await createPersonalKey(server.app, { personId: ava.person_id }, "test");
  const atPersonalCap = server.app.head().position;
  await assert.rejects(createPersonalKey(server.app, { personId: ava.person_id }, "test"), {
    message: PERSONAL_CAP,
  });
  assert.equal(server.app.head().position, atPersonalCap, "the refused 21st personal key records nothing");

  const d = ["--data", server.dir];
  const cli = await runCli(["key", "add", "--person", "ava@example.com", "--name", "from-cli", ...d]);
  assert.equal(cli.code, 2);
  assert.equal(cli.stderr.trim(), AGENT_CAP);
  assert.equal(
    (await runCli(["key", "delete", "--person", "ava@example.com", "--name", "agent-0", ...d])).code,
    0,
  );
  const room = await runCli(["key", "add", "--person", "ava@example.com", "--name", "from-cli", ...d]);
  assert.equal(room.code, 0, room.stderr);
});

Deno.test("creations at the same moment in one process take turns: at 99 agent keys five at once leave 100, and the four refused record nothing", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const none = { folders: [], documents: [] };
  const agentKey = (name: string) =>
    createAgentKey(server.app, { personId: ava.person_id, name, description: "", canRead: none }, "test");
  for (let i = 0; i < MAX_AGENT_KEYS - 1; i++) await agentKey(`agent-${i}`);
  const before = server.app.head().position;
  const agents = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => agentKey(`at-once-${i}`)));
  assert.deepEqual(
    agents.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []),
    [AGENT_CAP, AGENT_CAP, AGENT_CAP, AGENT_CAP],
  );
  assert.equal(server.app.head().position, before + 1, "one key recorded; nothing for the four refused");
});

Deno.test("creations at the same moment cannot pass the cap: at 99 agent keys five at once leave 100, at 19 personal keys three leave 20", async () => {
  const server = await testServer();
  await using _ = server;
  await using beside = await appsBeside(server.dir, 4);
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const none = { folders: [], documents: [] };
  const agentKey = (name: string, app: SergoApp = server.app) =>
    createAgentKey(app, { personId: ava.person_id, name, description: "", canRead: none }, "test");
  for (let i = 0; i < MAX_AGENT_KEYS - 1; i++) await agentKey(`agent-${i}`);
  // All five (one per process) pass the projection's count (99) before any of them is appended.
  for (const app of beside.apps) app.catchUp();
  const agents = await Promise.allSettled(
    [server.app, ...beside.apps].map((app, i) => agentKey(`at-once-${i}`, app)),
  );
  server.app.catchUp();
  assert.equal(agents.filter((r) => r.status === "fulfilled").length, 1);
  assert.deepEqual(
    agents.flatMap((r) => r.status === "rejected" ? [(r.reason as Error).message] : []),
    [AGENT_CAP, AGENT_CAP, AGENT_CAP, AGENT_CAP],
  );
  assert.equal(listAgentKeys(server.app.db, ava.person_id).length, MAX_AGENT_KEYS);

  const personal = (app: SergoApp = server.app) =>
    createPersonalKey(app, { personId: ava.person_id }, "test");
  for (let i = 0; i < MAX_PERSONAL_KEYS - 1; i++) await personal();
  for (const app of beside.apps) app.catchUp();
  const personals = await Promise.allSettled([
    personal(),
    personal(beside.apps[0]),
    personal(beside.apps[1]),
  ]);
  server.app.catchUp();
  assert.equal(personals.filter((r) => r.status === "fulfilled").length, 1);
  assert.equal(personalKeys(server.app.db, ava.person_id).length, MAX_PERSONAL_KEYS);
  assert.ok(personals.every((r) => r.status === "fulfilled" || (r.reason as Error).message === PERSONAL_CAP));

  // The CLI beside the server: two processes at once at 99 keys (one deleted) leave 100.
  await runCli(["key", "delete", "--person", "ava@example.com", "--name", "agent-0", "--data", server.dir]);
  server.app.catchUp();
  const clis = await Promise.all(
    ["cli-a", "cli-b"].map((name) =>
      runCli(["key", "add", "--person", "ava@example.com", "--name", name, "--data", server.dir])
    ),
  );
  assert.deepEqual(clis.map((cli) => cli.code).sort(), [0, 2], clis.map((cli) => cli.stderr).join("\n"));
  assert.equal(clis.find((cli) => cli.code === 2)!.stderr.trim(), AGENT_CAP);
  server.app.catchUp();
  assert.equal(listAgentKeys(server.app.db, ava.person_id).length, MAX_AGENT_KEYS);
});

Deno.test("a key may read 1,000 folders; 1,001 are refused with one sentence and no key is made", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folders: string[] = [];
  for (let i = 0; i < 1_001; i++) {
    folders.push(
      (await createFolder(server.app, { personId: ava.person_id, parentId: null, name: `f${i}` }, "t"))
        .folder_id,
    );
  }
  const make = (name: string, ids: string[]) =>
    createAgentKey(server.app, {
      personId: ava.person_id,
      name,
      description: "",
      canRead: { folders: ids, documents: [] },
    }, "test");
  const made = await make("thousand", folders.slice(0, 1_000));
  assert.equal(made.key.can_read.folders.length, 1_000);
  await assert.rejects(make("one-more", folders), {
    message: "A key can read at most 1,000 folders and 1,000 documents",
  });
  assert.deepEqual(listAgentKeys(server.app.db, ava.person_id).map((k) => k.name), ["thousand"]);
});
