/**
 * What the console is handed when the server is composed
 * (`src/server/services.ts` builds it): the app, the settings its pages read,
 * the sign-in throttle, and the MCP dependencies its search runs through.
 *
 * @module
 */
import type { SergoApp } from "../app.ts";
import type { Config } from "../config.ts";
import type { McpDeps } from "../mcp/endpoint.ts";
import type { SignInCounter } from "./sign_in_throttle.ts";

/** The settings the console reads. */
export type ConsoleConfig = Pick<
  Config,
  "publicUrl" | "oauth" | "maxUploadBytes" | "trustedProxies" | "dataDir" | "databaseUrl" | "dictionaryDir"
>;

/** What the console is built over. */
export interface ConsoleDeps {
  app: SergoApp;
  config: ConsoleConfig;
  /** Counts failed sign-ins: in PostgreSQL for all replicas on one, else in this process's memory. */
  signInThrottle: SignInCounter;
  /** What the console's search runs the MCP search tool with (its settings, semantic search). */
  mcpDeps: McpDeps;
}
