/**
 * One append's bad data fails that append alone, and no wait for the writer
 * thread lasts for ever: data nested thousands of levels deep is refused with
 * one sentence, data the writer cannot encode fails only its own append in a
 * group commit, and a commit the writer does not answer in time fails with an
 * error that `/healthz` reports as a stuck writer.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import type { SergoEvent } from "../../events/types.ts";
import { createHandler } from "../../src/http/server.ts";
import { openApp } from "../../src/app.ts";
import { tempDir } from "../helpers/temp.ts";

const meta = { time: "2026-12-01T12:00:00.000Z", actor: "key-k1" };

/** An audit entry whose arguments carry `extra`. */
function called(extra: unknown): SergoEvent {
  return {
    type: "McpCalled",
    data: {
      key_id: "k1",
      person_id: "p1",
      key_name: "notes",
      masked_key: "sgk_s_…abcd",
      end_user: null,
      tool: "search",
      arguments: { query: "heat pumps", extra },
      action: "mcp search",
      details: { query: "heat pumps", results: 0 },
      is_error: false,
      duration_ms: 1,
    },
    metadata: meta,
  } as SergoEvent;
}

function nested(levels: number, kind: "object" | "array"): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = kind === "object" ? { a: value } : [value];
  return value;
}

for (const writer of ["inline", "thread"] as const) {
  Deno.test(`${writer} writer: data nested 3,000 (objects) or 3,600 (arrays) deep fails alone, and nothing freezes`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    // Two hostile appends at a time filled both in-flight slots of the writer thread for ever.
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled([
        store.append("key-k1", [called(nested(3_000, "object"))]),
        store.append("key-k1", [called(nested(3_600, "array"))]),
        store.append("key-k1", [called("fine")]),
        store.append("key-k1", [called(nested(3_000, "object"))]),
        store.append("key-k2", [called("fine too")]),
      ]);
      assert.deepEqual(results.map((r) => r.status), [
        "rejected",
        "rejected",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      for (const i of [0, 1, 3]) {
        assert.equal(
          (results[i] as PromiseRejectedResult).reason.message,
          'Cannot record "McpCalled": it nests deeper than 64 levels',
        );
      }
    }
    assert.equal(store.readFrom(0).length, 6);
    assert.equal(store.verify().ok, true);
    await store.close();
  });

  Deno.test(`${writer} writer: an append the writer cannot encode fails alone; the rest of its group commit lands`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    // A BigInt passes the schema (arguments are free-form) but has no JSON form.
    const results = await Promise.allSettled([
      store.append("key-k1", [called("before")]),
      store.append("key-k2", [called(10n)]),
      store.append("key-k3", [called("after")]),
    ]);
    assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.match(
      (results[1] as PromiseRejectedResult).reason.message,
      /^Cannot append to "key-k2": Cannot serialise a value of type bigint$/,
    );
    assert.equal(store.transactions, 1);
    const events = store.readFrom(0);
    assert.deepEqual(events.map((e) => [e.position, e.stream, e.stream_version]), [
      [1, "key-k1", 1],
      [2, "key-k3", 1],
    ]);
    assert.equal(events[1]!.prev_hash, events[0]!.hash);
    assert.equal(store.verify().ok, true);
    // The refused stream was not created.
    assert.equal(store.readStream("key-k2").length, 0);
    await store.close();
  });
}

Deno.test("thread writer: a commit not answered in time fails with a sentence, /healthz says the writer is stuck, then recovers", async () => {
  await using dir = await tempDir();
  const app = await openApp(dir.path, { writer: "thread", writerTimeoutMs: 300 });
  const handler = createHandler({ app });
  const health = async () => await (await handler(new Request("http://127.0.0.1/healthz"))).json();
  assert.equal((await health()).writer, "ok");
  // Another process holds the log's write lock, so the writer thread waits for it.
  const lock = new DatabaseSync(join(dir.path, "events.db"));
  lock.exec("BEGIN IMMEDIATE");
  const started = Date.now();
  await assert.rejects(
    app.store.append("key-k1", [called("waits")]),
    { message: "Cannot append: the log's writer did not answer within 300 ms" },
  );
  assert.ok(Date.now() - started < 5_000);
  const stuck = await health();
  assert.equal(stuck.ok, false);
  assert.match(
    stuck.writer,
    /^stuck: The log's writer has not answered since a commit timed out \d+ ms ago\.$/,
  );
  lock.exec("ROLLBACK");
  lock.close();
  await app.store.append("key-k1", [called("after the lock")]);
  const healthy = await health();
  assert.equal(healthy.ok, true);
  assert.equal(healthy.writer, "ok");
  // The commit that timed out was written once the lock was free: nothing is lost.
  assert.deepEqual(
    app.store.readFrom(0).map((e) => (e.data as unknown as { arguments: { extra: string } }).arguments.extra),
    [
      "waits",
      "after the lock",
    ],
  );
  await app.close();
});
