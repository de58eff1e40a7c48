/**
 * A replica that opens far behind the shared log (a new replica, or one that
 * was down while the others wrote) has the database's head when its store's
 * `start()` returns: it pulls 2,000 events at a time until nothing is left,
 * not only the first pulls, so it never answers from a copy that is behind.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openPostgresStore } from "../../events/postgres/store.ts";
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

Deno.test("PostgreSQL: a replica opened 4,500 events behind has the database's head when it has started", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir("sergo-catch-up-");
  const copy = join(dir.path, "log-cache.db");
  const writer = await openPostgresStore(db.url, { pollMs: 60_000 });
  try {
    await writer.append("person-0", [personAdded(0)]);
    // The replica's copy holds the first event; then it is away while 4,500 more are written.
    await (await openPostgresStore(db.url, { cachePath: copy, pollMs: 60_000 })).close();
    for (let batch = 0; batch < 9; batch++) {
      const events = Array.from({ length: 500 }, (_, i) => personAdded(1 + batch * 500 + i));
      await writer.append(`person-batch-${batch}`, events);
    }
    assert.equal(writer.head().position, 4501);
    for (const cachePath of [copy, undefined]) {
      // Polling and notices are far off: only start() itself may bring the copy up to date.
      const replica = await openPostgresStore(db.url, { cachePath, pollMs: 60_000 });
      try {
        assert.deepEqual(
          replica.head(),
          writer.head(),
          cachePath ? "its copy on disk" : "a new copy in memory",
        );
        assert.equal(replica.readStream("person-batch-8").length, 500);
      } finally {
        await replica.close();
      }
    }
  } finally {
    await writer.close();
  }
});
