/**
 * The group commit's SQL and events/hash_chain.ts hash an event alike: the
 * same events, written by `sergo_group_commit` in a real PostgreSQL
 * (test/helpers/postgres.ts), get the hashes hash_chain.ts computes for them,
 * and the rows it stored verify as a chain. `sergo_group_commit` puts the
 * hashed text together in SQL, apart from hash_chain.ts: a field added,
 * dropped, reordered or written another way on one side only breaks the
 * chain here, not first on a replica's next `log verify`.
 *
 * @module
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { eventHash, GENESIS_HASH, type StoredRow, verifyRows } from "../../../events/hash_chain.ts";
import {
  type AppendAnswer,
  commitInOneStatement,
  type CommitItem,
  type EncodedAppend,
  encodeEvents,
  groupCommitPayload,
  LOG_SCHEMA_PART,
  ownRecords,
  type Sql,
} from "../../../events/postgres/group_commit_sql.ts";
import { ensureSchema } from "../../../events/postgres/schema.ts";
import { EVENT_VERSIONS, type SergoEvent, validateEvent } from "../../../events/types.ts";
import { testDatabase } from "../../helpers/postgres.ts";

/** Text that JSON, UTF-8 and SQL each write their own way: quotes, escapes, non-ASCII, astral, separators. */
const AWKWARD = 'Zoë "Q" \\ </script> \u2028\u2029 \t\n \u0000 é 漢字 😀 \u007f \'; -- $fn$';

function mcpCalled(i: number): SergoEvent {
  return validateEvent({
    type: "McpCalled",
    data: {
      key_id: `k${i}`,
      person_id: "p1",
      key_name: AWKWARD,
      masked_key: "sk-…abcd",
      end_user: i % 2 === 0 ? null : AWKWARD,
      tool: "search",
      // Keys whose order differs by UTF-16 code unit, by code point and by byte; numbers JSON writes oddly.
      arguments: {
        "😀": 1,
        "\uffff": 2,
        "é": 3,
        "Z": 4,
        "a": [1e21, 1e-7, -0, 0.1, 123456789012345680000, { "b": true, "a": null }],
        "": "",
      },
      action: "mcp search",
      details: { query: AWKWARD, count: i, nested: { z: [], y: {} } },
      is_error: false,
      duration_ms: 12.5,
    },
    metadata: { time: "2026-12-01T12:00:00.000Z", actor: `key-k${i}`, request_id: AWKWARD },
  });
}

function personAdded(i: number): SergoEvent {
  return validateEvent({
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: AWKWARD, email: `p${i}@example.com` },
    metadata: { time: "2026-12-01T12:00:00.000Z" },
  });
}

function encoded(items: CommitItem[]): EncodedAppend[] {
  return items.map((item) => ({ item, events: encodeEvents(item.events) }));
}

async function groupCommit(sql: Sql, batch: EncodedAppend[], known: number): Promise<AppendAnswer> {
  return await commitInOneStatement(sql, groupCommitPayload(batch), { writer: "test", known });
}

async function storedRows(sql: Sql): Promise<StoredRow[]> {
  const rows = await sql<(Omit<StoredRow, "position"> & { position: string })[]>`
    SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash
    FROM sergo_events ORDER BY position`;
  return rows.map((row) => ({ ...row, position: Number(row.position) }));
}

Deno.test("PostgreSQL: sergo_group_commit chains the same hashes as hash_chain.ts for the same events", async () => {
  await using db = await testDatabase();
  const sql = postgres(db.url, { max: 1, onnotice: () => {} }) as unknown as Sql;
  try {
    await ensureSchema(sql, LOG_SCHEMA_PART);
    // Streams whose names JSON escapes; two appends to one stream in one statement; one that conflicts
    // (written nothing, the chain goes on past it); a second statement that starts from the head the first left.
    // (Without NUL: PostgreSQL's text has none, and the stream name is a column of its own, not JSON text.)
    const awkwardStream = `document-${AWKWARD.replace("\u0000", "")}`;
    const first: CommitItem[] = [
      { stream: awkwardStream, events: [mcpCalled(1), mcpCalled(2)], expectedVersion: "no_stream" },
      { stream: "person-1", events: [personAdded(1)], expectedVersion: "any" },
      { stream: awkwardStream, events: [mcpCalled(3)], expectedVersion: 2 },
      { stream: "person-1", events: [personAdded(2)], expectedVersion: 5 },
    ];
    const second: CommitItem[] = [
      { stream: "person-1", events: [personAdded(3), personAdded(4)], expectedVersion: 1 },
      { stream: "key-😀", events: [mcpCalled(4)], expectedVersion: "no_stream" },
    ];
    const firstBatch = encoded(first);
    const firstAnswer = await groupCommit(sql, firstBatch, 0);
    assert.deepEqual(firstAnswer.results, [
      { first: 1, version: 2 },
      { first: 3, version: 1 },
      { first: 4, version: 3 },
      { conflict: true, actual: 1 },
    ]);
    const secondBatch = encoded(second);
    const secondAnswer = await groupCommit(sql, secondBatch, 4);
    assert.deepEqual(secondAnswer.results, [{ first: 5, version: 3 }, { first: 7, version: 1 }]);

    // What hash_chain.ts makes of the same events, from the objects themselves (its own canonical JSON).
    const written: [string, number, SergoEvent][] = [
      [awkwardStream, 1, first[0]!.events[0]!],
      [awkwardStream, 2, first[0]!.events[1]!],
      ["person-1", 1, first[1]!.events[0]!],
      [awkwardStream, 3, first[2]!.events[0]!],
      ["person-1", 2, second[0]!.events[0]!],
      ["person-1", 3, second[0]!.events[1]!],
      ["key-😀", 1, second[1]!.events[0]!],
    ];
    let prev = GENESIS_HASH;
    const expected = written.map(([stream, streamVersion, event], i) => {
      const hash = eventHash(prev, {
        position: i + 1,
        stream,
        stream_version: streamVersion,
        type: event.type,
        schema_version: EVENT_VERSIONS[event.type],
        data: event.data,
        metadata: event.metadata,
      });
      const link = { position: i + 1, stream, stream_version: streamVersion, prev_hash: prev, hash };
      prev = hash;
      return link;
    });

    const rows = await storedRows(sql);
    assert.deepEqual(
      rows.map(({ position, stream, stream_version, prev_hash, hash }) => ({
        position,
        stream,
        stream_version,
        prev_hash,
        hash,
      })),
      expected,
    );
    assert.deepEqual(verifyRows(rows), { ok: true, head: { position: 7, hash: prev }, count: 7 });
    // The statement's answers name the same heads, and the store's own computation of its rows (the
    // rows it puts into its copy without reading them back) agrees with both.
    assert.deepEqual(
      [firstAnswer.from, firstAnswer.from_hash, firstAnswer.head, firstAnswer.hash],
      [0, GENESIS_HASH, 4, expected[3]!.hash],
    );
    assert.deepEqual([secondAnswer.from, secondAnswer.head, secondAnswer.hash], [4, 7, prev]);
    const own = [...ownRecords(firstBatch, firstAnswer)!, ...ownRecords(secondBatch, secondAnswer)!];
    assert.deepEqual(own.map((record) => record.row), rows);
  } finally {
    await sql.end();
  }
});
