/**
 * The official MCP client (`Client` + `StreamableHTTPClientTransport`)
 * against a running server on 127.0.0.1 with real corpus files.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { buildWorld } from "./_world.ts";

Deno.test("the official client connects, lists the tools and calls each one", async () => {
  const world = await buildWorld();
  const { fixture, keys, docs } = world;
  const endpoint = createMcpEndpoint({ db: fixture.db, store: fixture.store });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    return url.pathname === "/mcp" ? endpoint(request) : new Response("Not found", { status: 404 });
  });
  const url = new URL(`http://127.0.0.1:${server.addr.port}/mcp`);
  const client = new Client({ name: "sergo-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${keys.all}`, "x-sergo-end-user": "client-test" } },
  });
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "everything");
    assert.match(
      client.getInstructions() ?? "",
      /^everything — a document store you can search\.\nAva's decks and papers\.\n/,
    );
    assert.equal(transport.sessionId, undefined);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), [
      "search",
      "list_documents",
      "read_document",
      "view_page",
    ]);
    assert.deepEqual(tools[0]!.annotations, { readOnlyHint: true, openWorldHint: false });

    const search = await client.callTool({
      name: "search",
      arguments: { query: "AutoGen multi-agent framework", limit: 4 },
    });
    assert.equal(search.isError, false);
    const groups = JSON.parse((search.content as Array<{ text: string }>)[0]!.text);
    assert.equal(groups[0].document_id, docs.markitdown);

    const list = await client.callTool({ name: "list_documents", arguments: { limit: 2 } });
    assert.equal(JSON.parse((list.content as Array<{ text: string }>)[0]!.text).next_offset, 2);

    const read = await client.callTool({
      name: "read_document",
      arguments: { document_id: docs.markitdown, page: 1 },
    });
    assert.equal(JSON.parse((read.content as Array<{ text: string }>)[0]!.text).page, 1);

    const view = await client.callTool({
      name: "view_page",
      arguments: { document_id: docs.aascu, page: 1 },
    });
    assert.equal(view.isError, true);

    const wrong = await client.callTool({ name: "read_document", arguments: { document_id: docs.bobs } });
    assert.equal(wrong.isError, true);
    assert.equal(
      (wrong.content as Array<{ text: string }>)[0]!.text,
      "Not found, or not yours to see — the two are deliberately indistinguishable",
    );
    const range = await client.callTool({ name: "search", arguments: { query: "x", limit: 50 } });
    assert.equal(range.isError, true);
    const unknown = await client.callTool({ name: "summarize", arguments: {} });
    assert.deepEqual(unknown.content, [{ type: "text", text: "No tool named 'summarize'." }]);
    assert.equal(fixture.auditEvents().filter((e) => e.data.end_user === "client-test").length, 7);
  } finally {
    await client.close();
    await server.shutdown();
    await fixture.dispose();
  }
});

Deno.test("the official client with a wrong key fails at connect", async () => {
  const world = await buildWorld();
  const endpoint = createMcpEndpoint({ db: world.fixture.db, store: world.fixture.store });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, endpoint);
  const client = new Client({ name: "sergo-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.addr.port}/mcp`), {
    // The key's last character changed (to one it does not already end with).
    requestInit: {
      headers: {
        authorization: `Bearer ${world.keys.all.slice(0, -1)}${world.keys.all.endsWith("x") ? "y" : "x"}`,
      },
    },
  });
  try {
    await assert.rejects(client.connect(transport), /Malformed key — the prefix or checksum doesn.t match/);
  } finally {
    await client.close().catch(() => {});
    await server.shutdown();
    await world.fixture.dispose();
  }
});
