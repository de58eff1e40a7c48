/**
 * Checkpoints held in memory over events no projection handles (MCP calls on
 * the shared log): a crash at any point re-applies exactly the events after
 * each stored checkpoint, none twice and none skipped, also when another
 * process shares the projections file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { EventType, RecordedEvent } from "../../events/types.ts";
import {
  checkpointOf,
  HOLD_CHECKPOINTS_FOR,
  openProjector,
  type Projector,
} from "../../projections/projector.ts";
import type { Projection } from "../../projections/projection.ts";
import { tempDir } from "../helpers/temp.ts";

/** A projection that keeps the positions of the events it handles; a second apply of one fails (primary key). */
function positions(name: string, type: EventType): Projection {
  return {
    name,
    handles: [type],
    tables: [`${name}_rows`],
    init(db: DatabaseSync) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${name}_rows (position INTEGER PRIMARY KEY)`);
    },
    apply(db: DatabaseSync, event: RecordedEvent) {
      db.prepare(`INSERT INTO ${name}_rows (position) VALUES (?)`).run(event.position);
    },
  };
}

const PROJECTIONS = [positions("people", "PersonAdded"), positions("folders", "FolderCreated")];

/** A log of mostly MCP calls, with people and folders now and then (long runs of calls only). */
function log(length: number, seed: number): RecordedEvent[] {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const events: RecordedEvent[] = [];
  for (let position = 1; position <= length; position++) {
    const draw = random();
    const type: EventType = draw < 0.01 ? "PersonAdded" : draw < 0.015 ? "FolderCreated" : "McpCalled";
    events.push({ type, position, stream: "s", data: {}, metadata: {} } as unknown as RecordedEvent);
  }
  return events;
}

function rows(db: DatabaseSync, name: string): number[] {
  return (db.prepare(`SELECT position FROM ${name}_rows ORDER BY position`).all() as Array<
    { position: number }
  >)
    .map((row) => row.position);
}

function stored(db: DatabaseSync): Map<string, number> {
  const all = db.prepare("SELECT name, position FROM projection_checkpoints").all() as Array<
    { name: string; position: number }
  >;
  return new Map(all.map((row) => [row.name, row.position]));
}

/** Applies the log from the projector's position up to `to`, in batches of 1–40 events. */
function applyUpTo(projector: Projector, events: readonly RecordedEvent[], to: number, seed: number): void {
  let state = seed;
  while (projector.position < to) {
    state = (state * 48_271) % 2_147_483_647;
    const size = 1 + (state % 40);
    const from = projector.position;
    projector.applyBatch(events.slice(from, Math.min(to, from + size)));
  }
}

/** Each projection holds exactly the events it handles up to its checkpoint (`upTo` at least). */
function assertExact(db: DatabaseSync, events: readonly RecordedEvent[], upTo: number): void {
  const expect = (type: EventType, name: string) => {
    const reached = checkpointOf(db, name);
    assert.ok(reached >= upTo, `${name} at ${reached}, below ${upTo}`);
    return events.filter((event) => event.type === type && event.position <= reached).map((event) =>
      event.position
    );
  };
  assert.deepEqual(rows(db, "people"), expect("PersonAdded", "people"));
  assert.deepEqual(rows(db, "folders"), expect("FolderCreated", "folders"));
}

Deno.test("a batch no projection takes opens no transaction; its checkpoints are held, read and written later", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "projections.db");
  const events: RecordedEvent[] = [];
  const add = (type: EventType) =>
    events.push(
      { type, position: events.length + 1, stream: "s", data: {}, metadata: {} } as unknown as RecordedEvent,
    );
  add("PersonAdded");
  for (let i = 0; i < 30; i++) add("McpCalled");
  const projector = openProjector(path, PROJECTIONS);
  projector.applyBatch(events.slice(0, 1));
  // Only the projection that got rows has its checkpoint written.
  assert.deepEqual(stored(projector.db), new Map([["people", 1]]));
  const changes = (projector.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
  projector.applyBatch(events.slice(1));
  assert.equal((projector.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n, changes);
  assert.equal(projector.position, 31);
  assert.deepEqual(stored(projector.db), new Map([["people", 1]]));
  assert.equal(checkpointOf(projector.db, "people"), 31);
  // A batch with rows for one projection writes that one's checkpoint only.
  add("FolderCreated");
  projector.applyBatch(events.slice(31));
  assert.deepEqual(stored(projector.db), new Map([["people", 1], ["folders", 32]]));
  projector.close();
  const again = openProjector(path, PROJECTIONS);
  assert.deepEqual(stored(again.db), new Map([["people", 32], ["folders", 32]]));
  assert.equal(again.position, 32);
  again.close();
});

Deno.test("a held checkpoint is written once it lags by HOLD_CHECKPOINTS_FOR events", async () => {
  await using dir = await tempDir();
  const events = log(HOLD_CHECKPOINTS_FOR * 3, 7).map((event) =>
    event.position === 1 ? event : { ...event, type: "McpCalled" as const } as RecordedEvent
  );
  const projector = openProjector(join(dir.path, "projections.db"), PROJECTIONS);
  applyUpTo(projector, events, events.length, 11);
  for (const position of stored(projector.db).values()) {
    assert.ok(events.length - position < HOLD_CHECKPOINTS_FOR, `stored ${position} of ${events.length}`);
  }
  projector.db.close();
});

Deno.test("crash safety: killed at any batch, held checkpoints recover exactly, also beside another process", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "projections.db");
  const events = log(6_000, 3);
  let projector = openProjector(path, PROJECTIONS);
  let crashes = 0;
  for (let round = 1; projector.position < events.length; round++) {
    const to = Math.min(events.length, projector.position + 1 + ((round * 7_919) % 900));
    applyUpTo(projector, events, to, round);
    assertExact(projector.db, events, projector.position);
    if (round % 3 === 0) {
      // Another process sharing the file catches up further, from the stored checkpoints, and closes.
      const other = openProjector(path, PROJECTIONS);
      assert.ok(other.position <= projector.position);
      applyUpTo(other, events, Math.min(events.length, projector.position + 50), round + 1);
      other.close();
      applyUpTo(projector, events, Math.min(events.length, projector.position + 60), round + 2);
      assertExact(projector.db, events, projector.position);
    }
    // A crash: the connection goes without writing what the projector holds.
    projector.db.close();
    crashes++;
    projector = openProjector(path, PROJECTIONS);
    assertExact(projector.db, events, projector.position);
  }
  assert.ok(crashes > 5);
  assertExact(projector.db, events, events.length);
  projector.close();
});

Deno.test("calls the store left out are passed over by the span, and refused when a projection takes them", async () => {
  await using dir = await tempDir();
  const event = (type: EventType, position: number) =>
    ({ type, position, stream: "s", data: {}, metadata: {} }) as unknown as RecordedEvent;
  const projector = openProjector(join(dir.path, "projections.db"), PROJECTIONS);
  try {
    // Positions 2-9 and 11-15 are calls the shared log's copy left out (events/postgres/local_copy.ts).
    projector.applyBatch([event("PersonAdded", 1)], 9);
    assert.equal(projector.position, 9);
    projector.applyBatch([event("FolderCreated", 10)], 15);
    assert.equal(projector.position, 15);
    projector.applyBatch([], 20);
    assert.equal(projector.position, 20);
    assert.deepEqual(rows(projector.db, "people"), [1]);
    assert.deepEqual(rows(projector.db, "folders"), [10]);
  } finally {
    projector.close();
  }
  const taking = openProjector(join(dir.path, "taking.db"), [positions("calls", "McpCalled")]);
  try {
    assert.throws(() => taking.applyBatch([], 5), /the calls projection takes them/);
    assert.throws(() => taking.applyBatch([event("McpCalled", 1)], 5), /the calls projection takes them/);
    assert.equal(taking.position, 0);
    taking.applyBatch([event("McpCalled", 1)]);
    assert.equal(taking.position, 1);
  } finally {
    taking.close();
  }
});
