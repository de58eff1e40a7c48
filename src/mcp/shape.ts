/**
 * A shape of a key's MCP server besides the reference's: the tools it
 * offers, what it says about itself, and how its calls are audited. The
 * reference's shape (`/mcp`) is the default and has no `McpShape`; the
 * ChatGPT shape (`/chatgpt/mcp`, see `chatgpt/shape.ts`) is one. Every shape
 * runs on the same endpoint: the same key check, scope, rate limit and
 * audit log.
 *
 * @module
 */
import type { Arguments } from "./arguments.ts";
import type { KeyTexts } from "./texts.ts";
import type { KeyDefinitions } from "./tool_definitions.ts";
import type { Tool } from "./tools/tool.ts";

/** A server shape other than the reference's. */
export interface McpShape {
  /** The shape's name, written into each call's audit entry (`McpCalled.data.shape`). */
  name: "chatgpt";
  /** The tools, by name. */
  tools: ReadonlyMap<string, Tool>;
  /** What a key's server of this shape says about itself. */
  definitions(key: KeyTexts, version: string): KeyDefinitions;
  /** The audit action of a call, such as `mcp search`. */
  auditAction(tool: string): string;
  /** What the audit entry keeps of a call's arguments (only those the tool takes, capped). */
  auditArguments(tool: string, args: Arguments): Record<string, unknown>;
}
