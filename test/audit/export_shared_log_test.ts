/**
 * An audit export on the shared log, from a replica whose copy of the log
 * left the MCP calls out (events/postgres/local_copy.ts: a copy keeps no
 * call it did not write itself), is the embedded log's export of the same
 * log byte for byte, and verifies: the export fetches the calls from
 * PostgreSQL into the copy before it reads every event's hash and its
 * records' rows. The log is the audit workload's (test/audit/_workload.ts),
 * imported as `sergo migrate` imports, so the replica pulled every call.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { StoredRow } from "../../events/hash_chain.ts";
import { openPostgresStore } from "../../events/postgres/store.ts";
import { openProjector } from "../../projections/projector.ts";
import { projectionsFor } from "../../projections/all.ts";
import { exportAudit } from "../../src/audit/export.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { openInstall } from "./_workload.ts";

Deno.test("an export on the shared log from a copy without the calls is the embedded export, and verifies", async () => {
  const install = await openInstall();
  await using database = await testDatabase();
  const store = await openPostgresStore(database.url, { cachePath: join(install.dir, "cache.db") });
  const projector = openProjector(join(install.dir, "shared.db"), projectionsFor(store));
  try {
    const events = new DatabaseSync(install.eventsPath, { readOnly: true });
    const rows = events.prepare(
      "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events ORDER BY position",
    ).all() as unknown as StoredRow[];
    events.close();
    await store.importRows(rows);
    await store.sync();
    const calls = rows.filter((row) => row.type === "McpCalled").length;
    assert.ok(calls >= 10);
    assert.deepEqual(store.head(), await store.databaseHead(), "the copy's head is the log's");
    assert.equal(
      store.readFrom(0, 10_000).length,
      rows.length - calls,
      "the copy left every call out (it pulled them all)",
    );
    projector.catchUp(store);
    assert.equal(projector.position, rows.length, "the projections passed over the calls");

    for (const personId of [install.workload.ava.personId, install.workload.ben.personId]) {
      const options = {
        dataDir: install.dataDir,
        personId,
        format: "jsonl" as const,
        now: () => new Date("2026-10-26T00:00:00Z"),
        origin: "sergo@test",
      };
      const embeddedPath = join(install.dir, `embedded-${personId}.jsonl`);
      const sharedPath = join(install.dir, `shared-${personId}.jsonl`);
      const embedded = await exportAudit({
        ...options,
        eventsDbPath: install.eventsPath,
        projectionsDb: install.projector.db,
        out: embeddedPath,
      });
      const shared = await exportAudit({ ...options, store, projectionsDb: projector.db, out: sharedPath });
      assert.deepEqual(shared, embedded);
      assert.equal(await Deno.readTextFile(sharedPath), await Deno.readTextFile(embeddedPath));
      const verdict = await verifyExport(sharedPath);
      assert.ok(verdict.ok, JSON.stringify(verdict));
    }
    assert.equal(store.readFrom(0, 10_000).length, rows.length, "the export completed the copy");
    assert.deepEqual(store.head(), await store.databaseHead());
  } finally {
    projector.close();
    await store.close();
    await install.close();
  }
});
