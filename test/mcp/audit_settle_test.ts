/**
 * An MCP call's audit entry is durable before the call is answered; a batch of
 * nothing but audit entries reaches the audit view within `AUDIT_SETTLE_MS`
 * (`SergoApp.settle`), and anything else, or a read of the audit view through
 * the app, applies them first, in log order.
 */
import assert from "node:assert/strict";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { queryAudit } from "../../projections/audit_view.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { replayInto } from "../../projections/replay.ts";
import { AUDIT_SETTLE_MS, openApp } from "../../src/app.ts";
import { ensureFolderPath } from "../../src/domain/folders.ts";
import { changeAgentKey, createAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { tempDir } from "../helpers/temp.ts";
import { post } from "./_fixture.ts";

Deno.test("audit entries of answered calls are in the log at once and in the view soon after", async () => {
  await using dir = await tempDir();
  const app = await openApp(dir.path, { writer: "thread" });
  try {
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const folder = await ensureFolderPath(app, { personId: ava.person_id, path: "Decks" }, "test");
    const { key, value } = await createAgentKey(app, {
      personId: ava.person_id,
      name: "decks",
      description: "Decks.",
      canRead: { folders: [folder.folder_id], documents: [] },
    }, "test");
    const endpoint = createMcpEndpoint({ db: app.db, store: app.store });
    const call = (id: number) =>
      post(endpoint, value, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "list_documents", arguments: {} },
      }).then((response) => response.text());
    const inView = () => queryAudit(app.db, { personId: ava.person_id, limit: 100, action: "mcp listing" });
    const logged = () => app.store.readFrom(0, 10_000).filter((e) => e.type === "McpCalled").length;

    // Ten calls answered together: every entry is durable when the answers are in hand.
    await Promise.all(Array.from({ length: 10 }, (_, i) => call(i)));
    assert.equal(logged(), 10);
    // Read through the app (as the API and console do), the view has them all.
    app.settle();
    assert.equal(inView().entries.length, 10);
    assert.equal(app.projector.position, app.head().position);

    // Without asking: they are there once AUDIT_SETTLE_MS has passed.
    await Promise.all(Array.from({ length: 5 }, (_, i) => call(100 + i)));
    await new Promise((resolve) => setTimeout(resolve, AUDIT_SETTLE_MS + 10));
    assert.equal(inView().entries.length, 15);

    // Calls, then at once another kind of event: the entries are applied first, in log order.
    await Promise.all(Array.from({ length: 5 }, (_, i) => call(200 + i)));
    await changeAgentKey(
      app,
      { personId: ava.person_id, keyId: key.key_id, description: "Slide decks." },
      "test",
    );
    assert.equal(app.projector.position, app.head().position);
    const entries = queryAudit(app.db, { personId: ava.person_id, limit: 100 }).entries;
    const positions = entries.map((entry) => entry.position);
    assert.deepEqual(positions, [...positions].sort((a, b) => b - a));
    assert.equal(entries.filter((entry) => entry.action === "mcp listing").length, 20);

    // And the live projections are exactly what a replay of the log builds.
    const live = projectionDigest(app.db, ALL_PROJECTIONS);
    const replayed = await replayInto(app.store, `${dir.path}/replayed.db`);
    assert.equal(replayed.digest, live);
  } finally {
    await app.close();
  }
});

Deno.test("a process that stops before its calls' entries reach the audit view leaves them to the next open", async () => {
  await using dir = await tempDir();
  const app = await openApp(dir.path);
  let personId: string, value: string;
  try {
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const folder = await ensureFolderPath(app, { personId: ava.person_id, path: "Decks" }, "test");
    ({ value } = await createAgentKey(app, {
      personId: ava.person_id,
      name: "decks",
      description: "Decks.",
      canRead: { folders: [folder.folder_id], documents: [] },
    }, "test"));
    personId = ava.person_id;
  } finally {
    await app.close();
  }
  // The child answers 30 calls and exits at once: their entries are durable, the view lacks them.
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_audit_settle_child.ts", import.meta.url).pathname, dir.path, value, "30"],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(child.code, 0);
  const stopped = JSON.parse(new TextDecoder().decode(child.stdout)) as { answered: number; behind: number };
  assert.equal(stopped.answered, 30);
  // None reached the view (the child held the projections' write lock until it exited).
  assert.equal(stopped.behind, 30);

  const reopened = await openApp(dir.path);
  try {
    assert.equal(reopened.projector.position, reopened.head().position);
    const entries = queryAudit(reopened.db, { personId, limit: 100, action: "mcp listing" }).entries;
    assert.equal(entries.length, 30);
    const live = projectionDigest(reopened.db, ALL_PROJECTIONS);
    const replayed = await replayInto(reopened.store, `${dir.path}/replayed.db`);
    assert.equal(replayed.digest, live);
  } finally {
    await reopened.close();
  }
});
