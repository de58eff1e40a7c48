/** The console's excerpts: the query's words marked, chart-label lines left out, a long excerpt cut. */
import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { markWords, queryStems, shownExcerpt } from "../../src/console/excerpt.ts";
import { SearchPage } from "../../src/console/pages/search_page.tsx";

Deno.test("the query's words are marked, including other forms of them", () => {
  const parts = markWords("MarkItDown converts files; converting is quick.", queryStems("converting files"));
  assert.deepEqual(parts.filter((p) => p.mark).map((p) => p.text), ["converts", "files", "converting"]);
});

Deno.test("lines of chart labels are left out, and a long excerpt is cut around its first match", () => {
  const long = `${"Intro words here. ".repeat(60)}The solar capacity grew.\n!\n#\n$!\n${
    "Tail words. ".repeat(60)
  }`;
  const shown = shownExcerpt(long, "solar capacity");
  const text = shown.parts.map((p) => p.text).join("");
  assert.ok(shown.shortened);
  assert.ok(text.length < 500, `${text.length} characters shown`);
  assert.match(text, /^….*solar capacity grew\./s);
  assert.doesNotMatch(text, /^[!#$]+$/m);
});

Deno.test("the search page marks words safely, counts the results and offers the whole excerpt", () => {
  const html = renderToString(SearchPage({
    context: {
      csrf: "x",
      person: { name: "Ava", email: "a@example.com", admin: false },
      path: "/search",
      assetVersion: "1",
    },
    keys: [],
    result: {
      query: "<script> solar",
      asKey: null,
      documents: [{
        document_id: "abcdefgh",
        document: "outlook.pdf",
        folder: "Ava's documents",
        hits: [{ page: 3, excerpt: "<script>alert(1)</script> solar\n$!\n" }, {
          page: 4,
          excerpt: "solar again",
        }],
      }],
      message: null,
      nextOffset: null,
      offset: 0,
    },
  }));
  assert.match(html, /2 excerpts in 1 document/);
  assert.ok(
    html.includes("&lt;<mark>script</mark>>alert(1)&lt;/<mark>script</mark>> <mark>solar</mark>"),
  );
  assert.ok(!html.includes("<script>alert"), "no markup from an excerpt reaches the page");
  assert.match(html, /The whole excerpt, as the agent gets it/);
});
