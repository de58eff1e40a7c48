/**
 * Whether projection rows may have changed since a reader last looked, for
 * caches of what is read on every call (a key's credential and scope, a
 * key's server texts): a count of the batches each projection applied
 * through this connection, and SQLite's `data_version`, which moves when
 * another connection — a CLI command sharing the file — commits. When
 * neither moved, no row of those projections changed.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";

const applied = new WeakMap<DatabaseSync, Map<string, number>>();
const dataVersions = new WeakMap<DatabaseSync, StatementSync>();

/** Records that `projection` changed rows through `db` (called by the projector after each commit). */
export function noteApplied(db: DatabaseSync, projection: string): void {
  let counts = applied.get(db);
  if (!counts) applied.set(db, counts = new Map());
  counts.set(projection, (counts.get(projection) ?? 0) + 1);
}

/**
 * How many batches changed rows of `projections` through `db`: cheap, but
 * blind to other connections (see {@linkcode dataVersion}).
 */
export function appliedCount(db: DatabaseSync, projections: readonly string[]): number {
  const counts = applied.get(db);
  let total = 0;
  for (const name of projections) total += counts?.get(name) ?? 0;
  return total;
}

/** SQLite's `data_version` of `db`: it moves when another connection commits to the file. */
export function dataVersion(db: DatabaseSync): number {
  let statement = dataVersions.get(db);
  if (!statement) dataVersions.set(db, statement = db.prepare("PRAGMA data_version"));
  return (statement.get() as { data_version: number }).data_version;
}
