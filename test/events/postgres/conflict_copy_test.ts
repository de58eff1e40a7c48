/**
 * A replica's append refused because another replica wrote the stream first
 * leaves the replica's copy of the log holding what the other wrote, before
 * the refusal reaches the caller: the caller reads the stream again at once
 * and decides on what is really there (a worker sees that its lease was taken
 * over). This holds when the other's rows came with the refused commit's
 * answer and when there were more of them than an answer carries (they are
 * pulled). The replica here follows the log only through its own commits: no
 * notices, no polling.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openPostgresStore } from "../../../events/postgres/store.ts";
import { ConcurrencyError } from "../../../events/store.ts";
import type { SergoEvent } from "../../../events/types.ts";
import { testDatabase } from "../../helpers/postgres.ts";
import { tempDir } from "../../helpers/temp.ts";

const meta = { time: "2026-12-04T12:00:00.000Z", actor: "test" };

function personAdded(i: number): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: `Person ${i}`, email: `p${i}@example.com` },
    metadata: meta,
  };
}

for (const others of [0, 1_200]) {
  Deno.test(`PostgreSQL: a refused append leaves the copy holding the other replica's write (${others} other events between)`, async () => {
    await using db = await testDatabase();
    await using dir = await tempDir("sergo-conflict-copy-");
    const a = await openPostgresStore(db.url, { cachePath: join(dir.path, "a.db"), follow: false });
    const b = await openPostgresStore(db.url, { cachePath: join(dir.path, "b.db"), pollMs: 60_000 });
    try {
      await a.append("person-x", [personAdded(0)], { expectedVersion: "no_stream" });
      await b.sync();
      for (let at = 0; at < others; at += 500) {
        await b.append(
          `person-batch-${at}`,
          Array.from({ length: Math.min(500, others - at) }, (_, i) => personAdded(1 + at + i)),
        );
      }
      await b.append("person-x", [personAdded(9_000)], { expectedVersion: 1 });
      const head = b.head().position;
      await assert.rejects(
        a.append("person-x", [personAdded(9_001)], { expectedVersion: 1 }),
        ConcurrencyError,
      );
      // No sync: the refusal itself brought the copy up to the other's write.
      const ids = a.readStream("person-x").map((event) => (event.data as { person_id: string }).person_id);
      assert.deepEqual(ids, ["p0", "p9000"]);
      assert.equal(a.head().position, head);
    } finally {
      await a.close();
      await b.close();
    }
  });
}
