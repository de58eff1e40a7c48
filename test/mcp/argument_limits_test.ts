/**
 * What a call may send, and what of it the audit keeps: oversized arguments
 * are a tool error that names the limit, the audit entry keeps only the
 * tool's own arguments (capped), so no call can fill the disk through the
 * log; older entries that kept whole arguments still replay.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openProjector } from "../../projections/projector.ts";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { callTool, Fixture } from "./_fixture.ts";

/** Each test's own data: Ava, her folder "Notes" and a key that reads it, over a thread writer. */
async function openWorld() {
  const fixture = await Fixture.open({ writer: "thread" });
  const ava = await fixture.person("Ava Bennett");
  const notes = await fixture.folder(ava, "Notes");
  const { value: key } = await fixture.agentKey(ava, "notes", "Ava's notes.", {
    folders: [notes],
    documents: [],
  });
  const endpoint = fixture.endpoint();
  return {
    fixture,
    ava,
    key,
    endpoint,
    lastAudit: () => fixture.auditEvents().at(-1)!.data,
    [Symbol.asyncDispose]: () => fixture.dispose(),
  };
}

async function diskBytes(fixture: Fixture): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir(fixture.dir)) {
    if (entry.isFile) total += (await Deno.stat(join(fixture.dir, entry.name))).size;
  }
  return total;
}

Deno.test("a 990 KB query is a tool error naming the cap, and 20 of them add kilobytes to the disk, not 60 MB", async () => {
  await using world = await openWorld();
  const { fixture, key, endpoint, lastAudit } = world;
  const query = "quokka ".repeat(141_429).slice(0, 990_000);
  const before = await diskBytes(fixture);
  for (let i = 0; i < 20; i++) {
    const result = await callTool(endpoint, key, "search", { query });
    assert.deepEqual(result, {
      content: [{ text: "`query` may be at most 4,000 characters; this one has 990,000.", type: "text" }],
      isError: true,
    });
  }
  const audit = lastAudit();
  assert.equal(audit.action, "mcp search");
  assert.deepEqual(audit.arguments, { query: query.slice(0, 4_000) });
  assert.equal(audit.details.query, query.slice(0, 4_000));
  assert.equal(audit.details.results, 0);
  // Whole, each call wrote its query three times (arguments, details, the audit view): 59 MB.
  const grown = (await diskBytes(fixture)) - before;
  assert.ok(grown < 2_000_000, `the data directory grew by ${grown} bytes`);
});

Deno.test("every other limit answers one sentence naming it; a call within them is answered as before", async () => {
  await using world = await openWorld();
  const { key, endpoint, lastAudit } = world;
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      "search",
      { query: "x", folders: Array.from({ length: 51 }, (_, i) => `F${i}`) },
      "`folders` may list at most 50 names; this one lists 51.",
    ],
    [
      "search",
      { query: "x", folders: ["n".repeat(201)] },
      "Each name in `folders` may be at most 200 characters; one has 201.",
    ],
    [
      "read_document",
      { document_id: "d".repeat(5_000) },
      "`document_id` may be at most 200 characters; this one has 5,000.",
    ],
    [
      "view_page",
      { document_id: "x", page: 1, format: "f".repeat(300) },
      "`format` may be at most 200 characters; this one has 300.",
    ],
    [
      "list_documents",
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`a${i}`, i])),
      "A call may send at most 20 arguments; this one sent 21.",
    ],
    [
      "list_documents",
      { extra: { a: { b: { c: { d: 1 } } } } },
      "The arguments may nest at most 4 levels deep.",
    ],
  ];
  for (const [tool, args, message] of cases) {
    const result = await callTool(endpoint, key, tool, args);
    assert.deepEqual(result, { content: [{ text: message, type: "text" }], isError: true }, message);
    assert.equal(lastAudit().details.refused, message);
  }
  const fine = await callTool(endpoint, key, "search", { query: "q".repeat(4_000), folders: ["Notes"] });
  assert.deepEqual(fine, { content: [{ text: "Nothing matched.", type: "text" }], isError: false });
});

Deno.test("the audit entry keeps only the tool's own arguments, capped; anything else sent is left out", async () => {
  await using world = await openWorld();
  const { key, endpoint, lastAudit } = world;
  await callTool(endpoint, key, "search", {
    query: "heat pumps",
    limit: 5,
    note: "x".repeat(10_000),
    deep: [[[1]]],
  });
  assert.deepEqual(lastAudit().arguments, { query: "heat pumps", limit: 5 });
  await callTool(endpoint, key, "list_documents", { folders: ["Notes"], offset: { sneaky: 1 } });
  assert.deepEqual(lastAudit().arguments, { folders: ["Notes"], offset: "(object)" });
  await callTool(endpoint, key, "summarize", { text: "x".repeat(10_000) });
  assert.deepEqual(lastAudit().arguments, {});
});

Deno.test("a log whose entries kept whole arguments (before the caps) still replays into the audit view", async () => {
  await using world = await openWorld();
  const { fixture, ava } = world;
  await fixture.append(`key-old`, [{
    type: "McpCalled",
    data: {
      key_id: "kold0001",
      person_id: ava,
      key_name: "notes",
      masked_key: "sgk_s_…abcd",
      end_user: null,
      tool: "search",
      arguments: { query: "q".repeat(50_000), extra: { nested: [1, 2, { a: "b" }] } },
      action: "mcp search",
      details: { query: "q".repeat(50_000), results: 0 },
      is_error: false,
      duration_ms: 2,
    },
  }]);
  const rebuilt = openProjector(join(fixture.dir, "replayed.db"), ALL_PROJECTIONS);
  rebuilt.catchUp(fixture.store);
  assert.equal(rebuilt.failure, null);
  assert.equal(rebuilt.position, fixture.store.head().position);
  rebuilt.close();
});
