/**
 * Replicas appending at once follow each other through their own group
 * commits: each commit's answer carries the other replicas' rows committed
 * before it, so a busy replica does not pull them with a query of its own,
 * nor read its own rows back. What must hold whichever way the rows come:
 * every replica's copy is the database's log, row for row, and each
 * replica's subscribers are told every event once, in order, as the copy
 * reads it (another replica's MCP call is parsed only when its data is read).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore, type PostgresEventStore } from "../../events/postgres/store.ts";
import type { RecordedEvent, SergoEvent } from "../../events/types.ts";
import { testDatabase } from "../helpers/postgres.ts";

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

/** Asserts that a replica's copy is the database's log and that it told each event once, in order. */
function assertFollowed(name: string, store: PostgresEventStore, told: RecordedEvent[], rows: Row[]): void {
  const copy = store.readFrom(0, rows.length + 10);
  assert.equal(copy.length, rows.length, `${name}'s copy has every event`);
  copy.forEach((event, i) => {
    const row = rows[i]!;
    assert.deepEqual(
      [event.position, event.stream, event.stream_version, event.type, event.prev_hash, event.hash],
      [Number(row.position), row.stream, row.stream_version, row.type, row.prev_hash, row.hash],
      `${name}'s copy at ${i + 1}`,
    );
    assert.deepEqual(event.data, JSON.parse(row.data), `${name}'s copy's data at ${i + 1}`);
    assert.deepEqual({ ...told[i] }, { ...event }, `${name} told event ${i + 1} as its copy has it`);
  });
  assert.deepEqual(
    told.map((event) => event.position),
    rows.map((row) => Number(row.position)),
    `${name} told`,
  );
}

Deno.test("PostgreSQL: two replicas appending at once follow each other through their commits, with exact copies", async () => {
  await using db = await testDatabase();
  // No poll: the copies follow by notices, pulls and what the commits carry.
  const a = await openPostgresStore(db.url, { pollMs: 60_000 });
  const b = await openPostgresStore(db.url, { pollMs: 60_000 });
  const toldA: RecordedEvent[] = [];
  const toldB: RecordedEvent[] = [];
  a.subscribe((events) => toldA.push(...events));
  b.subscribe((events) => toldB.push(...events));
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
    // Each replica copies the other's rows, and only those (none of its own read back): together, every row once.
    assert.equal(
      carried + pulled,
      written,
      `${carried} rows carried and ${pulled} pulled of ${written} written`,
    );
    assert.ok(carried >= written / 2, `most rows come with the commits' answers (${carried} of ${written})`);
    const rows = await sql<Row[]>`
      SELECT position, stream, stream_version, type, data, metadata, prev_hash, hash
      FROM sergo_events ORDER BY position`;
    assert.equal(rows.length, written);
    assertFollowed("a", a, toldA, rows);
    assertFollowed("b", b, toldB, rows);
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
  const toldB: RecordedEvent[] = [];
  b.subscribe((events) => toldB.push(...events));
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
    const rows = await sql<Row[]>`
      SELECT position, stream, stream_version, type, data, metadata, prev_hash, hash
      FROM sergo_events ORDER BY position`;
    assert.equal(rows.length, 5 * 1201);
    assertFollowed("b", b, toldB, rows);
  } finally {
    await a.close();
    await b.close();
    await sql.end();
  }
});
