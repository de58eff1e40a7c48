/**
 * `sergo_audit_calls` indexes every `McpCalled` event of the shared log in
 * the transaction that writes it, whichever way it is written, with what the
 * audit view filters on; a log that had calls before the table has them all
 * indexed when the table is made; and no call's text, however odd, fails its
 * append (the index reads the event's JSON in PostgreSQL, which refuses
 * `\u0000` and lone surrogates in a string it reads out).
 *
 * @module
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { LOG_SCHEMA_PART } from "../../../events/postgres/group_commit_sql.ts";
import { ensureSchema } from "../../../events/postgres/schema.ts";
import { openPostgresStore } from "../../../events/postgres/store.ts";
import type { SergoEvent } from "../../../events/types.ts";
import { testDatabase } from "../../helpers/postgres.ts";

function call(
  i: number,
  fields: { action?: string; tool?: string; endUser?: string | null; metaEndUser?: string; time?: string } =
    {},
): SergoEvent {
  return {
    type: "McpCalled",
    data: {
      key_id: `k${i % 3}`,
      person_id: `p${i % 2}`,
      key_name: "research",
      masked_key: "sgk_s_…abcd",
      end_user: fields.endUser ?? null,
      tool: fields.tool ?? "search",
      arguments: { query: "a\u0000b\ud800" },
      action: fields.action ?? "mcp search",
      details: { query: "a\u0000b\ud800", results: i },
      is_error: false,
      duration_ms: 1,
    },
    metadata: {
      time: fields.time ?? `2026-12-01T12:00:${String(i % 60).padStart(2, "0")}.000Z`,
      actor: `key-k${i % 3}`,
      ...(fields.metaEndUser ? { end_user: fields.metaEndUser } : {}),
    },
  };
}

const CALLS: SergoEvent[] = [
  call(1),
  call(2, { action: "listing", tool: "list_documents", metaEndUser: "bob@corp" }),
  call(3, { endUser: "alice@corp", metaEndUser: "bob@corp" }),
  call(4, { action: "x", tool: "x\ud800\u0000\\u0000", endUser: "y\u0000\\u0000\u001f" }),
  call(5, { time: "2026-12-01T13:00:05+01:00" }),
  call(6, { time: "not a time" }),
];

/** What the index must hold for `CALLS[i]` (the strings as JSON). */
const EXPECTED = [
  ["p1", "k1", null, "mcp search", "2026-12-01T12:00:01.000Z"],
  ["p0", "k2", "bob@corp", "mcp list_documents", "2026-12-01T12:00:02.000Z"],
  ["p1", "k0", "alice@corp", "mcp search", "2026-12-01T12:00:03.000Z"],
  ["p0", "k1", "y\u0000\\u0000\u001f", "mcp x\ud800\u0000\\u0000", "2026-12-01T12:00:04.000Z"],
  ["p1", "k2", null, "mcp search", "2026-12-01T12:00:05.000Z"],
  ["p0", "k0", null, "mcp search", "not a time"],
].map(([person_id, key_id, endUser, action, time_utc]) => ({
  person_id,
  key_id,
  end_user_json: endUser === null ? null : JSON.stringify(endUser),
  action_json: JSON.stringify(action),
  time_utc,
}));

Deno.test("PostgreSQL: every MCP call is indexed with its event, whichever way it is written, and a log's older calls when the index is made", async () => {
  await using db = await testDatabase();
  const sql = postgres(db.url, { max: 1, onnotice: () => {}, types: { bigint: postgres.BigInt } });
  const byStatement = await openPostgresStore(db.url, { pollMs: 60_000 });
  const byTransaction = await openPostgresStore(db.url, { pollMs: 60_000, appendBy: "transaction" });
  try {
    const other: SergoEvent = {
      type: "PersonAdded",
      data: { person_id: "p9", name: "Nine", email: "nine@example.com" },
      metadata: { time: "2026-12-01T12:00:00.000Z" },
    };
    // In one group commit with other events; then through the client-side transaction; then imported.
    await Promise.all([
      byStatement.append("people", [other]),
      ...CALLS.map((c) => byStatement.append("k", [c])),
    ]);
    for (const c of CALLS) await byTransaction.append("k", [c]);
    await byStatement.sync();
    const rows =
      await sql`SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash
      FROM sergo_events ORDER BY position`;
    await using copy = await testDatabase();
    const imported = await openPostgresStore(copy.url, { follow: false });
    await imported.importRows(rows.map((row) => ({ ...row, position: Number(row.position) })) as never);
    await imported.close();

    for (const url of [db.url, copy.url]) {
      const at = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const indexed = await at`
          SELECT e.position::int, c.person_id, c.key_id, c.end_user_json, c.action_json, c.time_utc
          FROM sergo_events e LEFT JOIN sergo_audit_calls c ON c.position = e.position ORDER BY e.position`;
        const calls = indexed.filter((row) => row.person_id !== null);
        assert.equal(indexed.length, 1 + 2 * CALLS.length);
        assert.equal(calls.length, 2 * CALLS.length, "every call, and nothing else");
        const byTime = (row: Record<string, unknown>) => {
          const { position: _, ...rest } = row;
          return rest;
        };
        const sorted = (list: Record<string, unknown>[]) =>
          [...list].map(byTime).sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);
        assert.deepEqual(sorted(calls), sorted([...EXPECTED, ...EXPECTED]));

        // The version before: no table, no trigger, no functions. Made again, it indexes the calls logged.
        await at.unsafe(`DROP TRIGGER sergo_audit_call ON sergo_events; DROP TABLE sergo_audit_calls;
          DROP FUNCTION sergo_audit_call(); DROP FUNCTION sergo_index_audit_call(bigint, text, text)`);
        await ensureSchema(at as unknown as Parameters<typeof ensureSchema>[0], LOG_SCHEMA_PART);
        const again = await at`
          SELECT c.position::int, c.person_id, c.key_id, c.end_user_json, c.action_json, c.time_utc
          FROM sergo_audit_calls c ORDER BY c.position`;
        assert.deepEqual([...again], calls);
      } finally {
        await at.end();
      }
    }
    // And the trigger is back: the next call is indexed with its event.
    await byTransaction.append("k", [call(7)]);
    const [last] = await sql<{ position: bigint }[]>`SELECT max(position) AS position FROM sergo_audit_calls`;
    assert.equal(Number(last!.position), (await byStatement.databaseHead()).position);

    // sergo_group_commit writes the columns the store sent, without the trigger's reading of the JSON: with
    // that reading made to fail, its appends still index their calls, and only the transaction's fail.
    await sql.unsafe(`CREATE OR REPLACE FUNCTION sergo_index_audit_call(p bigint, data text, metadata text)
      RETURNS void LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'read'; END $$`);
    await Promise.all(CALLS.map((c) => byStatement.append("k", [c])));
    const written = await sql`
      SELECT person_id, key_id, end_user_json, action_json, time_utc FROM sergo_audit_calls
      WHERE position > ${last!.position} ORDER BY position`;
    assert.deepEqual(
      [...written].sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1),
      [...EXPECTED].sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1),
    );
    await assert.rejects(byTransaction.append("k", [call(8)]), /read/);
  } finally {
    await byStatement.close();
    await byTransaction.close();
    await sql.end();
  }
});
