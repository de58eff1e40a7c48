import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { ConcurrencyError, StoredEventError } from "../../events/store.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { EventSchemaError, type SergoEvent } from "../../events/types.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const meta = { time: "2026-11-29T12:00:00.000Z", actor: "test" };

function personAdded(i: number): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: `Person ${i}`, email: `p${i}@example.com` },
    metadata: meta,
  };
}

for (const writer of ["inline", "thread"] as const) {
  Deno.test(`${writer} writer: append then read returns the events in order with contiguous positions and stream versions`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    const first = await store.append("person-a", [personAdded(1)], { expectedVersion: "no_stream" });
    const second = await store.append("person-a", [
      { type: "PersonPasswordSet", data: { person_id: "p1", password_hash: "x" }, metadata: meta },
    ], { expectedVersion: 1 });
    assert.equal(first.streamVersion, 1);
    assert.equal(second.streamVersion, 2);
    const all = store.readFrom(0);
    assert.deepEqual(all.map((e) => [e.position, e.stream, e.stream_version, e.type]), [
      [1, "person-a", 1, "PersonAdded"],
      [2, "person-a", 2, "PersonPasswordSet"],
    ]);
    assert.equal(all[1]!.prev_hash, all[0]!.hash);
    assert.deepEqual(store.readStream("person-a").map((e) => e.position), [1, 2]);
    assert.deepEqual(store.head(), { position: 2, hash: all[1]!.hash });
    await store.close();
  });

  Deno.test(`${writer} writer: optimistic concurrency: wrong version, must-not-exist and must-exist are refused with a typed error`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    await store.append("person-a", [personAdded(1)], { expectedVersion: "no_stream" });
    await assert.rejects(
      store.append("person-a", [personAdded(2)], { expectedVersion: "no_stream" }),
      (error) => {
        assert.ok(error instanceof ConcurrencyError);
        assert.equal(error.message, 'Cannot append to "person-a": expected no stream, found version 1');
        return true;
      },
    );
    await assert.rejects(
      store.append("person-b", [personAdded(2)], { expectedVersion: "stream_exists" }),
      ConcurrencyError,
    );
    await assert.rejects(
      store.append("person-a", [personAdded(2)], { expectedVersion: 5 }),
      /expected version 5, found version 1/,
    );
    // Nothing was written by the refused appends.
    assert.equal(store.head().position, 1);
    await store.close();
  });

  Deno.test(`${writer} writer: group commit: 200 concurrent appenders are all durable, positions contiguous, chain verifies`, async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "events.db");
    const store = openSqliteStore(path, { writer });
    const results = await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) => store.append(`person-${i}`, [personAdded(i)], { expectedVersion: "no_stream" }),
      ),
    );
    assert.equal(results.length, 200);
    const positions = results.map((r) => r.events[0]!.position).sort((a, b) => a - b);
    assert.deepEqual(positions, Array.from({ length: 200 }, (_, i) => i + 1));
    // Coalesced: far fewer transactions than appends.
    assert.ok(store.transactions <= 5, `expected group commit, got ${store.transactions} transactions`);
    await store.close();
    // Durable: a fresh connection sees every event, and the chain verifies.
    const reopened = openSqliteStore(path);
    assert.equal(reopened.readFrom(0, 1000).length, 200);
    const verdict = reopened.verify();
    assert.ok(verdict.ok);
    assert.equal(verdict.count, 200);
    await reopened.close();
  });

  Deno.test(`${writer} writer: a conflicting append in a group commit fails alone; the others land`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    await store.append("person-x", [personAdded(0)]);
    const outcomes = await Promise.allSettled([
      store.append("person-1", [personAdded(1)], { expectedVersion: "no_stream" }),
      store.append("person-x", [personAdded(2)], { expectedVersion: "no_stream" }),
      store.append("person-3", [personAdded(3)], { expectedVersion: "no_stream" }),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.deepEqual(store.readFrom(0).map((e) => e.position), [1, 2, 3]);
    assert.ok(store.verify().ok);
    await store.close();
  });

  Deno.test(`${writer} writer: schema validation refuses bad event data with a clear message and writes nothing`, async () => {
    await using dir = await tempDir();
    const store = openSqliteStore(join(dir.path, "events.db"), { writer });
    await assert.rejects(
      store.append("person-a", [{
        type: "PersonAdded",
        data: { person_id: "p", name: "", email: "ava@example.com" },
        metadata: meta,
      }]),
      (error) => {
        assert.ok(error instanceof EventSchemaError);
        assert.match(error.message, /^Cannot record "PersonAdded": name is invalid: /);
        return true;
      },
    );
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      store.append("x", [{ type: "NoSuchEvent", data: {}, metadata: meta } as any]),
      /Unknown event type "NoSuchEvent"/,
    );
    assert.equal(store.head().position, 0);
    await store.close();
  });
}

Deno.test("a stored event that does not parse is reported with its position on read", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.db");
  const store = openSqliteStore(path);
  await store.append("person-a", [personAdded(1), personAdded(2)]);
  await store.close();
  const raw = new DatabaseSync(path);
  raw.prepare("UPDATE events SET data = ? WHERE position = 2").run(JSON.stringify({ person_id: "p2" }));
  raw.close();
  const reopened = openSqliteStore(path);
  assert.throws(() => reopened.readFrom(0), (error) => {
    assert.ok(error instanceof StoredEventError);
    assert.equal(error.position, 2);
    assert.match(error.message, /^Cannot read event 2: "PersonAdded" data does not match its schema/);
    return true;
  });
  await reopened.close();
});

async function logWith(n: number): Promise<{ dir: string; path: string } & AsyncDisposable> {
  const dir = await tempDir();
  const path = join(dir.path, "events.db");
  const store = openSqliteStore(path);
  for (let i = 0; i < n; i++) await store.append(`person-${i}`, [personAdded(i)]);
  await store.close();
  return { dir: dir.path, path, [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose]() };
}

Deno.test("log verify: an intact log prints the head and exits 0", async () => {
  await using log = await logWith(5);
  const result = await runCli(["log", "verify", "--data", log.dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^ok: 5 events, head 5 [0-9a-f]{64}\n$/);
});

Deno.test("log verify names the position of a changed, deleted or swapped row and exits non-zero", async (t) => {
  await t.step("one stored row's data changed", async () => {
    await using log = await logWith(5);
    const raw = new DatabaseSync(log.path);
    raw.prepare("UPDATE events SET data = replace(data, 'Person 3', 'Person 9') WHERE position = 4").run();
    raw.close();
    const result = await runCli(["log", "verify", "--data", log.dir]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "broken at position 4: its content does not match its hash\n");
  });
  await t.step("a row deleted", async () => {
    await using log = await logWith(5);
    const raw = new DatabaseSync(log.path);
    raw.prepare("DELETE FROM events WHERE position = 3").run();
    raw.close();
    const result = await runCli(["log", "verify", "--data", log.dir]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^broken at position 3: /);
  });
  await t.step("two rows swapped", async () => {
    await using log = await logWith(5);
    const raw = new DatabaseSync(log.path);
    const row = (p: number) =>
      raw.prepare("SELECT data, metadata, stream FROM events WHERE position = ?").get(p) as Record<
        string,
        string
      >;
    const a = row(2), b = row(3);
    raw.exec("BEGIN");
    raw.prepare("UPDATE events SET data = ?, metadata = ?, stream = ? WHERE position = 2").run(
      b.data!,
      b.metadata!,
      `${b.stream}-tmp`,
    );
    raw.prepare("UPDATE events SET data = ?, metadata = ?, stream = ? WHERE position = 3").run(
      a.data!,
      a.metadata!,
      a.stream!,
    );
    raw.prepare("UPDATE events SET stream = ? WHERE position = 2").run(b.stream!);
    raw.exec("COMMIT");
    raw.close();
    const result = await runCli(["log", "verify", "--data", log.dir]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^broken at position 2: /);
  });
});
