/**
 * The console: the web pages where people manage documents, keys and the
 * audit, served by `serve` at `/`.
 *
 * @module
 */
export { type ConsoleHandler, type ConsoleOptions, createConsole } from "./console.ts";
export { oauthPages } from "./oauth_pages.ts";
