/**
 * The projection digest: one sha256 over the ordered content of every
 * projection table, so the same log always gives the same digest.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import type { Projection } from "./projection.ts";

/** Computes the digest of every projection's tables in `db`. */
export function projectionDigest(db: DatabaseSync, projections: readonly Projection[]): string {
  const hash = createHash("sha256");
  const tables = projections.flatMap((projection) =>
    projection.tables.map((table) => `${projection.name}.${table}`)
  );
  for (const qualified of tables.sort()) {
    const table = qualified.slice(qualified.indexOf(".") + 1);
    const columns =
      (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>)
        .map((column) => `"${column.name}"`);
    if (columns.length === 0) throw new Error(`Cannot digest "${table}": no such table`);
    hash.update(`\u0000table ${table}\u0000`);
    const statement = db.prepare(
      `SELECT ${columns.join(", ")} FROM "${table}" ORDER BY ${columns.join(", ")}`,
    );
    for (const row of statement.iterate()) {
      hash.update(JSON.stringify(Object.values(row as Record<string, unknown>), binaryAware));
      hash.update("\n");
    }
  }
  return hash.digest("hex");
}

function binaryAware(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return `bytes:${btoa(String.fromCharCode(...value))}`;
  if (typeof value === "bigint") return value.toString();
  return value;
}
