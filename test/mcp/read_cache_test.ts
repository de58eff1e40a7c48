/**
 * What calls read again and again is kept between calls (`src/mcp/read_cache.ts`),
 * and the plain `tools/call` is answered without the SDK's dispatch
 * (`answerToolCall` in `src/mcp/server.ts`). Neither may change what a caller
 * sees: a change of keys, folders or documents shows on the next call, from
 * this process at once and from another process sharing the files within a
 * millisecond; and the fast path answers byte for byte as the SDK does.
 */
import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { callTool, failingStore, Fixture, post } from "./_fixture.ts";
import { buildWorld } from "./_world.ts";

const settings = { rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 };

function listed(result: { content: Array<Record<string, string>> }): string[] {
  const body = JSON.parse(result.content[0]!.text!) as { items: Array<{ document: string; folder: string }> };
  return body.items.map((item) => `${item.folder} | ${item.document}`);
}

Deno.test("changes made in this process show on the very next call", async () => {
  const world = await buildWorld();
  const { fixture, keys, keyIds, folders, ava } = world;
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store, settings });
    const before = listed(await callTool(endpoint, keys.decks, "list_documents", {}));
    assert.ok(before.some((line) => line.startsWith("Ava Bennett's documents/Decks/Basic |")));

    // A folder renamed: the listing's folder values change.
    await fixture.renameFolder(ava, folders.decksBasic, "Plain");
    const renamed = listed(await callTool(endpoint, keys.decks, "list_documents", {}));
    assert.ok(renamed.some((line) => line.startsWith("Ava Bennett's documents/Decks/Plain |")));
    assert.ok(!renamed.some((line) => line.includes("/Basic |")));

    // A document uploaded into the scope: listed at once.
    await fixture.document(ava, folders.decks, "pptx/markitdown-test-deck-chart-table.pptx", {
      name: "fresh-upload.pptx",
      processed: false,
    });
    const added = listed(await callTool(endpoint, keys.decks, "list_documents", {}));
    assert.equal(added.length, renamed.length + 1);
    assert.ok(added.some((line) => line.endsWith("| fresh-upload.pptx")));

    // The key narrowed to another folder: the scope follows, and the server's texts too.
    await fixture.changeKey(keyIds.decks, { can_read: { folders: [folders.papers], documents: [] } });
    const narrowed = listed(await callTool(endpoint, keys.decks, "list_documents", {}));
    assertAll(narrowed, (line) => line.startsWith("Ava Bennett's documents/Papers"));
    const tools = await (await post(endpoint, keys.decks, { jsonrpc: "2.0", id: 1, method: "tools/list" }))
      .text();
    assert.match(tools, /Papers/);
    assert.doesNotMatch(tools, /Decks/);

    // The key deleted: its value stops working on the next call.
    await fixture.deleteKey(keyIds.decks);
    const gone = await post(endpoint, keys.decks, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.equal(gone.status, 401);
    assert.equal((await gone.json()).code, "bad_key");
  } finally {
    await fixture.dispose();
  }
});

Deno.test("a rolled key's old value stops when it expires, though nothing else changed", async () => {
  const world = await buildWorld();
  const { fixture, keys, keyIds } = world;
  let now = new Date();
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store, settings, now: () => now });
    const { value: newValue, oldExpiresAt } = await fixture.rollKey(keyIds.all, "1h");
    const expiry = Date.parse(oldExpiresAt);
    now = new Date(expiry - 1);
    const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    for (const value of [keys.all, newValue]) {
      const response = await post(endpoint, value, LIST);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    now = new Date(expiry); // the old value's hour is over; no event happened
    const expired = await post(endpoint, keys.all, LIST);
    assert.equal(expired.status, 401);
    await expired.body?.cancel();
    const current = await post(endpoint, newValue, LIST);
    assert.equal(current.status, 200);
    await current.body?.cancel();
  } finally {
    await fixture.dispose();
  }
});

Deno.test("a change another process commits to the shared files shows within a millisecond", async () => {
  const world = await buildWorld();
  const { fixture, keys, keyIds, ava, folders } = world;
  // A second process on the same data directory, as a CLI command is: its own connections.
  const other = await Fixture.reopen(fixture.dir);
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store, settings });
    const before = listed(await callTool(endpoint, keys.all, "list_documents", { limit: 50 }));
    await other.document(ava, folders.papers, "pptx/markitdown-test-deck-chart-table.pptx", {
      name: "from-the-cli.pptx",
      processed: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const after = listed(await callTool(endpoint, keys.all, "list_documents", { limit: 50 }));
    assert.equal(after.length, before.length + 1);
    assert.ok(after.some((line) => line.endsWith("| from-the-cli.pptx")));

    await other.deleteKey(keyIds.all);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const gone = await post(endpoint, keys.all, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.equal(gone.status, 401);
    await gone.body?.cancel();
  } finally {
    await other.close();
    await fixture.dispose();
  }
});

Deno.test("a plain tools/call is answered byte for byte as the SDK answers it", async () => {
  const world = await buildWorld();
  const { fixture, keys, docs } = world;
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store, settings });
    const calls: Array<[string, Record<string, unknown> | undefined]> = [
      ["list_documents", {}],
      ["list_documents", { folders: ["Basic"], limit: 1, offset: 1 }],
      ["list_documents", { folders: ["No such folder"] }],
      ["list_documents", undefined],
      ["search", { query: "Apache performance tuning" }],
      ["search", { query: "" }],
      ["read_document", { document_id: docs.apache, page: 2 }],
      ["read_document", { document_id: docs.bobs }],
      ["view_page", { document_id: docs.tracemonkey, page: 999 }],
      ["no_such_tool", {}],
      ["list_documents", { limit: "ten" }],
    ];
    for (const [i, [name, args]] of calls.entries()) {
      const params = args === undefined ? { name } : { name, arguments: args };
      const plain = await post(endpoint, keys.all, { jsonrpc: "2.0", id: i, method: "tools/call", params });
      // `_meta` is not part of the plain form, so this one goes through the SDK.
      const viaSdk = await post(endpoint, keys.all, {
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { ...params, _meta: {} },
      });
      assert.equal(plain.status, viaSdk.status, name);
      assert.equal(await plain.text(), await viaSdk.text(), `${name} ${JSON.stringify(args)}`);
    }
    // String ids too, and a failing audit append answers the same JSON-RPC error both ways.
    const broken = createMcpEndpoint({ db: fixture.db, store: failingStore(fixture), settings });
    const params = { name: "list_documents", arguments: {} };
    const plain = await post(broken, keys.all, { jsonrpc: "2.0", id: "a", method: "tools/call", params });
    const viaSdk = await post(broken, keys.all, {
      jsonrpc: "2.0",
      id: "a",
      method: "tools/call",
      params: { ...params, _meta: {} },
    });
    assert.equal(plain.status, 503);
    assert.equal(viaSdk.status, 503);
    assert.equal(await plain.text(), await viaSdk.text());
  } finally {
    await fixture.dispose();
  }
});
