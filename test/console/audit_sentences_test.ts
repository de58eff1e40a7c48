/**
 * The audit page's sentences, as a person reads them: what was searched or
 * read, how many results, which file and page, and whether the call came
 * through the ChatGPT-shaped server.
 */
import assert from "node:assert/strict";
import { auditError, auditSentence } from "../../src/console/audit_sentences.ts";

Deno.test("an MCP search reads as its query and its number of results", () => {
  assert.equal(
    auditSentence({ action: "mcp search", details: { query: "heat pumps", results: 4, tool: "search" } }),
    "mcp search — 'heat pumps', 4 results",
  );
  assert.equal(
    auditSentence({ action: "mcp text read", details: { file: "deck.pptx", pages: "pages 17-18" } }),
    "mcp text read — deck.pptx, pages 17-18",
  );
});

Deno.test("a call through the ChatGPT-shaped server says so, with the tool it called", () => {
  assert.equal(
    auditSentence({
      action: "mcp search",
      details: { query: "heat pumps", results: 2, tool: "search", shape: "chatgpt" },
    }),
    "mcp search — 'heat pumps', 2 results, through ChatGPT's search",
  );
  assert.equal(
    auditSentence({
      action: "mcp text read",
      details: { file: "report.pdf", tool: "fetch", shape: "chatgpt" },
    }),
    "mcp text read — report.pdf, through ChatGPT's fetch",
  );
});

Deno.test("an entry that records an error gives its reason; one that does not gives none", () => {
  assert.deepEqual(
    auditError({ action: "mcp page viewed", details: { is_error: true, error: "Page 9 does not exist." } }),
    { reason: "Page 9 does not exist." },
  );
  assert.equal(auditError({ action: "mcp page viewed", details: { is_error: false, page: 2 } }), null);
});
