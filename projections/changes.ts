/**
 * Whether projection rows may have changed since a reader last looked, for
 * caches of what is read on every call (a key's credential and scope, a
 * key's server texts): a count of the batches each projection applied
 * through this connection, and SQLite's `data_version`, which moves when
 * another connection — a CLI command sharing the file, or the audit view's
 * thread — commits, and the projections' stored checkpoints, which tell the
 * two apart ({@linkcode checkpointsStamp}). When neither moved, no row of
 * those projections changed.
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

const stamps = new WeakMap<DatabaseSync, Map<number, StatementSync>>();

/**
 * The stored checkpoints of `projections`, as one text. A projection's
 * checkpoint is written with every batch that changes its rows (projector.ts),
 * so when another connection committed (`data_version` moved) and this text
 * did not, none of their rows changed: the commit was another projection's,
 * such as the audit view's thread storing MCP calls' entries.
 */
export function checkpointsStamp(db: DatabaseSync, projections: readonly string[]): string {
  let byCount = stamps.get(db);
  if (!byCount) stamps.set(db, byCount = new Map());
  let statement = byCount.get(projections.length);
  if (!statement) {
    const names = projections.map(() => "?").join(", ");
    statement = db.prepare(
      `SELECT group_concat(name || ':' || position, ' ') AS stamp FROM (SELECT name, position FROM projection_checkpoints WHERE name IN (${names}) ORDER BY name)`,
    );
    byCount.set(projections.length, statement);
  }
  return (statement.get(...projections) as { stamp: string | null }).stamp ?? "";
}
