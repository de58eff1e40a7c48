/**
 * Planted bugs for the ChatGPT-shaped server, tool titles and the 2026-07-28
 * version answer (issue 29), in the form of `mutations.ts`.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const CHATGPT = "test/mcp/chatgpt_test.ts";
const CHATGPT_E2E = "test/e2e/chatgpt_oauth_test.ts";
const TITLES = "test/mcp/tool_titles_test.ts";
const ENDPOINT = "test/mcp/endpoint_test.ts";

/** The entries. */
export const MUTATIONS_CHATGPT: Mutation[] = [
  {
    name: "chatgpt fetch: no scope check",
    file: "src/mcp/chatgpt/fetch.ts",
    from: "if (!inScope(context.scope, document)) return unknown;",
    to: "if (!document) return unknown;",
    tests: [CHATGPT],
  },
  {
    name: "chatgpt fetch: a page past the end is not an unknown id",
    file: "src/mcp/chatgpt/fetch.ts",
    from: "if (wanted.page > pages) return unknown;",
    to: "if (wanted.page > pages + 1) return unknown;",
    tests: [CHATGPT],
  },
  {
    name: "chatgpt search: a page twice",
    file: "src/mcp/chatgpt/search.ts",
    from: "if (seen.has(id)) return false;",
    to: "if (seen.has(id) && false) return false;",
    tests: [CHATGPT],
  },
  {
    name: "chatgpt search: no per-document cap",
    file: "src/mcp/chatgpt/search.ts",
    from: "pageOfPassages(bestPerPage(visible), SEARCH_RESULTS, 0)",
    to: "pageOfPassages(bestPerPage(visible), SEARCH_RESULTS * 2, 0)",
    tests: [CHATGPT],
  },
  {
    name: "chatgpt: audit entries name no shape",
    file: "src/mcp/tool_call.ts",
    from: "...(shape ? { shape: shape.name, action: shape.auditAction(name) } : {}),",
    to: "...(shape ? { action: shape.auditAction(name) } : {}),",
    tests: [CHATGPT, CHATGPT_E2E],
  },
  {
    name: "oauth: /chatgpt/mcp's resource is /mcp's",
    file: "src/auth/oauth/_shared.ts",
    from: 'if (path.startsWith("/chatgpt/")) return "/chatgpt/mcp";',
    to: 'if (path.startsWith("/chatgpt/")) return "/mcp";',
    tests: [CHATGPT_E2E],
  },
  {
    name: "tool titles on by default",
    file: "src/mcp/settings.ts",
    from: "toolTitles: false,",
    to: "toolTitles: true,",
    tests: [TITLES, "test/mcp/reference_bytes_test.ts"],
  },
  {
    name: "unsupported protocol version: -32600 again",
    file: "src/mcp/endpoint.ts",
    from: "const UNSUPPORTED_PROTOCOL_VERSION = -32022;",
    to: "const UNSUPPORTED_PROTOCOL_VERSION = -32600;",
    tests: [ENDPOINT],
  },
];
