/**
 * The ChatGPT shape of a key's server, served at `/chatgpt/mcp`: OpenAI's
 * two tools `search(query)` and `fetch(id)` over the key's scope, audited
 * like the reference's tools with `shape: "chatgpt"` in each entry.
 *
 * @module
 */
import type { Arguments } from "../arguments.ts";
import { auditArguments } from "../limits.ts";
import type { McpShape } from "../shape.ts";
import { AUDIT_ACTIONS } from "../texts.ts";
import { chatgptDefinitions } from "./definitions.ts";
import { chatgptFetchTool } from "./fetch.ts";
import { chatgptSearchTool } from "./search.ts";

/** The path of the ChatGPT-shaped server. */
export const CHATGPT_PATH = "/chatgpt/mcp";

/** `search` is audited as the reference's `mcp search`, `fetch` as a page read, `mcp text read`. */
const ACTIONS: Readonly<Record<string, string>> = {
  search: AUDIT_ACTIONS.search,
  fetch: AUDIT_ACTIONS.read_document,
};

/** The ChatGPT shape. */
export const CHATGPT_SHAPE: McpShape = {
  name: "chatgpt",
  tools: new Map([chatgptSearchTool, chatgptFetchTool].map((tool) => [tool.name, tool])),
  definitions: chatgptDefinitions,
  auditAction: (tool) => Object.hasOwn(ACTIONS, tool) ? ACTIONS[tool]! : "mcp unknown tool",
  auditArguments(tool: string, args: Arguments): Record<string, unknown> {
    if (tool === "search") return auditArguments("search", { query: args.query });
    if (tool === "fetch") {
      // Only the one argument `fetch` takes, capped as every string argument is.
      return args.id === undefined
        ? {}
        : { id: auditArguments("read_document", { document_id: args.id }).document_id };
    }
    return {};
  },
};
