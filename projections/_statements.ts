/**
 * Prepared statements cached per database, so hot queries (key look-ups on
 * every MCP request, catalogue reads, the search ranking's queries) are
 * prepared once, not per call.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";

const caches = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** Most statements kept per database; queries built from filters vary, so the cache is bounded. */
const MAX_CACHED = 500;

/** How a statement gives its rows. */
export interface StatementOptions {
  /** Each row as an array of its columns instead of an object (for queries of many rows). */
  arrays?: boolean;
}

/** The prepared statement for `sql` on `db`, prepared on first use. */
export function statement(db: DatabaseSync, sql: string, options: StatementOptions = {}): StatementSync {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  // The same query giving arrays is a statement of its own.
  const key = options.arrays ? `arrays\u0000${sql}` : sql;
  let prepared = cache.get(key);
  if (!prepared) {
    prepared = db.prepare(sql);
    // In Deno's node:sqlite (as in Node's since 24), not yet in its types.
    if (options.arrays) {
      (prepared as StatementSync & { setReturnArrays(on: boolean): void }).setReturnArrays(true);
    }
    if (cache.size < MAX_CACHED) cache.set(key, prepared);
  }
  return prepared;
}
