/**
 * A person may have at most 100 agent keys and 20 personal keys: the next
 * one is refused with one sentence, from the API (409) and the CLI alike,
 * and deleting one makes room again.
 */
import assert from "node:assert/strict";
import { createAgentKey, createPersonalKey, MAX_AGENT_KEYS } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { testServer } from "../http/_server.ts";
import { runCli } from "../helpers/temp.ts";

const AGENT_CAP = "You have 100 agent keys, the most one person may have: delete one before making another";
const PERSONAL_CAP =
  "You have 20 personal keys, the most one person may have: delete one before making another";

Deno.test("the 101st agent key and the 21st personal key are refused by the API and the CLI; a deletion makes room", async () => {
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
  const refused = await post("one-more");
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).message, AGENT_CAP);
  // Another person's keys are theirs to count.
  await createAgentKey(
    server.app,
    { personId: ben.person_id, name: "ben", description: "", canRead: none },
    "t",
  );

  for (let i = 1; i < 20; i++) await createPersonalKey(server.app, { personId: ava.person_id }, "test");
  await assert.rejects(createPersonalKey(server.app, { personId: ava.person_id }, "test"), {
    message: PERSONAL_CAP,
  });

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
