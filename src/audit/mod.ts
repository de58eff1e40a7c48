/**
 * The audit export, its verification, the signing key, and the CLI and API
 * entry points.
 *
 * @module
 */
export * from "./export.ts";
export * from "./verify.ts";
export * from "./signing_key.ts";
export * from "./merkle.ts";
export * from "./cli.ts";
export * from "./routes.ts";
