/**
 * `search`: grouping, the per-document cap, offsets, depth, folders by name,
 * path and value, scope, single-file keys and the messages.
 */
import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { pageOfPassages } from "../../src/mcp/tools/search.ts";
import { getAgentKey } from "../../projections/key_scopes.ts";
import { callTool } from "./_fixture.ts";
import { buildWorldEndpoint } from "./_world.ts";

const world = await buildWorldEndpoint();
const { fixture, keys, docs, endpoint } = world;

interface Group {
  document_id: string;
  document: string;
  folder: string;
  image_only_pages?: number[];
  hits: Array<{ page?: number; view_page_may_help?: true; excerpt: string }>;
}

async function search(key: string, args: Record<string, unknown>) {
  const result = await callTool(endpoint, key, "search", args);
  const text = result.content[0]!.text!;
  return { result, text, groups: text.startsWith("[") ? JSON.parse(text) as Group[] : [] };
}

Deno.test("search groups excerpts by document, best first, compact, with the reference's fields", async () => {
  const { result, text, groups } = await search(keys.all, { query: "Apache performance tuning" });
  assert.equal(result.isError, false);
  assert.equal(text, JSON.stringify(groups));
  assert.equal(groups[0]!.document_id, docs.apache);
  assert.equal(groups[0]!.document, "apache-performance-tuning-notes.pptx");
  assert.equal(groups[0]!.folder, "Ava Bennett's documents/Decks/Basic");
  assert.deepEqual(Object.keys(groups[0]!), ["document_id", "document", "folder", "hits"]);
  for (const hit of groups[0]!.hits) {
    assert.equal(typeof hit.page, "number");
    assert.deepEqual(
      Object.keys(hit),
      hit.view_page_may_help ? ["page", "view_page_may_help", "excerpt"] : ["page", "excerpt"],
    );
  }
  // Bob's copy of the same deck is never found with Ava's key.
  assertAll(groups, (g) => g.document_id !== docs.bobs);
});

Deno.test("search takes at most half of limit, rounded up, from one document, and pages with offset", async () => {
  const seen = new Set<string>();
  let offset = 0;
  let pages = 0;
  for (;;) {
    const { result, groups } = await search(keys.decks, {
      query: "Apache server performance requests",
      limit: 3,
      offset,
    });
    if (result.content[0]!.text === "Nothing past this point.") break;
    pages++;
    assert.ok(pages <= 100, "paging never ends: 100 pages of 3 excerpts, and still more offered");
    let count = 0;
    for (const group of groups) {
      assert.ok(group.hits.length <= 2, `at most 2 of 3 from ${group.document}`);
      for (const hit of group.hits) {
        const id = `${group.document_id}:${hit.page}:${hit.excerpt.slice(0, 40)}`;
        assert.ok(!seen.has(id), `excerpt shown twice: ${id}`);
        seen.add(id);
        count++;
      }
    }
    offset += count;
    const more = result.content[1]?.text;
    if (!more) break;
    assert.equal(more, `More excerpts past these: search again with offset ${offset}.`);
  }
  assert.ok(pages >= 2, "more than one page of results");
});

Deno.test("the paging rule keeps the rank order and defers what the cap holds back", () => {
  const ranked = ["a", "a", "a", "b", "a", "c"].map((document_id, i) => ({ document_id, i }));
  const first = pageOfPassages(ranked, 4, 0);
  assert.deepEqual(first.page.map((p) => p.i), [0, 1, 3, 5]);
  assert.equal(first.more, true);
  const second = pageOfPassages(ranked, 4, 4);
  assert.deepEqual(second.page.map((p) => p.i), [2, 4]);
  assert.equal(second.more, false);
  assert.deepEqual(pageOfPassages(ranked, 4, 6).page, []);
});

Deno.test("search depth is a setting: no more passages than it across all offsets", async () => {
  async function total(settings: { searchDepth?: number }): Promise<number> {
    const handler = createMcpEndpoint({ db: fixture.db, store: fixture.store, settings });
    let offset = 0;
    for (let asked = 1;; asked++) {
      assert.ok(asked <= 100, "paging never ends: 100 searches, and still more offered");
      const result = await callTool(handler, keys.all, "search", {
        query: "the performance of the server",
        limit: 20,
        offset,
      });
      if (!result.content[0]!.text!.startsWith("[")) return offset;
      offset += (JSON.parse(result.content[0]!.text!) as Group[]).reduce((n, g) => n + g.hits.length, 0);
      if (result.content.length < 2) return offset;
    }
  }
  assert.equal(await total({ searchDepth: 5 }), 5);
  assert.ok(await total({}) > 20, "the default depth (50) goes past one page");
});

Deno.test("folders: by own name (every folder with that name), by path, by folder value", async () => {
  const byName = await search(keys.all, { query: "AutoGen agents Apache", folders: ["Basic"] });
  const names = new Set(byName.groups.map((g) => g.document));
  assert.ok(names.has("markitdown-test-deck-chart-table.pptx"), "Papers/Basic counts");
  assert.ok(names.has("apache-performance-tuning-notes.pptx"), "Decks/Basic counts");
  const byPath = await search(keys.all, { query: "AutoGen agents Apache", folders: ["Papers/Basic"] });
  assert.deepEqual(
    new Set(byPath.groups.map((g) => g.document)),
    new Set(["markitdown-test-deck-chart-table.pptx"]),
  );
  const byValue = await search(keys.all, {
    query: "AutoGen agents Apache",
    folders: ["Ava Bennett's documents/Decks/Basic"],
  });
  assert.ok(byValue.groups.length > 0);
  assertAll(byValue.groups, (g) => g.folder === "Ava Bennett's documents/Decks/Basic");
  const papers = await search(keys.all, { query: "trace compilation", folders: ["Papers"] });
  assert.ok(papers.groups.some((g) => g.document_id === docs.tracemonkey));
});

Deno.test("folders: an unknown name lists the key's folders, then the ones inside them", async () => {
  const { result } = await search(keys.all, { query: "energy", folders: ["IEO2023"] });
  // The key's folders in the order it keeps them (its tool descriptions list them the same way).
  const names = new Map([[world.folders.decks, "Decks"], [world.folders.papers, "Papers"]]);
  const roots = getAgentKey(fixture.db, world.keyIds.all)!.can_read.folders.map((id) => names.get(id)).join(
    ", ",
  );
  assert.deepEqual(result, {
    content: [{
      text: `No folder named 'IEO2023' here. Use one of: ${roots} — or a folder inside them: Basic`,
      type: "text",
    }],
    isError: true,
  });
  const single = await search(keys.single, { query: "energy", folders: ["Papers"] });
  assert.equal(
    single.result.content[0]!.text,
    "No folder named 'Papers' here — this key reads single files, not folders. Leave folders out.",
  );
  assert.equal(single.result.isError, true);
});

Deno.test("a key that reads single files finds only them", async () => {
  const { groups } = await search(keys.single, { query: "Apache trace performance", limit: 20 });
  assert.ok(groups.length > 0);
  assertAll(groups, (g) => g.document_id === docs.tracemonkey);
});

Deno.test("scope follows the key's access as it changes", async () => {
  const before = await search(keys.decks, { query: "trace-based JIT compilation TraceMonkey", limit: 20 });
  assertAll(before.groups, (g) => g.document_id !== docs.tracemonkey);
  await fixture.changeKey(world.keyIds.decks, {
    can_read: { folders: [world.folders.decks, world.folders.papers], documents: [] },
  });
  const after = await search(keys.decks, { query: "trace-based JIT compilation TraceMonkey", limit: 20 });
  assert.equal(after.groups[0]!.document_id, docs.tracemonkey);
  await fixture.changeKey(world.keyIds.decks, {
    can_read: { folders: [world.folders.decks], documents: [] },
  });
  const again = await search(keys.decks, { query: "trace-based JIT compilation TraceMonkey", limit: 20 });
  assertAll(again.groups, (g) => g.document_id !== docs.tracemonkey);
});

Deno.test("search messages: nothing matched, nothing past, give a query, ranges", async () => {
  assert.deepEqual((await search(keys.all, { query: "zzyzx qwxv" })).result, {
    content: [{ text: "Nothing matched.", type: "text" }],
    isError: false,
  });
  assert.deepEqual((await search(keys.all, { query: "performance", offset: 80 })).result, {
    content: [{ text: "Nothing past this point.", type: "text" }],
    isError: false,
  });
  assert.deepEqual((await search(keys.all, { query: "  " })).result, {
    content: [{ text: "Give a query to search for.", type: "text" }],
    isError: true,
  });
  assert.deepEqual((await search(keys.all, {})).result.content[0]!.text, "Give a query to search for.");
  const limit = (await search(keys.all, { query: "x", limit: 21 })).result;
  assert.deepEqual(limit, {
    content: [{ text: "`limit` must be a whole number from 1 to 20.", type: "text" }],
    isError: true,
  });
  const offset = (await search(keys.all, { query: "x", offset: 81 })).result;
  assert.equal(offset.content[0]!.text, "`offset` must be a whole number from 0 to 80.");
  const type = (await search(keys.all, { query: "x", limit: "5" })).result;
  assert.equal(type.isError, true);
  assert.equal(type.content[0]!.text, "`limit` must be a whole number from 1 to 20.");
});

Deno.test("search marks pages to view on excerpts", async () => {
  const { groups } = await search(keys.all, { query: "Apache", limit: 20 });
  const apache = groups.find((g) => g.document_id === docs.apache)!;
  const marked = JSON.parse(
    (fixture.db.prepare("SELECT pages_to_view FROM cat_documents WHERE document_id = ?").get(docs.apache) as {
      pages_to_view: string;
    }).pages_to_view,
  ) as number[];
  for (const hit of apache.hits) assert.equal(hit.view_page_may_help === true, marked.includes(hit.page!));
});
