/**
 * Prepared statements cached per database, so hot queries (key look-ups on
 * every MCP request, catalogue reads) are prepared once, not per call.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";

const caches = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** Most statements kept per database; queries built from filters vary, so the cache is bounded. */
const MAX_CACHED = 500;

/** The prepared statement for `sql` on `db`, prepared on first use. */
export function statement(db: DatabaseSync, sql: string): StatementSync {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    if (cache.size < MAX_CACHED) cache.set(sql, prepared);
  }
  return prepared;
}
