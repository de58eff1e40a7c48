/**
 * The endpoint around the tools: HTTP answers, audit entries, a failing
 * append, the rate limit, batches, 2026-07-28 discovery, and stdio.
 */
import assert from "node:assert/strict";
import { createMcpEndpoint, PROTOCOL_VERSIONS } from "../../src/mcp/endpoint.ts";
import { serveStdio } from "../../src/mcp/stdio.ts";
import { callTool, failingStore, post } from "./_fixture.ts";
import { buildWorldEndpoint } from "./_world.ts";

const world = await buildWorldEndpoint();
const { fixture, keys, docs, endpoint } = world;
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

Deno.test("auth: the reference's HTTP answers before MCP starts", async () => {
  const none = await post(endpoint, null, LIST);
  assert.equal(none.status, 401);
  assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="sergo"');
  assert.deepEqual(await none.json(), {
    code: "no_auth",
    message: "No credentials — send a login token or an sgk_ key in the Authorization header",
  });
  const truncated = await post(endpoint, keys.all.slice(0, -3), LIST);
  assert.equal(truncated.status, 401);
  assert.equal((await truncated.json()).code, "bad_key");
  assert.equal(truncated.headers.get("www-authenticate"), 'Bearer realm="sergo", error="invalid_token"');
});

Deno.test("HTTP: 405, 415, 400 for versions and end users, 403 for a foreign Origin, 202 for notifications", async () => {
  const get = await endpoint(
    new Request("http://127.0.0.1/mcp", { headers: { authorization: `Bearer ${keys.all}` } }),
  );
  assert.equal(get.status, 405);
  await get.body?.cancel();
  const del = await endpoint(new Request("http://127.0.0.1/mcp", { method: "DELETE" }));
  assert.equal(del.status, 405);
  await del.body?.cancel();
  const text = await post(endpoint, keys.all, JSON.stringify(LIST), { "content-type": "text/plain" });
  assert.equal(text.status, 415);
  await text.body?.cancel();
  const version = await post(endpoint, keys.all, LIST, { "mcp-protocol-version": "2099-01-01" });
  assert.equal(version.status, 400);
  const versionBody = await version.json();
  // 2026-07-28's UnsupportedProtocolVersion, naming what is spoken (a 2025 client only reads the 400).
  assert.equal(versionBody.error.code, -32022);
  assert.deepEqual(versionBody.error.data, { supported: [...PROTOCOL_VERSIONS], requested: "2099-01-01" });
  const control = await post(endpoint, keys.all, LIST, { "x-sergo-end-user": "eve\u0007" });
  assert.equal(control.status, 400);
  await control.body?.cancel();
  const long = await post(endpoint, keys.all, LIST, { "x-sergo-end-user": "a".repeat(201) });
  assert.equal(long.status, 400);
  await long.body?.cancel();
  const evil = await post(endpoint, keys.all, LIST, { origin: "http://evil.example.com" });
  assert.equal(evil.status, 403);
  await evil.body?.cancel();
  const ownOrigin = await post(endpoint, keys.all, LIST, { origin: "http://127.0.0.1:8787" });
  assert.equal(ownOrigin.status, 200);
  await ownOrigin.body?.cancel();
  const allowed = createMcpEndpoint({
    db: fixture.db,
    store: fixture.store,
    settings: { allowedOrigins: ["https://app.example"] },
  });
  const fromApp = await post(allowed, keys.all, LIST, { origin: "https://app.example" });
  assert.equal(fromApp.status, 200);
  await fromApp.body?.cancel();
  const note = await post(endpoint, keys.all, { jsonrpc: "2.0", method: "notifications/initialized" });
  assert.equal(note.status, 202);
  assert.equal(await note.text(), "");
  const parse = await post(endpoint, keys.all, "{not json");
  assert.equal(parse.status, 400);
  assert.equal((await parse.json()).error.code, -32700);
  const ping = await post(endpoint, keys.all, { jsonrpc: "2.0", id: "p", method: "ping" });
  assert.equal(await ping.text(), '{"jsonrpc":"2.0","id":"p","result":{}}');
  const unknown = await post(endpoint, keys.all, { jsonrpc: "2.0", id: 3, method: "resources/list" });
  assert.equal((await unknown.json()).error.code, -32601);
});

Deno.test("batches: answered under 2025-03-26, refused under later versions", async () => {
  const batch = [LIST, { jsonrpc: "2.0", id: 2, method: "ping" }, {
    jsonrpc: "2.0",
    method: "notifications/initialized",
  }];
  const ok = await post(endpoint, keys.all, batch);
  const answers = await ok.json();
  assert.equal(ok.status, 200);
  assert.deepEqual(answers.map((a: { id: number }) => a.id), [1, 2]);
  const ok0326 = await post(endpoint, keys.all, batch, { "mcp-protocol-version": "2025-03-26" });
  assert.equal(ok0326.status, 200);
  await ok0326.body?.cancel();
  const refused = await post(endpoint, keys.all, batch, { "mcp-protocol-version": "2025-06-18" });
  assert.equal(refused.status, 400);
  await refused.body?.cancel();
});

Deno.test("2026-07-28: server/discover is served with the key's texts", async () => {
  const response = await post(endpoint, keys.all, {
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
      },
    },
  }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" });
  const body = await response.json();
  assert.ok(
    response.status < 500 && response.status !== 401 && response.status !== 403,
    `status ${response.status}`,
  );
  assert.ok(body.result, JSON.stringify(body));
  assert.deepEqual(body.result.supportedVersions, ["2026-07-28"]);
  assert.match(body.result.instructions, /^everything — a document store you can search\./);
});

Deno.test("audit: every call leaves exactly one McpCalled event with the reference's action and details", async () => {
  const before = fixture.auditEvents().length;
  const headers = { "x-sergo-end-user": "Dana Reyes" };
  await callTool(endpoint, keys.all, "search", { query: "Apache tuning", offset: 0 }, headers);
  await callTool(endpoint, keys.all, "list_documents", { folders: ["Basic"] }, headers);
  await callTool(endpoint, keys.all, "list_documents", {}, headers);
  await callTool(endpoint, keys.all, "read_document", { document_id: docs.markitdown, page: 2 }, headers);
  await callTool(endpoint, keys.all, "read_document", { document_id: docs.markitdown }, headers);
  await callTool(endpoint, keys.all, "read_document", { document_id: docs.tracemonkey }, headers);
  await callTool(
    endpoint,
    keys.all,
    "read_document",
    { document_id: docs.markitdown, page: 2, to_page: 3 },
    headers,
  );
  await callTool(
    endpoint,
    keys.all,
    "view_page",
    { document_id: docs.tracemonkey, page: 1, format: "pdf" },
    headers,
  );
  await callTool(endpoint, keys.all, "summarize", {}, headers);
  await post(endpoint, keys.all, LIST, headers);
  const events = fixture.auditEvents().slice(before);
  assert.equal(events.length, 9, "one per tool call, none for tools/list");
  const [search, listing, whole, page, all, partial, range, view, unknown] = events.map((e) => e.data);
  assert.equal(search!.action, "mcp search");
  assert.equal(search!.details.query, "Apache tuning");
  assert.equal(search!.details.offset, 0);
  assert.equal(typeof search!.details.results, "number");
  assert.ok((search!.details.results as number) > 0);
  assert.equal(search!.key_id, world.keyIds.all);
  assert.equal(search!.key_name, "everything");
  assert.equal(search!.masked_key, `sgk_s_…${keys.all.slice(-4)}`);
  assert.equal(search!.end_user, "Dana Reyes");
  assert.equal(search!.tool, "search");
  assert.deepEqual(search!.arguments, { query: "Apache tuning", offset: 0 });
  assert.equal(search!.is_error, false);
  assert.ok(search!.duration_ms >= 0);
  assert.equal(listing!.action, "mcp listing");
  assert.deepEqual(listing!.details.folders, ["Basic"]);
  assert.equal(listing!.details.count, 3);
  assert.equal(whole!.details.folders, "whole scope");
  assert.equal(page!.action, "mcp text read");
  assert.equal(page!.details.file, "markitdown-test-deck-chart-table.pptx");
  assert.equal(page!.details.page, 2);
  assert.equal(all!.details.pages, "all pages");
  assert.match(partial!.details.pages as string, /^pages 1-\d+ of 14$/);
  assert.equal(range!.details.pages, "pages 2-3 of 6");
  assert.equal(view!.action, "mcp page viewed");
  assert.deepEqual([view!.details.file, view!.details.page, view!.details.format], [
    "tracemonkey-pldi-paper.pdf",
    1,
    "pdf",
  ]);
  assert.equal(view!.is_error, true, "no renderer here");
  assert.equal(unknown!.is_error, true);
  // Every error says why in the audit, in the words the client was sent.
  assert.equal(unknown!.details.error, "No tool named 'summarize'.");
  assert.match(view!.details.error as string, /^.+\.$/, "the page that could not be drawn says why");
  assert.equal(search!.details.error, undefined, "a call that worked records no error");
  assert.equal(events[0]!.metadata.end_user, "Dana Reyes");
});

Deno.test("a call whose audit append fails is not answered: HTTP 503 with a JSON-RPC error", async () => {
  const broken = createMcpEndpoint({ db: fixture.db, store: failingStore(fixture) });
  const before = fixture.auditEvents().length;
  const response = await post(broken, keys.all, {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: { name: "search", arguments: { query: "Apache" } },
  });
  assert.equal(response.status, 503);
  const body = await response.json();
  assert.equal(body.id, 9);
  assert.equal(body.result, undefined);
  assert.match(body.error.message, /audit log.*disk full/);
  assert.equal(fixture.auditEvents().length, before);
  // The same under 2026-07-28, which the SDK's own handler answers: 503, not its 200.
  const modern = await post(broken, keys.all, {
    jsonrpc: "2.0",
    id: 10,
    method: "tools/call",
    params: {
      name: "search",
      arguments: { query: "Apache" },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
      },
    },
  }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "search" });
  assert.equal(modern.status, 503);
  const modernBody = await modern.json();
  assert.equal(modernBody.id, 10);
  assert.equal(modernBody.result, undefined, JSON.stringify(modernBody));
  assert.match(modernBody.error.message, /audit log.*disk full/);
  assert.equal(fixture.auditEvents().length, before);
  // tools/list is not a call: it still answers.
  const list = await post(broken, keys.all, LIST);
  assert.equal(list.status, 200);
  await list.body?.cancel();
});

Deno.test("rate limit: past the burst a key gets 429 with Retry-After; other keys are not affected", async () => {
  const limited = createMcpEndpoint({
    db: fixture.db,
    store: fixture.store,
    settings: { rateLimitPerSecond: 1, rateLimitBurst: 3 },
  });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const response = await post(limited, keys.decks, LIST);
    statuses.push(response.status);
    if (response.status === 429) assert.ok(Number(response.headers.get("retry-after")) >= 1);
    await response.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const other = await post(limited, keys.single, LIST);
  assert.equal(other.status, 200);
  await other.body?.cancel();
});

Deno.test("stdio answers tools/list and a search, audited", async () => {
  const lines = [
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    JSON.stringify(LIST),
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "search", arguments: { query: "AutoGen agents" } },
    }),
  ];
  const input = new Blob([lines.join("\n") + "\n"]).stream();
  let written = "";
  const decoder = new TextDecoder();
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => void (written += decoder.decode(chunk)),
  });
  const before = fixture.auditEvents().length;
  await serveStdio({ db: fixture.db, store: fixture.store }, keys.all, { input, output });
  const answers = written.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(answers.length, 3);
  assert.equal(answers[0].result.serverInfo.name, "everything");
  assert.deepEqual(answers[1].result.tools.map((t: { name: string }) => t.name), [
    "search",
    "list_documents",
    "read_document",
    "view_page",
  ]);
  const groups = JSON.parse(answers[2].result.content[0].text);
  assert.equal(groups[0].document_id, docs.markitdown);
  assert.equal(fixture.auditEvents().length, before + 1);
  await assert.rejects(
    serveStdio({ db: fixture.db, store: fixture.store }, "sgk_s_nope", {
      input: new Blob([]).stream(),
      output,
    }),
    /Malformed key/,
  );
});

Deno.test("initialize with a protocolVersion that is not a string is Invalid params in one sentence, not a schema dump", async () => {
  const init = (params: Record<string, unknown>) =>
    post(endpoint, keys.all, { jsonrpc: "2.0", id: 7, method: "initialize", params });
  const clientInfo = { name: "t", version: "1" };
  for (
    const [version, received] of [[5, "number"], [null, "null"], [{ v: "2025-06-18" }, "object"]] as const
  ) {
    const response = await init({ protocolVersion: version, capabilities: {}, clientInfo });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32602,
        message: `Invalid params: \`protocolVersion\` is not valid (expected string, received ${received}).`,
      },
    });
  }
  const noVersion =
    await (await init({ protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t" } }))
      .json();
  assert.deepEqual(noVersion.error, {
    code: -32602,
    message: "Invalid params: `clientInfo.version` is not valid (expected string, received undefined).",
  });
  // A string the server does not know is answered with the version it speaks, as the specification says.
  const junk = await (await init({ protocolVersion: "junk", capabilities: {}, clientInfo })).json();
  assert.equal(typeof junk.result.protocolVersion, "string");
});
