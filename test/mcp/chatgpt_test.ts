/**
 * The ChatGPT-shaped server (`/chatgpt/mcp`): OpenAI's `search` and `fetch`
 * in the shapes its "Building MCP servers for ChatGPT and API integrations"
 * guide documents, checked field by field; the key's scope (an id outside it
 * answers byte for byte as an unknown id); one audit entry per call naming
 * the shape; and the same key's `/mcp` unchanged.
 */
import assert from "node:assert/strict";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { CHATGPT_SHAPE } from "../../src/mcp/chatgpt/shape.ts";
import { getPages } from "../../projections/catalogue.ts";
import { queryAudit } from "../../projections/audit_view.ts";
import { callTool, post } from "./_fixture.ts";
import { buildWorld } from "./_world.ts";

const world = await buildWorld();
const { fixture, docs, keys } = world;
const chatgpt = createMcpEndpoint({
  db: fixture.db,
  store: fixture.store,
  settings: { rateLimitPerSecond: 10_000 },
  shape: CHATGPT_SHAPE,
});
const reference = fixture.endpoint();
const ORIGIN = "http://127.0.0.1:8787";

interface Result {
  id: string;
  title: string;
  url: string;
}

async function search(key: string, query: string): Promise<{ raw: string; results: Result[] }> {
  const answer = await callTool(chatgpt, key, "search", { query });
  assert.equal(answer.isError, false, JSON.stringify(answer));
  assert.equal(answer.content.length, 1, "one content block");
  assert.equal(answer.content[0]!.type, "text");
  const parsed = JSON.parse(answer.content[0]!.text!);
  assert.deepEqual(Object.keys(parsed), ["results"]);
  return { raw: answer.content[0]!.text!, results: parsed.results };
}

async function fetchAnswer(key: string, id: unknown): Promise<string> {
  const response = await post(chatgpt, key, {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "fetch", arguments: { id } },
  });
  assert.equal(response.status, 200);
  return await response.text();
}

Deno.test("tools/list: search(query) and fetch(id), with the key's name and description, titles and read-only hints", async () => {
  const body = await (await post(chatgpt, keys.all, { jsonrpc: "2.0", id: 1, method: "tools/list" })).json();
  const tools = body.result.tools as Array<Record<string, unknown>>;
  assert.deepEqual(tools.map((tool) => tool.name), ["search", "fetch"]);
  const [searchTool, fetchTool] = tools as Array<
    { description: string; inputSchema: unknown; annotations: unknown }
  >;
  assert.deepEqual(searchTool!.inputSchema, {
    type: "object",
    properties: { query: { type: "string", description: "What to look for — plain words or a question" } },
    required: ["query"],
  });
  assert.deepEqual(fetchTool!.inputSchema, {
    type: "object",
    properties: {
      id: {
        type: "string",
        description:
          "The id of a result from `search`, such as xM5gW8NZ:18 (a document id, a colon and a page)",
      },
    },
    required: ["id"],
  });
  assert.ok(searchTool!.description.startsWith("Search everything: Ava's decks and papers. Returns the 20"));
  assert.ok(fetchTool!.description.startsWith("Read one page of a document from everything — use an id"));
  assert.deepEqual(searchTool!.annotations, {
    title: "Search everything",
    readOnlyHint: true,
    openWorldHint: false,
  });
  assert.deepEqual(fetchTool!.annotations, {
    title: "Read a page from everything",
    readOnlyHint: true,
    openWorldHint: false,
  });
  // The same serverInfo as the key's /mcp; instructions that name this shape's tools.
  const init = (params: unknown) => ({ jsonrpc: "2.0", id: 1, method: "initialize", params });
  const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
  const mine = await (await post(chatgpt, keys.all, init(params))).json();
  const theirs = await (await post(reference, keys.all, init(params))).json();
  assert.deepEqual(mine.result.serverInfo, theirs.result.serverInfo);
  assert.match(
    mine.result.instructions,
    /^everything — a document store you can search\.\nAva's decks and papers\.\nUse `search` first.*`fetch`/s,
  );
});

Deno.test("search: one text block {results: [{id, title, url}]}, pages best first, at most 20, half from one document", async () => {
  const { results } = await search(keys.decks, "Apache performance tuning");
  const names = new Map([
    [docs.apache, "apache-performance-tuning-notes.pptx"],
    [docs.aascu, "aascu-birth-to-career-equity-charts.pptx"],
  ]);
  assert.ok(results.length > 0 && results.length <= 20, `${results.length} results`);
  const perDocument = new Map<string, number>();
  for (const result of results) {
    assert.deepEqual(Object.keys(result), ["id", "title", "url"], "exactly OpenAI's fields, in its order");
    const match = /^([A-Za-z0-9]+):(\d+)$/.exec(result.id);
    assert.ok(match, result.id);
    const [, documentId, page] = match;
    assert.ok(names.has(documentId!), `${result.id} is the decks key's`);
    assert.equal(result.title, `${names.get(documentId!)} — page ${page}`);
    assert.equal(result.url, `${ORIGIN}/documents/${documentId}?page=${page}#page-${page}`);
    perDocument.set(documentId!, (perDocument.get(documentId!) ?? 0) + 1);
  }
  assert.equal(new Set(results.map((r) => r.id)).size, results.length, "each page once");
  for (const [id, n] of perDocument) assert.ok(n <= 10, `${n} results from ${id}`);
  assert.ok(!perDocument.has(docs.bobs), "Bob's copy of the deck is not Ava's key's");
  // The same ranking as the reference's search: its best excerpt is this search's first page.
  const ranked = await callTool(reference, keys.decks, "search", {
    query: "Apache performance tuning",
    limit: 20,
  });
  const best = JSON.parse(ranked.content[0]!.text!)[0];
  assert.equal(results[0]!.id, `${best.document_id}:${best.hits[0].page}`);
  const referencePages = new Set<string>(
    JSON.parse(ranked.content[0]!.text!).flatMap((
      d: { document_id: string; hits: Array<{ page: number }> },
    ) => d.hits.map((h) => `${d.document_id}:${h.page}`)),
  );
  for (const page of referencePages) {
    assert.ok(
      results.some((r) => r.id === page),
      `the reference's page ${page} is found here too: ${JSON.stringify(results.map((r) => r.id))} ${
        JSON.stringify([...referencePages])
      }`,
    );
  }
  // Nothing matched: still the shape, an empty list, not an error.
  const none = await search(keys.all, "zebra quaternion marmalade");
  assert.equal(none.raw, '{"results":[]}');
  const empty = await callTool(chatgpt, keys.all, "search", { query: "  " });
  assert.deepEqual(empty, {
    content: [{ text: "Give a query to search for.", type: "text" }],
    isError: true,
  });
});

Deno.test("fetch: one text block {id, title, text, url, metadata}, the page's text as read_document gives it", async () => {
  const { results } = await search(keys.all, "Apache performance tuning");
  for (const result of results.slice(0, 6)) {
    const answer = await callTool(chatgpt, keys.all, "fetch", { id: result.id });
    assert.equal(answer.isError, false);
    assert.equal(answer.content.length, 1);
    const page = JSON.parse(answer.content[0]!.text!);
    assert.deepEqual(Object.keys(page), ["id", "title", "text", "url", "metadata"]);
    assert.equal(page.id, result.id);
    assert.equal(page.title, result.title, "the same title as the search result");
    assert.equal(page.url, result.url);
    const [documentId, number] = result.id.split(":");
    const read = JSON.parse(
      (await callTool(reference, keys.all, "read_document", {
        document_id: documentId,
        page: Number(number),
      }))
        .content[0]!.text!,
    );
    assert.equal(page.text, read.text);
    assert.deepEqual(Object.keys(page.metadata), [
      "document_id",
      "document",
      "folder",
      "type",
      "page",
      "pages",
      "pages_to_view",
      "view_page_may_help",
    ]);
    assert.deepEqual(page.metadata, {
      document_id: documentId,
      document: read.document,
      folder: read.folder,
      type: "pptx",
      page: Number(number),
      pages: read.pages,
      pages_to_view: read.pages_to_view,
      view_page_may_help: "view_page_may_help" in read,
    });
  }
  // A marked page says so.
  const marked = JSON.parse(
    (await callTool(chatgpt, keys.all, "fetch", { id: `${docs.apache}:3` })).content[0]!.text!,
  );
  assert.equal(marked.metadata.view_page_may_help, true);
  assert.ok(marked.metadata.pages_to_view.includes(3));
  // The text of the page in the catalogue, untouched.
  assert.equal(marked.text, getPages(fixture.db, docs.apache, 3, 3)[0]!.text);
});

Deno.test("isolation: an id outside the key's scope answers byte for byte as an unknown id, and search never shows one", async () => {
  const unknown = await fetchAnswer(keys.decks, "ZZZZZZZZ:1");
  assert.equal(
    unknown,
    '{"jsonrpc":"2.0","id":5,"result":{"content":[{"text":"Not found, or not yours to see — the two are deliberately indistinguishable","type":"text"}],"isError":true}}',
  );
  const outside = [
    `${docs.tracemonkey}:1`, // Ava's, in Papers: not the decks key's
    `${docs.markitdown}:2`, // Ava's, in Papers/Basic
    `${docs.bobs}:1`, // Bob's
    `${docs.apache}:49`, // in scope, the page after its last (48)
    `${docs.apache}:999`,
    `${docs.apache}:0`,
    docs.apache, // no page
    `${docs.apache}:1:2`,
    "../etc/passwd",
    "",
  ];
  for (const id of outside.slice(0, -1)) assert.equal(await fetchAnswer(keys.decks, id), unknown, id);
  assert.match(await fetchAnswer(keys.decks, ""), /Give the `id` of a result from `search`\./);
  // The key reading one paper sees that paper, and nothing of the decks.
  const own = JSON.parse(await fetchAnswer(keys.single, `${docs.tracemonkey}:1`));
  assert.equal(own.result.isError, false);
  assert.equal(await fetchAnswer(keys.single, `${docs.apache}:1`), unknown);
  // A key with nothing finds nothing and reads nothing.
  assert.equal((await search(keys.empty, "Apache")).raw, '{"results":[]}');
  assert.equal(await fetchAnswer(keys.empty, `${docs.apache}:1`), unknown);
  // Search with the decks key: only its documents, whatever the words.
  for (const query of ["TraceMonkey trace compilation", "Apache tuning", "MarkItDown chart table"]) {
    for (const result of (await search(keys.decks, query)).results) {
      assert.ok(
        [docs.apache, docs.aascu].includes(result.id.split(":")[0]!),
        `${query}: ${result.id} is outside the decks key`,
      );
    }
  }
});

Deno.test("audit: one McpCalled entry per call, naming the shape; the reference's entries do not change", async () => {
  const before = fixture.auditEvents().length;
  const headers = { "x-sergo-end-user": "Dana Reyes" };
  await callTool(chatgpt, keys.decks, "search", { query: "Apache tuning" }, headers);
  await callTool(chatgpt, keys.decks, "fetch", { id: `${docs.apache}:2` }, headers);
  await callTool(chatgpt, keys.decks, "fetch", { id: `${docs.tracemonkey}:1` }, headers);
  await callTool(chatgpt, keys.decks, "fetch", { id: "ZZZZZZZZ:1" }, headers);
  await callTool(chatgpt, keys.decks, "read_document", { document_id: docs.apache }, headers);
  await post(chatgpt, keys.decks, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  await callTool(reference, keys.decks, "search", { query: "Apache tuning" }, headers);
  const events = fixture.auditEvents().slice(before).map((e) => e.data);
  assert.equal(events.length, 6, "one per tool call, none for tools/list");
  const [found, read, outside, unknown, notHere, plain] = events;
  assert.equal(found!.shape, "chatgpt");
  assert.equal(found!.tool, "search");
  assert.equal(found!.action, "mcp search");
  assert.deepEqual(found!.arguments, { query: "Apache tuning" });
  assert.equal(found!.details.query, "Apache tuning");
  assert.ok((found!.details.results as number) > 0);
  assert.equal(found!.end_user, "Dana Reyes");
  assert.equal(read!.shape, "chatgpt");
  assert.equal(read!.action, "mcp text read");
  assert.deepEqual(read!.arguments, { id: `${docs.apache}:2` });
  assert.equal(read!.details.file, "apache-performance-tuning-notes.pptx");
  assert.equal(read!.details.page, 2);
  // Out of scope and unknown leave the same details: the audit does not tell them apart either.
  assert.deepEqual(outside!.details, { id: `${docs.tracemonkey}:1`, error: unknown!.details.error });
  assert.deepEqual(unknown!.details, { id: "ZZZZZZZZ:1", error: unknown!.details.error });
  assert.equal(notHere!.action, "mcp unknown tool", "the reference's tools are not on this shape");
  assert.equal(notHere!.details.error, "No tool named 'read_document'.");
  assert.equal(plain!.shape, undefined, "an entry of /mcp carries no shape");
  assert.ok(!("shape" in plain!));
  // The audit view (the console's audit page, the API's /api/audit) says which shape answered.
  fixture.app.settle();
  const view = queryAudit(fixture.db, { personId: world.ava, keyId: world.keyIds.decks, limit: 6 }).entries;
  assert.deepEqual(view.map((entry) => [entry.action, entry.details.shape ?? null]), [
    ["mcp search", null],
    ["mcp unknown tool", "chatgpt"],
    ["mcp text read", "chatgpt"],
    ["mcp text read", "chatgpt"],
    ["mcp text read", "chatgpt"],
    ["mcp search", "chatgpt"],
  ]);
});

Deno.test("2026-07-28 on the ChatGPT shape: discovery with its instructions, headers checked against the body", async () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
  };
  const modern = { "mcp-protocol-version": "2026-07-28" };
  const discover = await post(chatgpt, keys.decks, {
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: { _meta: meta },
  }, { ...modern, "mcp-method": "server/discover" });
  const found = await discover.json();
  assert.equal(discover.status, 200);
  assert.match(found.result.instructions, /Use `fetch` with an id/);
  assert.equal(found.result.ttlMs, 0);
  assert.equal(found.result.cacheScope, "private");
  const call = (name: string, header: string) =>
    post(chatgpt, keys.decks, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name, arguments: { query: "Apache" }, _meta: meta },
    }, { ...modern, "mcp-method": "tools/call", "mcp-name": header });
  const ok = await (await call("search", "search")).json();
  assert.equal(ok.result.resultType, "complete");
  assert.deepEqual(Object.keys(JSON.parse(ok.result.content[0].text)), ["results"]);
  const mismatch = await call("search", "fetch");
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  // A version it does not speak: 400 and -32022 for the request's id, naming what server/discover names.
  const future = await post(chatgpt, keys.decks, {
    jsonrpc: "2.0",
    id: 301,
    method: "server/discover",
    params: { _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
  }, { "mcp-protocol-version": "2099-01-01", "mcp-method": "server/discover" });
  assert.equal(future.status, 400);
  const refused = await future.json();
  assert.equal(refused.id, 301);
  assert.equal(refused.error.code, -32022);
  assert.deepEqual(refused.error.data, {
    supported: found.result.supportedVersions,
    requested: "2099-01-01",
  });
});

Deno.test("Word files: the title names the page's section", async () => {
  const ava = (fixture.db.prepare("SELECT person_id FROM cat_people WHERE name = 'Ava Bennett'").get() as {
    person_id: string;
  }).person_id;
  const folder = await fixture.folder(ava, "Reports");
  const report = await fixture.document(ava, folder, "docx/docling-word-sample.docx");
  const { value } = await fixture.agentKey(ava, "reports", "Reports.", { folders: [folder], documents: [] });
  const sections = fixture.db.prepare(
    "SELECT page, section, text FROM cat_chunks WHERE document_id = ? AND section IS NOT NULL ORDER BY ord",
  ).all(report) as Array<{ page: number; section: string; text: string }>;
  assert.ok(sections.length > 0, "the corpus file has headings");
  const first = sections[0]!;
  const page = JSON.parse(
    (await callTool(chatgpt, value, "fetch", { id: `${report}:${first.page}` })).content[0]!.text!,
  );
  assert.equal(page.title, `docling-word-sample.docx — page ${first.page} (${first.section})`);
  assert.equal(page.metadata.section, first.section);
  const word = first.text.split(/\W+/).find((w) => w.length >= 6)!;
  const { results } = await search(value, word);
  assert.ok(results.length > 0, word);
  assert.equal(
    new Set(results.map((r) => r.id)).size,
    results.length,
    "a page with several pieces comes once",
  );
  for (const result of results) {
    const [, number] = result.id.split(":");
    const section = sections.find((s) => s.page === Number(number))?.section;
    assert.equal(
      result.title,
      section
        ? `docling-word-sample.docx — page ${number} (${section})`
        : `docling-word-sample.docx — page ${number}`,
    );
  }
});
