/**
 * How a replica's log opens on PostgreSQL: its local copy (`log-cache.db`) is
 * checked against the database's log and brought up to date by the first
 * pull (which reads from the copy's last event: that event must be the
 * database's, with the same hash), and the schema's DDL runs only when the
 * database does not have the tables and functions as this code makes them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { LOG_SCHEMA_PART } from "../../events/postgres/group_commit_sql.ts";
import { openPostgresStore } from "../../events/postgres/store.ts";
import { schemaIsCurrent } from "../../events/postgres/schema.ts";
import type { SergoEvent } from "../../events/types.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";

const meta = { time: "2026-12-01T12:00:00.000Z", actor: "test" };

function personAdded(i: number): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: `Person ${i}`, email: `p${i}@example.com` },
    metadata: meta,
  };
}

const NOT_A_PREFIX = (head: number) =>
  `The local copy of the log (head ${head}) is not a prefix of the database's log; remove it to rebuild it`;

Deno.test("PostgreSQL: a replica's copy of the log is caught up at open, and refused when it is not a prefix of the database's log", async (t) => {
  await using db = await testDatabase();
  await using dir = await tempDir("sergo-log-copy-");
  const copy = join(dir.path, "log-cache.db");
  const writer = await openPostgresStore(db.url, { pollMs: 60_000 });
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    for (let i = 1; i <= 3; i++) await writer.append(`person-${i}`, [personAdded(i)]);
    const replica = await openPostgresStore(db.url, { cachePath: copy });
    assert.equal(replica.head().position, 3);
    await replica.close();

    await t.step("a copy behind the database gets what came since, in the same open", async () => {
      for (let i = 4; i <= 6; i++) await writer.append(`person-${i}`, [personAdded(i)]);
      const again = await openPostgresStore(db.url, { cachePath: copy });
      try {
        assert.deepEqual(again.head(), writer.head());
        assert.deepEqual(again.readFrom(0), writer.readFrom(0));
      } finally {
        await again.close();
      }
    });

    await t.step("a copy whose last event has another hash in the database is refused", async () => {
      // As after a restore of another backup: the database's event 6 is not the one the copy holds.
      await sql`UPDATE sergo_events SET hash = repeat('0', 64) WHERE position = 6`;
      await assert.rejects(openPostgresStore(db.url, { cachePath: copy }), { message: NOT_A_PREFIX(6) });
      await sql`UPDATE sergo_events SET hash = ${writer.head().hash} WHERE position = 6`;
    });

    await t.step("a copy longer than the database's log is refused", async () => {
      // The database restored from a backup taken at event 5; the copy has 6.
      await sql.begin(async (tx) => {
        const [five] = await tx<{ hash: string }[]>`SELECT hash FROM sergo_events WHERE position = 5`;
        await tx`DELETE FROM sergo_events WHERE position = 6`;
        await tx`DELETE FROM sergo_streams WHERE stream = 'person-6'`;
        await tx`UPDATE sergo_log_head SET position = 5, hash = ${five!.hash}`;
      });
      await assert.rejects(openPostgresStore(db.url, { cachePath: copy }), { message: NOT_A_PREFIX(6) });
    });
  } finally {
    await sql.end();
    await writer.close();
  }
});

Deno.test("PostgreSQL: the schema's DDL runs only when the database lacks this code's tables or functions", async () => {
  await using db = await testDatabase();
  const first = await openPostgresStore(db.url);
  await first.close();
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const holder = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    assert.equal(await schemaIsCurrent(sql, LOG_SCHEMA_PART), true);
    // Another session holds the advisory lock the DDL runs under: an open that runs no DDL does not wait.
    const held = holder.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOG_SCHEMA_PART.lock})`;
      await new Promise((resolve) => setTimeout(resolve, 3000));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    const quick = await openPostgresStore(db.url);
    const openMs = performance.now() - started;
    await quick.close();
    assert.ok(openMs < 2500, `the open waited for the DDL's lock (${Math.round(openMs)} ms)`);
    await held;

    // Another version's function (here: the same one with a changed body) is not this code's: it is replaced.
    await sql.unsafe(
      LOG_SCHEMA_PART.ddl.slice(LOG_SCHEMA_PART.ddl.indexOf("CREATE OR REPLACE FUNCTION"))
        .replace("RETURN json_build_object(", "-- another version\n  RETURN json_build_object("),
    );
    assert.equal(await schemaIsCurrent(sql, LOG_SCHEMA_PART), false);
    const store = await openPostgresStore(db.url);
    try {
      assert.equal(await schemaIsCurrent(sql, LOG_SCHEMA_PART), true);
      await store.append("person-1", [personAdded(1)]);
      assert.equal(store.head().position, 1);
    } finally {
      await store.close();
    }
    // A missing table is made again.
    await sql`DROP TABLE sergo_streams`;
    assert.equal(await schemaIsCurrent(sql, LOG_SCHEMA_PART), false);
    const rebuilt = await openPostgresStore(db.url);
    await rebuilt.close();
    assert.equal(await schemaIsCurrent(sql, LOG_SCHEMA_PART), true);
  } finally {
    await sql.end();
    await holder.end();
  }
});
