/**
 * `list_documents`, `read_document` and `view_page` on real corpus files.
 */
import assert from "node:assert/strict";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { createRenderPool } from "../../src/render/render_pool.ts";
import { PageViews } from "../../src/render/page_cache.ts";
import { callTool } from "./_fixture.ts";
import { buildWorldEndpoint } from "./_world.ts";

const world = await buildWorldEndpoint();
const { fixture, keys, docs, endpoint } = world;

async function tool(key: string, name: string, args: Record<string, unknown>) {
  return await callTool(endpoint, key, name, args);
}
function json(result: { content: Array<Record<string, string>> }): Record<string, unknown> {
  return JSON.parse(result.content[0]!.text!);
}
const NOT_FOUND = {
  content: [{
    text: "Not found, or not yours to see — the two are deliberately indistinguishable",
    type: "text",
  }],
  isError: true,
};

Deno.test("list_documents: newest first, with the reference's fields and status", async () => {
  const result = await tool(keys.all, "list_documents", {});
  assert.equal(result.isError, false);
  const body = json(result) as { total: number; items: Array<Record<string, unknown>> };
  assert.equal(body.total, 5);
  assert.deepEqual(body.items.map((i) => i.document_id), [
    docs.pending,
    docs.apache,
    docs.aascu,
    docs.markitdown,
    docs.tracemonkey,
  ]);
  assert.deepEqual(Object.keys(body.items[1]!), [
    "document_id",
    "document",
    "folder",
    "type",
    "pages",
    "pages_to_view",
    "uploaded",
  ]);
  assert.equal(body.items[1]!.type, "pptx");
  assert.equal(body.items[1]!.pages, 48);
  assert.match(body.items[1]!.uploaded as string, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(body.items[0]!.status, "processing");
  assert.equal(body.items[0]!.pages, undefined);
  assert.equal(body.items[4]!.folder, "Ava Bennett's documents/Papers");
});

Deno.test("list_documents: next_offset, folders, nothing past, no documents, ranges", async () => {
  const first = json(await tool(keys.all, "list_documents", { limit: 2 }));
  assert.deepEqual(Object.keys(first), ["total", "next_offset", "items"]);
  assert.equal(first.next_offset, 2);
  const last = json(await tool(keys.all, "list_documents", { limit: 2, offset: 4 }));
  assert.equal(last.next_offset, undefined);
  const basic = json(await tool(keys.all, "list_documents", { folders: ["Basic"] })) as { total: number };
  assert.equal(basic.total, 3);
  assert.deepEqual((await tool(keys.all, "list_documents", { offset: 5 })).content, [{
    text: "Nothing past this point.",
    type: "text",
  }]);
  assert.deepEqual(await tool(keys.empty, "list_documents", {}), {
    content: [{ text: "No documents here.", type: "text" }],
    isError: false,
  });
  const single = json(await tool(keys.single, "list_documents", {})) as {
    items: Array<{ document_id: string }>;
  };
  assert.deepEqual(single.items.map((i) => i.document_id), [docs.tracemonkey]);
  // Files the key reads on their own are left out when narrowing by folder.
  assert.equal((await tool(keys.single, "list_documents", { folders: ["Papers"] })).isError, true);
  const limit = await tool(keys.all, "list_documents", { limit: 0 });
  assert.deepEqual(limit, {
    content: [{ text: "`limit` must be a whole number from 1 to 100.", type: "text" }],
    isError: true,
  });
  const offset = await tool(keys.all, "list_documents", { offset: -1 });
  assert.equal(offset.content[0]!.text, "`offset` must be a whole number, 0 or more.");
  // A number too large to be exact (and to bind in SQLite) gets the range error, not an internal one.
  const huge = await tool(keys.all, "list_documents", { offset: 1e300 });
  assert.deepEqual(huge, {
    content: [{ text: "`offset` must be a whole number from 0 to 9007199254740991.", type: "text" }],
    isError: true,
  });
});

Deno.test("read_document: one page, with the mark sentence, fields in the reference's order", async () => {
  const pages = fixture.db.prepare("SELECT page, marked FROM cat_pages WHERE document_id = ? ORDER BY page")
    .all(docs.apache) as Array<
      { page: number; marked: number }
    >;
  const marked = pages.find((p) => p.marked === 1)!.page;
  const body = json(await tool(keys.all, "read_document", { document_id: docs.apache, page: marked }));
  assert.deepEqual(Object.keys(body), [
    "document",
    "folder",
    "page",
    "pages",
    "pages_to_view",
    "view_page_may_help",
    "text",
  ]);
  assert.equal(
    body.view_page_may_help,
    "This page's text may miss a figure, chart or table — `view_page` shows it",
  );
  assert.equal(body.pages, 48);
  const plain = pages.find((p) => p.marked === 0)!.page;
  const plainBody = json(await tool(keys.all, "read_document", { document_id: docs.apache, page: plain }));
  assert.equal(plainBody.view_page_may_help, undefined);
});

Deno.test("read_document: a range under headings with the marks", async () => {
  const body = json(
    await tool(keys.all, "read_document", { document_id: docs.markitdown, page: 1, to_page: 3 }),
  );
  assert.deepEqual(Object.keys(body), ["document", "folder", "pages", "pages_read", "pages_to_view", "text"]);
  assert.equal(body.pages_read, "1-3");
  const text = body.text as string;
  assert.match(text, /^--- page 1 ---\n/);
  assert.match(
    text,
    /\n\n--- page 2 \(view_page may help — the text may miss a figure, chart or table\) ---\n/,
  );
  // A range stops at the last page.
  const tail = json(
    await tool(keys.all, "read_document", { document_id: docs.markitdown, page: 5, to_page: 40 }),
  );
  assert.equal(tail.pages_read, "5-6");
});

Deno.test("read_document: the whole document by whole pages up to 24,000 characters", async () => {
  const small = json(await tool(keys.all, "read_document", { document_id: docs.markitdown }));
  assert.equal(small.pages_read, undefined);
  assert.equal(small.more, undefined);
  assert.equal(small.page, undefined);
  const big = json(await tool(keys.all, "read_document", { document_id: docs.tracemonkey }));
  const text = big.text as string;
  assert.ok(text.length <= 24_000, `text is ${text.length} characters`);
  const [, last] = /^1-(\d+)$/.exec(big.pages_read as string)!;
  assert.equal(big.more, `Pages ${Number(last) + 1}-14 not included — ask for a page to read on`);
  assert.ok(text.includes(`--- page ${last}`));
  assert.ok(!text.includes(`--- page ${Number(last) + 1}`));
  const keysOrder = Object.keys(big);
  assert.deepEqual(keysOrder, ["document", "folder", "pages", "pages_read", "pages_to_view", "text", "more"]);
});

Deno.test("read_document: errors and empty documents", async () => {
  assert.deepEqual(await tool(keys.all, "read_document", { document_id: docs.markitdown, page: 7 }), {
    content: [{ text: "This document has 6 pages", type: "text" }],
    isError: true,
  });
  assert.deepEqual(
    await tool(keys.all, "read_document", { document_id: docs.markitdown, page: 3, to_page: 2 }),
    {
      content: [{ text: "`to_page` must not be before `page`", type: "text" }],
      isError: true,
    },
  );
  assert.deepEqual(await tool(keys.all, "read_document", { document_id: docs.bobs }), NOT_FOUND);
  assert.deepEqual(await tool(keys.all, "read_document", { document_id: "nope1234" }), NOT_FOUND);
  // The audit says why, in the same words: "Not found, or not yours to see — …".
  const audited = fixture.auditEvents().at(-1)!.data;
  assert.equal(audited.is_error, true);
  assert.equal(audited.details.error, NOT_FOUND.content[0]!.text);
  assert.deepEqual(
    await tool(keys.decks, "read_document", { document_id: docs.tracemonkey, page: 1 }),
    NOT_FOUND,
  );
  const missing = await tool(keys.all, "read_document", {});
  assert.equal(missing.isError, true);
  assert.equal(
    missing.content[0]!.text,
    "`document_id` is required — use an id from `search` or `list_documents`.",
  );
  const page0 = await tool(keys.all, "read_document", { document_id: docs.markitdown, page: 0 });
  assert.equal(page0.content[0]!.text, "`page` must be a whole number, 1 or more.");
  const pending = await tool(keys.all, "read_document", { document_id: docs.pending });
  assert.equal(pending.isError, true);
});

Deno.test("view_page: the reference's messages for files without a page view", async () => {
  assert.deepEqual(await tool(keys.all, "view_page", { document_id: docs.aascu, page: 1 }), {
    content: [{
      text:
        "No page view for this file — it was read without a PDF copy. A person can make one in the console (Make a PDF copy).",
      type: "text",
    }],
    isError: true,
  });
  const pending = await tool(keys.all, "view_page", { document_id: docs.apache, page: 1 });
  assert.equal(pending.isError, true);
  assert.match(pending.content[0]!.text!, /still being made/);
  assert.deepEqual(await tool(keys.all, "view_page", { document_id: docs.tracemonkey, page: 15 }), {
    content: [{ text: "This document has 14 pages", type: "text" }],
    isError: true,
  });
  assert.deepEqual(await tool(keys.all, "view_page", { document_id: docs.bobs, page: 1 }), NOT_FOUND);
  const format = await tool(keys.all, "view_page", { document_id: docs.tracemonkey, page: 1, format: "gif" });
  assert.equal(format.content[0]!.text, '`format` must be "image" or "pdf".');
  const noPage = await tool(keys.all, "view_page", { document_id: docs.tracemonkey });
  assert.equal(noPage.isError, true);
});

Deno.test("view_page: a PNG and a one-page PDF drawn from the real PDF", async () => {
  const pool = createRenderPool({ concurrency: 1 });
  try {
    const views = createMcpEndpoint({
      db: fixture.db,
      store: fixture.store,
      pageViews: new PageViews(fixture.blobs, pool),
    });
    const image = await callTool(views, keys.all, "view_page", { document_id: docs.tracemonkey, page: 2 });
    assert.equal(image.isError, false);
    assert.deepEqual(image.content[0], { text: "tracemonkey-pldi-paper.pdf — page 2 of 14", type: "text" });
    assert.equal(image.content[1]!.type, "image");
    assert.equal(image.content[1]!.mimeType, "image/png");
    assert.ok(image.content[1]!.data!.startsWith("iVBORw0KGgo"));
    const pdf = await callTool(views, keys.all, "view_page", {
      document_id: docs.tracemonkey,
      page: 2,
      format: "pdf",
    });
    const resource = pdf.content[1] as unknown as {
      type: string;
      resource: { uri: string; mimeType: string; blob: string };
    };
    assert.equal(resource.type, "resource");
    assert.equal(resource.resource.uri, `sergo://documents/${docs.tracemonkey}/pages/2.pdf`);
    assert.equal(resource.resource.mimeType, "application/pdf");
    assert.ok(resource.resource.blob.startsWith("JVBERi"));
  } finally {
    pool.close();
  }
});

Deno.test("an unknown tool answers a result with isError", async () => {
  const response = await endpoint(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.all}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 16,
        method: "tools/call",
        params: { name: "summarize", arguments: {} },
      }),
    }),
  );
  assert.equal(
    await response.text(),
    '{"jsonrpc":"2.0","id":16,"result":{"content":[{"text":"No tool named \'summarize\'.","type":"text"}],"isError":true}}',
  );
});
