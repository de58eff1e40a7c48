import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { ConcurrencyError, type EventStore, StoredEventError } from "../../events/store.ts";
import type { ChainVerdict } from "../../events/hash_chain.ts";
import { openPostgresStore } from "../../events/postgres/store.ts";
import postgres from "postgres";
import { testDatabase } from "../helpers/postgres.ts";
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

interface Backend {
  name: string;
  /** A fresh, empty log; `reopen` opens it again through a new connection after `store` is closed. */
  open(): Promise<{ store: TestedStore; reopen(): Promise<TestedStore> } & AsyncDisposable>;
}

/** What the tests use: the interface, plus the count of transactions and the chain walk both stores have. */
type TestedStore = EventStore & { transactions: number; verify(): ChainVerdict | Promise<ChainVerdict> };

/** The same tests run against every store: SQLite (inline and writer thread) and PostgreSQL. */
const BACKENDS: Backend[] = [
  ...(["inline", "thread"] as const).map((writer) => ({
    name: `SQLite, ${writer} writer`,
    async open() {
      const dir = await tempDir();
      const path = join(dir.path, "events.db");
      const opened: TestedStore[] = [openSqliteStore(path, { writer })];
      return {
        store: opened[0]!,
        reopen: () => {
          opened.push(openSqliteStore(path));
          return Promise.resolve(opened.at(-1)!);
        },
        async [Symbol.asyncDispose]() {
          for (const store of opened) await store.close();
          await dir[Symbol.asyncDispose]();
        },
      };
    },
  })),
  // One round trip per group commit (the default), and the client-side transaction it replaced.
  ...(["statement", "transaction"] as const).map((appendBy) => ({
    name: appendBy === "statement" ? "PostgreSQL" : "PostgreSQL, client-side transaction",
    async open() {
      const db = await testDatabase();
      const opened: TestedStore[] = [await openPostgresStore(db.url, { appendBy })];
      return {
        store: opened[0]!,
        async reopen() {
          opened.push(await openPostgresStore(db.url, { appendBy }));
          return opened.at(-1)!;
        },
        async [Symbol.asyncDispose]() {
          for (const store of opened) await store.close();
          await db[Symbol.asyncDispose]();
        },
      };
    },
  })),
];

for (const backend of BACKENDS) {
  Deno.test(`${backend.name}: append then read returns the events in order with contiguous positions and stream versions`, async () => {
    await using log = await backend.open();
    const store = log.store;
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

  Deno.test(`${backend.name}: optimistic concurrency: wrong version, must-not-exist and must-exist are refused with a typed error`, async () => {
    await using log = await backend.open();
    const store = log.store;
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

  Deno.test(`${backend.name}: group commit: 200 concurrent appenders are all durable, positions contiguous, chain verifies`, async () => {
    await using log = await backend.open();
    const store = log.store;
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
    const reopened = await log.reopen();
    assert.equal(reopened.readFrom(0, 1000).length, 200);
    const verdict = await reopened.verify();
    assert.ok(verdict.ok);
    assert.equal(verdict.count, 200);
    await reopened.close();
  });

  Deno.test(`${backend.name}: a conflicting append in a group commit fails alone; the others land`, async () => {
    await using log = await backend.open();
    const store = log.store;
    await store.append("person-x", [personAdded(0)]);
    const outcomes = await Promise.allSettled([
      store.append("person-1", [personAdded(1)], { expectedVersion: "no_stream" }),
      store.append("person-x", [personAdded(2)], { expectedVersion: "no_stream" }),
      store.append("person-3", [personAdded(3)], { expectedVersion: "no_stream" }),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.deepEqual(store.readFrom(0).map((e) => e.position), [1, 2, 3]);
    assert.ok((await store.verify()).ok);
    await store.close();
  });

  Deno.test(`${backend.name}: schema validation refuses bad event data with a clear message and writes nothing`, async () => {
    await using log = await backend.open();
    const store = log.store;
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

  Deno.test(`${backend.name}: appends to one stream in one group commit follow each other, checked in order`, async () => {
    await using log = await backend.open();
    const store = log.store;
    await store.append("person-a", [personAdded(1)]);
    const [x, y, z] = await Promise.allSettled([
      store.append("person-a", [personAdded(2)], { expectedVersion: 1 }),
      store.append("person-a", [personAdded(3), personAdded(4)], { expectedVersion: 2 }),
      store.append("person-a", [personAdded(5)], { expectedVersion: 1 }),
    ]);
    assert.equal(x.status === "fulfilled" && x.value.streamVersion, 2);
    assert.equal(y.status === "fulfilled" && y.value.streamVersion, 4);
    assert.ok(z.status === "rejected" && z.reason instanceof ConcurrencyError);
    assert.match(String(z.reason), /expected version 1, found version 4/);
    assert.deepEqual(store.readStream("person-a").map((e) => [e.stream_version, e.position]), [
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    assert.ok((await store.verify()).ok);
    assert.equal(store.transactions, 2, "the three appends shared one transaction");
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

Deno.test("PostgreSQL: two replicas on one database: one of two racing appends to a stream wins, the log has no gap, each sees the other's events", async () => {
  await using db = await testDatabase();
  // One appends in one statement, the other in the client-side transaction: the two ways share one chain head.
  const a = await openPostgresStore(db.url, { pollMs: 5_000 });
  const b = await openPostgresStore(db.url, { pollMs: 5_000, appendBy: "transaction" });
  try {
    const seenByB: number[] = [];
    b.subscribe((events) => seenByB.push(...events.map((e) => e.position)));
    await a.append("person-a", [personAdded(1)], { expectedVersion: "no_stream" });
    // Both replicas hold version 1 and race to write version 2.
    const race = await Promise.allSettled([
      a.append("person-a", [personAdded(2)], { expectedVersion: 1 }),
      b.append("person-a", [personAdded(3)], { expectedVersion: 1 }),
    ]);
    assert.deepEqual(race.map((o) => o.status).sort(), ["fulfilled", "rejected"]);
    const lost = race.find((o) => o.status === "rejected") as PromiseRejectedResult;
    assert.ok(lost.reason instanceof ConcurrencyError, String(lost.reason));
    assert.match(lost.reason.message, /expected version 1, found version 2/);
    // Many interleaved appends from both replicas: contiguous positions, no duplicate, one chain.
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).append(`person-${i}`, [personAdded(i)])),
    );
    await a.sync();
    await b.sync();
    const positions = a.readFrom(0, 1000).map((e) => e.position);
    assert.deepEqual(positions, Array.from({ length: 62 }, (_, i) => i + 1));
    assert.deepEqual(b.readFrom(0, 1000), a.readFrom(0, 1000));
    assert.deepEqual(seenByB, positions);
    const verdict = await b.verify();
    assert.ok(verdict.ok && verdict.count === 62, JSON.stringify(verdict));
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("PostgreSQL: another replica's append reaches a follower within 1 s through LISTEN/NOTIFY", async () => {
  await using db = await testDatabase();
  const writer = await openPostgresStore(db.url);
  // A poll far longer than the deadline: only the notification can bring the event in time.
  const follower = await openPostgresStore(db.url, { pollMs: 60_000 });
  try {
    const arrived = new Promise<number>((resolve) =>
      follower.subscribe((events) => resolve(events[0]!.position))
    );
    const started = performance.now();
    await writer.append("person-a", [personAdded(1)]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const position = await Promise.race([
      arrived,
      new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), 1000)),
    ]);
    clearTimeout(timer);
    assert.equal(position, 1, `not seen within 1 s (${Math.round(performance.now() - started)} ms)`);
    assert.equal(follower.head().position, 1);
  } finally {
    await writer.close();
    await follower.close();
  }
});

Deno.test("PostgreSQL: the hash the database computes for text in any script is the one the chain walk computes", async () => {
  await using db = await testDatabase();
  const store = await openPostgresStore(db.url);
  try {
    const names = [
      "Пётр Чайковский",
      "王小明 «引号»",
      'محمد "quoted" \\ back',
      "tab\there 🎉",
      "nul\u0000byte",
    ];
    await Promise.all(names.map((name, i) =>
      store.append(`person-${i}`, [{
        type: "PersonAdded",
        data: { person_id: `p${i}`, name, email: `p${i}@example.com` },
        metadata: { ...meta, end_user: name },
      }])
    ));
    assert.deepEqual(
      store.readFrom(0).map((e) => e.type === "PersonAdded" && e.data.name).sort(),
      [...names].sort(),
    );
    // verify() recomputes every hash in JavaScript from the stored text; a fresh replica pulls the same rows.
    const verdict = await store.verify();
    assert.ok(verdict.ok && verdict.count === names.length, JSON.stringify(verdict));
    assert.deepEqual(verdict.head, store.head());
    const fresh = await openPostgresStore(db.url);
    try {
      assert.deepEqual(fresh.readFrom(0), store.readFrom(0));
    } finally {
      await fresh.close();
    }
  } finally {
    await store.close();
  }
});

Deno.test("PostgreSQL: a changed row in the database is found by verify at its position", async () => {
  await using db = await testDatabase();
  const store = await openPostgresStore(db.url);
  try {
    for (let i = 0; i < 5; i++) await store.append(`person-${i}`, [personAdded(i)]);
    assert.deepEqual(await store.verify(), { ok: true, head: store.head(), count: 5 });
    const sql = postgres(db.url, { max: 1 });
    await sql`UPDATE sergo_events SET data = replace(data, 'Person 3', 'Person 9') WHERE position = 4`;
    await sql.end();
    assert.deepEqual(await store.verify(), {
      ok: false,
      position: 4,
      reason: "its content does not match its hash",
    });
  } finally {
    await store.close();
  }
});

Deno.test("PostgreSQL: an unreachable server is refused at open with one sentence naming it", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await assert.rejects(
    openPostgresStore(`postgres://sergo:secret@127.0.0.1:${port}/sergo`, { connectTimeoutSeconds: 2 }),
    (error) => {
      assert.ok(error instanceof Error);
      assert.match(
        error.message,
        new RegExp(`^Cannot open the log at 127\\.0\\.0\\.1:${port}/sergo: .*ECONNREFUSED`),
      );
      assert.doesNotMatch(error.message, /secret/);
      return true;
    },
  );
});
