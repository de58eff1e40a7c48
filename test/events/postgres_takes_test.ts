/**
 * Appends that take a rate-limit token in the same statement
 * (`sergo_group_commit`, for the replicas' shared buckets): in one group
 * commit, an append whose key's bucket is empty writes nothing and rejects,
 * the others land; the bucket is the one the standalone takes use; a group
 * commit that PostgreSQL never finishes (stopped while it waits) writes
 * nothing. Real PostgreSQL (test/helpers/postgres.ts).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { join } from "node:path";
import { openPostgresStore } from "../../events/postgres/store.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { RateRefusedError, type TokenTake } from "../../events/store.ts";
import type { SergoEvent } from "../../events/types.ts";
import { openSharedRateLimiter } from "../../src/mcp/shared_rate_limit.ts";
import { createSergoDatabase, startThrowawayCluster, testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";

const meta = { time: "2026-12-01T12:00:00.000Z", actor: "test" };

function personAdded(i: number): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: `Person ${i}`, email: `p${i}@example.com` },
    metadata: meta,
  };
}

/** A bucket of `burst` that refills one token in 1000 s: nothing refills during a test. */
function token(keyId: string, burst: number, told?: TokenTake["told"]): TokenTake {
  return { keyId, perSecond: 0.001, burst, ...(told ? { told } : {}) };
}

Deno.test("PostgreSQL: in one group commit, appends whose key's bucket is empty write nothing and reject; the rest land", async () => {
  await using db = await testDatabase();
  const store = await openPostgresStore(db.url);
  const other = await openPostgresStore(db.url);
  const limiter = await openSharedRateLimiter(db.url, { perSecond: 0.001, burst: 3 });
  try {
    const left: number[] = [];
    // One turn of the event loop: five appends on key a's bucket of 3, two on b's, one that takes nothing.
    const outcomes = await Promise.allSettled([
      ...Array.from(
        { length: 5 },
        (_, i) => store.append(`key-a`, [personAdded(i)], { takeToken: token("a", 3, (t) => left.push(t)) }),
      ),
      store.append("key-b", [personAdded(10)], { takeToken: token("b", 3) }),
      store.append("key-b", [personAdded(11)], { takeToken: token("b", 3) }),
      store.append("person-x", [personAdded(20)]),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), [
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    for (const refused of outcomes.slice(3, 5) as PromiseRejectedResult[]) {
      assert.ok(refused.reason instanceof RateRefusedError, String(refused.reason));
      assert.equal(refused.reason.keyId, "a");
      // An empty bucket refilling 0.001 a second holds a token again in 1000 s.
      assert.ok(Math.abs(refused.reason.waitSeconds - 1000) < 1, String(refused.reason.waitSeconds));
    }
    assert.equal(store.transactions, 1, "all eight appends and their takes went in one statement");
    assert.deepEqual(left.map((t) => Math.round(t)), [2, 1, 0, 0, 0]);
    // Only what was allowed is in the log, contiguous, one chain, on both replicas.
    assert.deepEqual(store.readFrom(0).map((e) => [e.stream, e.stream_version, e.position]), [
      ["key-a", 1, 1],
      ["key-a", 2, 2],
      ["key-a", 3, 3],
      ["key-b", 1, 4],
      ["key-b", 2, 5],
      ["person-x", 1, 6],
    ]);
    assert.ok((await store.verify()).ok);
    await other.sync();
    assert.deepEqual(other.readFrom(0), store.readFrom(0));
    // The buckets are shared: another replica's group commit and the standalone take find them as left.
    await assert.rejects(
      other.append("key-a", [personAdded(30)], { takeToken: token("a", 3) }),
      RateRefusedError,
    );
    assert.deepEqual(await limiter.take("a"), { allowed: false, retryAfterSeconds: 1000 });
    assert.deepEqual(await limiter.take("b"), { allowed: true });
    await assert.rejects(
      other.append("key-b", [personAdded(31)], { takeToken: token("b", 3) }),
      RateRefusedError,
    );
    assert.equal(store.head().position, 6);
    // The stream versions moved once per stream and statement are the ones the next append checks.
    await store.append("key-a", [personAdded(40)], { expectedVersion: 3 });
    await assert.rejects(store.append("key-b", [personAdded(41)], { expectedVersion: 1 }), /found version 2/);
  } finally {
    await limiter.close();
    await other.close();
    await store.close();
  }
});

Deno.test("PostgreSQL stopped while a group commit with takes waits in it: every append of it fails and none is written; once back, appends and takes work", async () => {
  await using cluster = await startThrowawayCluster();
  const url = await createSergoDatabase(cluster);
  const store = await openPostgresStore(url, { connectTimeoutSeconds: 2 });
  try {
    await store.append("person-x", [personAdded(0)]);
    // Another session holds the chain head, so the group commit is in PostgreSQL, waiting, when it stops.
    const holder = postgres(url, { max: 1, onnotice: () => {} });
    const held = holder.begin(async (tx) => {
      await tx`SELECT position FROM sergo_log_head WHERE id = 1 FOR UPDATE`;
      await new Promise((resolve) => setTimeout(resolve, 60_000));
    }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const appends = Promise.allSettled(Array.from(
      { length: 4 },
      (_, i) => store.append("key-a", [personAdded(i + 1)], { takeToken: token("a", 2) }),
    ));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.stop();
    const outcomes = await appends;
    assert.deepEqual(outcomes.map((o) => o.status), ["rejected", "rejected", "rejected", "rejected"]);
    for (const outcome of outcomes as PromiseRejectedResult[]) {
      assert.match(String(outcome.reason), /^DatabaseUnavailableError: Cannot append: /);
    }
    await holder.end({ timeout: 1 }).catch(() => {});
    await held;
    await cluster.start();
    // The first append after the restart waits for the store's connections to come back.
    for (let tries = 0;; tries++) {
      try {
        await store.append("person-y", [personAdded(9)]);
        break;
      } catch (error) {
        if (tries > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // Back: nothing of the failed statement is there; the buckets (unlogged: a crash empties the table, so every
    // key starts with its burst again) refuse past the burst as before.
    const later = await Promise.allSettled(
      Array.from(
        { length: 3 },
        (_, i) => store.append("key-a", [personAdded(i + 10)], { takeToken: token("a", 2) }),
      ),
    );
    assert.deepEqual(later.map((o) => o.status), ["fulfilled", "fulfilled", "rejected"]);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<
        { stream: string; data: string }[]
      >`SELECT stream, data FROM sergo_events ORDER BY position`;
      assert.deepEqual(rows.map((r) => [r.stream, JSON.parse(r.data).person_id]), [
        ["person-x", "p0"],
        ["person-y", "p9"],
        ["key-a", "p10"],
        ["key-a", "p11"],
      ]);
    } finally {
      await sql.end();
    }
    assert.ok((await store.verify()).ok);
  } finally {
    await store.close();
  }
});

Deno.test("SQLite: an append that asks for a shared rate token is refused and writes nothing", async () => {
  await using dir = await tempDir();
  const store = openSqliteStore(join(dir.path, "events.db"));
  try {
    await assert.rejects(
      store.append("key-a", [personAdded(1)], { takeToken: token("a", 3) }),
      /Cannot append to "key-a": this log has no shared rate buckets/,
    );
    assert.equal(store.head().position, 0);
  } finally {
    await store.close();
  }
});
