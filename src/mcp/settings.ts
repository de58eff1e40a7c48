/**
 * The settings of the MCP endpoint, with their defaults.
 *
 * @module
 */
import { VERSION } from "../version.ts";

/** What an install can set for `/mcp`. */
export interface McpSettings {
  /** Origins allowed to call `/mcp`; requests without an Origin header are always fine. */
  allowedOrigins: readonly string[];
  /** Requests per second per key, refilled continuously. */
  rateLimitPerSecond: number;
  /** How many requests a key may make at once before the rate applies. */
  rateLimitBurst: number;
  /** How many passages a search ranks at most. */
  searchDepth: number;
  /** The longest `X-Sergo-End-User` value accepted, in characters. */
  maxEndUserLength: number;
  /** `serverInfo.version`. */
  serverVersion: string;
  /** The largest request body accepted, in bytes (MCP requests are small; this stops floods). */
  maxBodyBytes: number;
  /** The most messages in one batch (2025-03-26 only). */
  maxBatch: number;
  /** How long a request handed to the SDK may wait for its answer, in ms, before it is answered with an error. */
  answerTimeoutMs: number;
  /** How long a request body may take to arrive in full, in ms, before it is answered 408. */
  bodyTimeoutMs: number;
  /**
   * Whether the reference's tools carry `annotations.title` (`SERGO_MCP_TOOL_TITLES`). Off: the
   * reference's `tools/list` has no title. The ChatGPT shape always sends its titles.
   */
  toolTitles: boolean;
  /**
   * The console's public address, for the links in ChatGPT-shaped answers (`SERGO_PUBLIC_URL`);
   * null: the address the request came to.
   */
  publicUrl: string | null;
}

/** The defaults: no origins, 50 calls/s with bursts of 200, search depth 50. */
export const DEFAULT_MCP_SETTINGS: McpSettings = {
  allowedOrigins: [],
  rateLimitPerSecond: 50,
  rateLimitBurst: 200,
  searchDepth: 50,
  maxEndUserLength: 200,
  serverVersion: VERSION,
  maxBodyBytes: 1_000_000,
  maxBatch: 50,
  answerTimeoutMs: 60_000,
  bodyTimeoutMs: 30_000,
  toolTitles: false,
  publicUrl: null,
};

/** The settings with defaults filled in. */
export function mcpSettings(partial: Partial<McpSettings> = {}): McpSettings {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_MCP_SETTINGS, ...defined };
}
