/**
 * Byte-level: the reference's example key answers `initialize` and
 * `tools/list` exactly as the reference shows, field for field and in order.
 */
import assert from "node:assert/strict";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { getAgentKey } from "../../projections/key_scopes.ts";
import { Fixture, jsonAfter, post, REFERENCE } from "./_fixture.ts";

const DESCRIPTION =
  "EIA's 2023 energy outlook release decks, uploaded as PowerPoint files: the International Energy Outlook 2023 (IEO2023, world projections to 2050) and the Annual Energy Outlook 2023 (AEO2023, United States projections to 2050)";

async function referenceExample(): Promise<{ fixture: Fixture; value: string; keyId: string }> {
  const fixture = await Fixture.open();
  const ava = await fixture.person("Ava Bennett");
  const outlooks = await fixture.folder(ava, "Energy outlooks");
  await fixture.folder(ava, "Basic", outlooks);
  const { value, keyId } = await fixture.agentKey(ava, "energy-outlooks", DESCRIPTION, {
    folders: [outlooks],
    documents: [],
  });
  return { fixture, value, keyId };
}

const reference = await Deno.readTextFile(REFERENCE);

Deno.test("initialize answers the reference's JSON, field for field (but serverInfo.version)", async () => {
  const { fixture, value } = await referenceExample();
  try {
    const endpoint = createMcpEndpoint({
      db: fixture.db,
      store: fixture.store,
      settings: { serverVersion: "0.6.0" },
    });
    const response = await post(endpoint, value, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.equal(response.headers.get("mcp-session-id"), null);
    const expected = jsonAfter(reference, "The answer to initialize:");
    assert.equal(await response.text(), JSON.stringify(expected));
  } finally {
    await fixture.dispose();
  }
});

Deno.test("tools/list answers the reference's JSON, field for field, with the read-only annotations", async () => {
  const { fixture, value } = await referenceExample();
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store });
    const response = await post(endpoint, value, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const expected = jsonAfter(reference, "so they differ from key to key.") as {
      tools: Array<Record<string, unknown>>;
    };
    for (const tool of expected.tools) tool.annotations = { readOnlyHint: true, openWorldHint: false };
    const text = await response.text();
    assert.equal(text, JSON.stringify({ jsonrpc: "2.0", id: 2, result: expected }));
    // The same bytes on the next request, and after a restart.
    const again = await post(endpoint, value, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    assert.equal(await again.text(), text);
    await fixture.close();
    const reopened = await Fixture.reopen(fixture.dir);
    try {
      const restarted = createMcpEndpoint({ db: reopened.db, store: reopened.store });
      const after = await post(restarted, value, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
      assert.equal(await after.text(), text);
    } finally {
      await reopened.close();
    }
  } finally {
    await Deno.remove(fixture.dir, { recursive: true });
  }
});

Deno.test("a new name, description or folder shows in the next answers", async () => {
  const { fixture, value, keyId } = await referenceExample();
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store });
    const ava = fixture.db.prepare("SELECT person_id FROM cat_people").get() as { person_id: string };
    const reports = await fixture.folder(ava.person_id, "Reports");
    const outlooks =
      (fixture.db.prepare("SELECT folder_id FROM cat_folders WHERE name = 'Energy outlooks'").get() as {
        folder_id: string;
      }).folder_id;
    await fixture.changeKey(keyId, {
      name: "outlooks",
      description: "Outlook decks.",
      can_read: { folders: [outlooks, reports], documents: [] },
    });
    const init = await (await post(endpoint, value, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    })).json();
    assert.equal(init.result.serverInfo.name, "outlooks");
    assert.equal(init.result.serverInfo.description, "Outlook decks.");
    assert.match(
      init.result.instructions,
      /^outlooks — a document store you can search\.\nOutlook decks\.\nUse `search` first/,
    );
    const list = await (await post(endpoint, value, { jsonrpc: "2.0", id: 2, method: "tools/list" })).json();
    // The folders in the order the key keeps them.
    const shown = getAgentKey(fixture.db, keyId)!.can_read.folders
      .map((id) => id === outlooks ? "Energy outlooks" : "Reports").join(", ");
    assert.ok(
      list.result.tools[0].description.startsWith(
        "Search outlooks: Outlook decks. Returns the best-matching",
      ),
    );
    assert.ok(
      list.result.tools[2].description.startsWith(
        "Read the text of a document from outlooks — use an id from outlooks's",
      ),
    );
    assert.equal(
      list.result.tools[0].inputSchema.properties.folders.description,
      `Only search these folders, by name: ${shown} — or any folder inside them, by its own name`,
    );
    assert.equal(
      list.result.tools[1].inputSchema.properties.folders.description,
      `Only list these folders, by name: ${shown} — or any folder inside them, by its own name`,
    );
    // A key reading single files only.
    await fixture.changeKey(keyId, { can_read: { folders: [], documents: [] } });
    const single = await (await post(endpoint, value, { jsonrpc: "2.0", id: 3, method: "tools/list" }))
      .json();
    assert.equal(
      single.result.tools[0].inputSchema.properties.folders.description,
      "This key reads single files, not folders — leave this out",
    );
  } finally {
    await fixture.dispose();
  }
});

Deno.test("tools/list answers the same bytes whether the server's own path or the SDK's answers it", async () => {
  const { fixture, value } = await referenceExample();
  try {
    const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store });
    const text = async (message: unknown) => await (await post(endpoint, value, message)).text();
    // `_meta` sends the request through the SDK; the plain forms are answered without it.
    const viaSdk = await text({ jsonrpc: "2.0", id: "a", method: "tools/list", params: { _meta: {} } });
    const tools = JSON.parse(viaSdk).result.tools as Array<{ name: string }>;
    assert.deepEqual(tools.map((tool) => tool.name), [
      "search",
      "list_documents",
      "read_document",
      "view_page",
    ]);
    assert.equal(await text({ jsonrpc: "2.0", id: "a", method: "tools/list" }), viaSdk);
    assert.equal(await text({ jsonrpc: "2.0", id: "a", method: "tools/list", params: {} }), viaSdk);
    assert.equal(
      await text({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
      viaSdk.replace('"id":"a"', '"id":7'),
    );
    // A cursor that is not a string is the SDK's to refuse, as before.
    const badCursor = JSON.parse(
      await text({ jsonrpc: "2.0", id: 8, method: "tools/list", params: { cursor: 5 } }),
    );
    assert.equal(badCursor.id, 8);
    assert.equal(badCursor.result, undefined);
    assert.ok(badCursor.error, "a cursor that is a number is refused");
  } finally {
    await fixture.dispose();
  }
});
