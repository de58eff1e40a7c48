/**
 * Sergo's tables and functions in PostgreSQL, created or updated at start-up
 * only when the database does not have them as this code would make them.
 * Running the DDL at every start (as before) cost each replica a transaction
 * under an advisory lock and a commit flushed to disk per part (the log, the
 * blobs, the rate limits): `CREATE OR REPLACE FUNCTION` rewrites its catalog
 * row even when nothing changed. The check compares what the code needs with
 * the catalog itself — every table exists, every function's source is this
 * code's — so a function replaced by another version of Sergo is put back.
 *
 * @module
 */
import type postgres from "postgres";

/** A part of the schema: its DDL (idempotent), the advisory lock it runs under, and what it makes. */
export interface SchemaPart {
  /** `CREATE … IF NOT EXISTS` and `CREATE OR REPLACE FUNCTION … $fn$…$fn$` statements. */
  ddl: string;
  /** The advisory lock two replicas starting at once take, so they do not both create the tables. */
  lock: number;
  /** The tables the DDL creates. */
  tables: readonly string[];
  /** The functions it creates, by signature (`sergo_append(jsonb)`), in the order of their `$fn$` bodies. */
  functions: readonly string[];
}

/** The bodies between `$fn$` quotes in `ddl`, in order: what `pg_proc.prosrc` holds for each function. */
function functionBodies(ddl: string): string[] {
  return [...ddl.matchAll(/\$fn\$([\s\S]*?)\$fn\$/g)].map((match) => match[1]!);
}

/** Whether the database has the part as this code makes it (one query, no lock). */
export async function schemaIsCurrent<T extends Record<string, unknown>>(
  sql: postgres.Sql<T>,
  part: SchemaPart,
): Promise<boolean> {
  const bodies = functionBodies(part.ddl);
  if (bodies.length !== part.functions.length) {
    throw new Error(
      `The schema part has ${bodies.length} function bodies for ${part.functions.length} functions`,
    );
  }
  const functions = part.functions.map((signature, i) => ({ signature, body: bodies[i]! }));
  const [row] = await sql<{ current: boolean }[]>`
    SELECT (SELECT coalesce(bool_and(to_regclass(t.name) IS NOT NULL), true)
            FROM jsonb_array_elements_text(${JSON.stringify(part.tables)}::text::jsonb) AS t(name))
       AND (SELECT coalesce(bool_and(p.prosrc IS NOT NULL AND p.prosrc = f.body), true)
            FROM jsonb_to_recordset(${JSON.stringify(functions)}::text::jsonb) AS f(signature text, body text)
            LEFT JOIN pg_proc p ON p.oid = to_regprocedure(f.signature)) AS current`;
  return row!.current === true;
}

/**
 * Creates or updates the part unless it is current; under its advisory lock
 * when it runs the DDL. (A `sql.begin`: a connection lost in it can end in
 * the driver's stray error, see src/postgres_blob_store.ts; only at a start
 * that finds the schema out of date.)
 */
export async function ensureSchema<T extends Record<string, unknown>>(
  sql: postgres.Sql<T>,
  part: SchemaPart,
): Promise<void> {
  if (await schemaIsCurrent(sql, part)) return;
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${part.lock})`;
    await tx.unsafe(part.ddl);
  });
}
