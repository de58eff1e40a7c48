/**
 * The event log: types, the store interface, the SQLite store and the hash chain.
 *
 * @module
 */
export * from "./types.ts";
export * from "./store.ts";
export * from "./sqlite_store.ts";
export * from "./hash_chain.ts";
export * from "./json_depth.ts";
