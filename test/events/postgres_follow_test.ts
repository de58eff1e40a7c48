/**
 * Replicas appending at once follow each other through their own group
 * commits: each commit's answer carries the other replicas' rows committed
 * before it, so a busy replica does not pull them with a query of its own,
 * nor read its own rows back. What must hold whichever way the rows come:
 * every replica's copy is the database's log, row for row, but for the
 * other replicas' MCP calls, which it leaves out (kept as runs of positions)
 * until `complete()` fetches them, and then it is the log exactly; each
 * replica's subscribers are told every event it copied once, in order, with
 * spans that cover every position once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { openPostgresStore, type PostgresEventStore } from "../../events/postgres/store.ts";
import type { RecordedEvent, SergoEvent } from "../../events/types.ts";
import type { TellSpan } from "../../events/store.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";

const meta = { time: "2026-12-01T12:00:00.000Z", actor: "test" };

function personAdded(name: string): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: name, name: `Person ${name}`, email: `${name}@example.com` },
    metadata: meta,
  };
}

function mcpCalled(name: string): SergoEvent {
  return {
    type: "McpCalled",
    data: {
      key_id: `k-${name}`,
      person_id: "p1",
      key_name: "research",
      masked_key: "sgk_s_…abcd",
      end_user: null,
      tool: "search",
      arguments: { query: name },
      action: "mcp search",
      details: { query: name, results: 1 },
      is_error: false,
      duration_ms: 1.5,
    },
    metadata: meta,
  };
}

/** Waits until `check` holds, polling; fails with `what` after `ms`. */
async function waitUntil(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${ms} ms waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Row {
  position: string;
  stream: string;
  stream_version: number;
  type: string;
  data: string;
  metadata: string;
  prev_hash: string;
  hash: string;
}

/** What a replica's subscribers were told: the events and the spans they covered. */
interface Told {
  events: RecordedEvent[];
  spans: TellSpan[];
}

function listen(store: PostgresEventStore): Told {
  const told: Told = { events: [], spans: [] };
  store.subscribe((events, span) => {
    told.events.push(...events);
    told.spans.push(span!);
  });
  return told;
}

/**
 * Asserts that a replica's copy is the database's log but for the MCP calls
 * of streams it did not write (`own`), and exactly the log once completed;
 * that it told each event it copied once, in order, as its copy has it; and
 * that its spans cover every position once.
 */
async function assertFollowed(
  name: string,
  store: PostgresEventStore,
  told: Told,
  rows: Row[],
  own: (stream: string) => boolean,
): Promise<void> {
  const kept = rows.filter((row) => row.type !== "McpCalled" || own(row.stream));
  const copy = store.readFrom(0, rows.length + 10);
  // An own call the copy pulled instead of writing it from memory is left out too, as another's is.
  const missing = kept.filter((row) => !copy.some((event) => event.position === Number(row.position)));
  assert.ok(missing.every((row) => row.type === "McpCalled"), `${name}'s copy has every event but calls`);
  assert.ok(
    copy.every((event) => event.type !== "McpCalled" || own(event.stream)),
    `${name}'s copy has no other replica's call`,
  );
  let after = 0;
  for (const span of told.spans) {
    assert.equal(span.after, after, `${name}'s spans follow each other`);
    assert.ok(span.through > span.after, `${name}'s span is not empty`);
    after = span.through;
  }
  assert.equal(after, Number(rows[rows.length - 1]!.position), `${name}'s spans reach the head`);
  assert.deepEqual(
    told.events.map((event) => event.position),
    copy.map((event) => event.position),
    `${name} told what it copied`,
  );
  copy.forEach((event, i) => {
    assert.deepEqual({ ...told.events[i] }, { ...event }, `${name} told event ${i + 1} as its copy has it`);
  });
  await store.complete();
  const complete = store.readFrom(0, rows.length + 10);
  assert.equal(complete.length, rows.length, `${name}'s completed copy has every event`);
  complete.forEach((event, i) => {
    const row = rows[i]!;
    assert.deepEqual(
      [event.position, event.stream, event.stream_version, event.type, event.prev_hash, event.hash],
      [Number(row.position), row.stream, row.stream_version, row.type, row.prev_hash, row.hash],
      `${name}'s copy at ${i + 1}`,
    );
    assert.deepEqual(event.data, JSON.parse(row.data), `${name}'s copy's data at ${i + 1}`);
  });
  assert.deepEqual(store.head(), await store.databaseHead(), `${name}'s head`);
}

/** The shared log's rows after `after` (default: all), in order. */
function logRows(sql: postgres.Sql, after = 0): Promise<Row[]> {
  return sql<Row[]>`
    SELECT position, stream, stream_version, type, data, metadata, prev_hash, hash
    FROM sergo_events WHERE position > ${after} ORDER BY position`;
}

Deno.test("PostgreSQL: two replicas appending at once follow each other through their commits, with exact copies", async () => {
  await using db = await testDatabase();
  // No poll: the copies follow by notices, pulls and what the commits carry.
  const a = await openPostgresStore(db.url, { pollMs: 60_000 });
  const b = await openPostgresStore(db.url, { pollMs: 60_000 });
  const toldA = listen(a);
  const toldB = listen(b);
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    // Both replicas busy at once, each with 20 appends in flight, as two replicas serving audited calls are.
    const rounds = 40;
    const inFlight = 20;
    await Promise.all([a, b].map(async (store, s) => {
      for (let round = 0; round < rounds; round++) {
        await Promise.all(
          Array.from(
            { length: inFlight },
            (_, i) =>
              store.append(`s${s}-${i}`, [
                i % 2 === 0 ? personAdded(`p${s}-${round}-${i}`) : mcpCalled(`p${s}-${round}-${i}`),
              ]),
          ),
        );
      }
    }));
    const written = 2 * rounds * inFlight;
    for (const [name, store] of [["a", a], ["b", b]] as const) {
      await waitUntil(`replica ${name} has the database's head`, 10_000, async () => {
        return store.head().position === (await store.databaseHead()).position;
      });
    }
    const carried = a.followed.carriedRows + b.followed.carriedRows;
    const pulled = a.followed.pulledRows + b.followed.pulledRows;
    // Each replica copies the other's rows but its calls, and only those (none of its own read back): together,
    // every row but the calls once.
    assert.equal(
      carried + pulled,
      written / 2,
      `${carried} rows carried and ${pulled} pulled of the ${written / 2} not calls written`,
    );
    assert.ok(
      carried >= written / 4,
      `most rows come with the commits' answers (${carried} of ${written / 2})`,
    );
    const rows = await logRows(sql);
    assert.equal(rows.length, written);
    await assertFollowed("a", a, toldA, rows, (stream) => stream.startsWith("s0-"));
    await assertFollowed("b", b, toldB, rows, (stream) => stream.startsWith("s1-"));
  } finally {
    await a.close();
    await b.close();
    await sql.end();
  }
});

Deno.test("PostgreSQL: a commit that follows more rows than its answer carries pulls them, and the copy is exact", async () => {
  await using db = await testDatabase();
  const a = await openPostgresStore(db.url, { pollMs: 60_000 });
  const b = await openPostgresStore(db.url, { pollMs: 60_000 });
  const toldB = listen(b);
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    // A's 1,200 rows and b's one at once: when b's commit waits for a's, its answer can carry at most 500 of them.
    for (let round = 0; round < 5; round++) {
      await Promise.all([
        a.append(`big-${round}`, Array.from({ length: 1200 }, (_, i) => personAdded(`big-${round}-${i}`))),
        b.append(`small-${round}`, [personAdded(`small-${round}`)]),
      ]);
    }
    await waitUntil("replica b has the database's head", 10_000, async () => {
      return b.head().position === (await b.databaseHead()).position;
    });
    const rows = await logRows(sql);
    assert.equal(rows.length, 5 * 1201);
    await assertFollowed("b", b, toldB, rows, (stream) => stream.startsWith("small-"));
  } finally {
    await a.close();
    await b.close();
    await sql.end();
  }
});

Deno.test("PostgreSQL: a replica restarted on a copy that ends in left-out calls starts at the database's head, and completes exactly", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const cachePath = join(dir.path, "log-cache.db");
  const a = await openPostgresStore(db.url, { pollMs: 60_000 });
  let b = await openPostgresStore(db.url, { pollMs: 60_000, cachePath });
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    // A's rows end in calls, so b's copy ends in a run of calls it left out.
    await a.append("s0", [personAdded("first"), mcpCalled("c1"), personAdded("second"), mcpCalled("c2")]);
    await a.append("s0-calls", [mcpCalled("c3"), mcpCalled("c4")]);
    await b.append("s1", [personAdded("b")]);
    await a.append("s0-calls", [mcpCalled("c5"), mcpCalled("c6")]);
    await waitUntil("replica b has the database's head", 10_000, async () => {
      return b.head().position === (await b.databaseHead()).position;
    });
    assert.deepEqual(b.head(), await b.databaseHead());
    await b.close();
    // More calls while b is away, then b starts again on its copy.
    await a.append("s0-calls", [mcpCalled("c7")]);
    b = await openPostgresStore(db.url, { pollMs: 60_000, cachePath });
    assert.deepEqual(b.head(), await b.databaseHead(), "b started at the database's head");
    const rows = await logRows(sql);
    const told = listen(b);
    await b.append("s1", [personAdded("b-again")]);
    rows.push(
      ...await logRows(sql, rows.length),
    );
    assert.deepEqual(
      b.readFrom(0, 100).map((event) => event.position),
      rows.filter((row) => row.type !== "McpCalled").map((row) => Number(row.position)),
      "b's copy holds no call of a's",
    );
    assert.deepEqual(told.spans, [{ after: rows.length - 1, through: rows.length }]);
    // A span from the start is asserted in assertFollowed; here the restart's copy must complete exactly.
    told.spans.unshift({ after: 0, through: rows.length - 1 });
    told.events.unshift(...b.readFrom(0, 100).filter((event) => event.position < rows.length));
    await assertFollowed("b", b, told, rows, (stream) => stream.startsWith("s1"));
  } finally {
    await a.close();
    await b.close();
    await sql.end();
  }
});

Deno.test("PostgreSQL: completing some positions fetches only the calls left out there, cutting the runs around them, and the copy then completes exactly", async () => {
  await using db = await testDatabase();
  const a = await openPostgresStore(db.url, { pollMs: 60_000 });
  const b = await openPostgresStore(db.url, { pollMs: 60_000 });
  const told = listen(b);
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    // B's copy leaves out a's calls: positions 2-7 as one run, 9-10 as another.
    await b.append("s1", [personAdded("b1")]);
    for (let i = 0; i < 3; i++) await a.append("s0-calls", [mcpCalled(`c${i}a`), mcpCalled(`c${i}b`)]);
    await b.append("s1", [personAdded("b2")]);
    await a.append("s0-calls", [mcpCalled("c3a"), mcpCalled("c3b")]);
    await b.append("s1", [personAdded("b3")]);
    const positions = () => b.readFrom(0, 100).map((event) => event.position);
    assert.deepEqual(positions(), [1, 8, 11]);
    // The middle of the first run, then a part that spans the end of the first, a row b has, and the second.
    await b.complete(5, 4);
    assert.deepEqual(positions(), [1, 4, 5, 8, 11]);
    await b.complete(9, 7);
    assert.deepEqual(positions(), [1, 4, 5, 7, 8, 9, 11]);
    assert.deepEqual(b.head(), await b.databaseHead(), "the runs left keep the head");
    await b.complete();
    const rows = await logRows(sql);
    const complete = b.readFrom(0, 100);
    assert.equal(complete.length, rows.length, "the completed copy has every event");
    complete.forEach((event, i) => {
      const row = rows[i]!;
      assert.deepEqual(
        [event.position, event.stream, event.stream_version, event.type, event.prev_hash, event.hash],
        [Number(row.position), row.stream, row.stream_version, row.type, row.prev_hash, row.hash],
        `the copy at ${i + 1}`,
      );
    });
    assert.deepEqual(b.head(), await b.databaseHead());
    // And it goes on following: the next own commit follows the completed copy.
    await b.append("s1", [personAdded("b4")]);
    assert.deepEqual(b.head(), await b.databaseHead());
    assert.equal(told.spans[told.spans.length - 1]!.through, b.head().position);
  } finally {
    await a.close();
    await b.close();
    await sql.end();
  }
});
