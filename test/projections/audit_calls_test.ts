/**
 * The audit view on the shared log reads the MCP calls' entries from
 * PostgreSQL (`sergo_audit_calls`, events/postgres/audit_calls.ts) instead of
 * keeping them in each replica's projections: every read it answers — pages
 * with every filter, the actions, a key's usage, an export's range — must be
 * what the embedded view, which keeps the calls, answers for the same log.
 * The log is the audit workload's (test/audit/_workload.ts: two people,
 * renamed, rolled and deleted keys, end users), imported as `sergo migrate`
 * imports, and both logs then get the same odd calls through each store's
 * own append.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { StoredRow } from "../../events/hash_chain.ts";
import { openPostgresStore } from "../../events/postgres/store.ts";
import type { SergoEvent } from "../../events/types.ts";
import {
  agentKeyUsage,
  agentKeyUsageFrom,
  auditActions,
  auditActionsFrom,
  type AuditFilters,
  auditRange,
  auditRangeFrom,
  auditView,
  auditViewWithoutCalls,
  queryAudit,
  queryAuditFrom,
} from "../../projections/audit_view.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openProjector } from "../../projections/projector.ts";
import { openInstall } from "../audit/_workload.ts";
import { testDatabase } from "../helpers/postgres.ts";

/** Calls the workload has not made: an action named by the tool, the end user only in the metadata, odd times. */
function oddCalls(personId: string, keyId: string): SergoEvent[] {
  const call = (time: string, action: string, endUser: string | null, metaEndUser?: string): SergoEvent => ({
    type: "McpCalled",
    data: {
      key_id: keyId,
      person_id: personId,
      key_name: "energy",
      masked_key: "sgk_s_…zzzz",
      end_user: endUser,
      tool: "list_documents",
      arguments: {},
      action,
      details: { count: 2, "é": "😀" },
      is_error: false,
      duration_ms: 3,
    },
    metadata: { time, actor: `key-${keyId}`, ...(metaEndUser ? { end_user: metaEndUser } : {}) },
  });
  return [
    call("2026-10-24T09:30:00.000Z", "listing", null, "bob@corp"),
    call("2026-10-24T10:31:00+01:00", "mcp listing", "\u{1F600}x"),
    call("2026-10-24T09:32:00.000Z", "mcp listing", "\uffffx"),
    call("not a time", "mcp listing", "alice@corp"),
    // Strings JSON.stringify writes with \u escapes, and a backslash before "u0000" that is not one. (Not
    // \u0000 itself: SQLite's text ends at it, so the embedded view shows less than the event has.)
    call("2026-10-24T09:33:00.000Z", "mcp a\u001bb", "x\\u0000y\u001f"),
    call("2026-10-24T09:34:00.000Z", "mcp a\u001bb", "x\\u0000y\u001f"),
  ];
}

Deno.test("on the shared log, the audit view's reads with the calls from PostgreSQL are the embedded view's", async () => {
  const install = await openInstall();
  await using database = await testDatabase();
  const store = await openPostgresStore(database.url, { cachePath: join(install.dir, "cache.db") });
  try {
    const events = new DatabaseSync(install.eventsPath, { readOnly: true });
    const rows = events.prepare(
      "SELECT position, stream, stream_version, type, schema_version, data, metadata, prev_hash, hash FROM events ORDER BY position",
    ).all() as unknown as StoredRow[];
    events.close();
    await store.importRows(rows);
    const w = install.workload;
    const odd = oddCalls(w.ava.personId, w.research.keyId);
    for (const event of odd) {
      await install.store.append(`key-${w.research.keyId}`, [event]);
      await store.append(`key-${w.research.keyId}`, [event]);
    }
    await store.sync();
    install.projector.catchUp(install.store);
    const embedded = install.projector.db;
    const projector = openProjector(join(install.dir, "shared.db"), [auditViewWithoutCalls]);
    try {
      projector.catchUp(store);
      const shared = projector.db;
      const calls = store.auditCalls;
      const count = (db: DatabaseSync) =>
        (db.prepare("SELECT count(*) AS n FROM audit_entries WHERE type = 'McpCalled'").get() as {
          n: number;
        }).n;
      assert.equal(count(shared), 0);
      assert.ok(count(embedded) >= 10 + odd.length);

      const people = [w.ava.personId, w.ben.personId];
      const filterSets: Omit<AuditFilters, "personId" | "limit">[] = [
        {},
        { withoutSystem: true },
        { keyName: "research" },
        { keyName: "energy" },
        { keyName: "nobody's" },
        { keyId: w.research.keyId },
        { keyId: w.helper.keyId, keyName: "helper" },
        { endUser: "alice@corp" },
        { endUser: "bob@corp" },
        { action: "mcp search" },
        { action: "mcp listing" },
        { action: "key rolled" },
        { from: w.times.calls },
        { to: w.times["page viewed"] },
        { from: "2026-10-24", to: "2026-10-24" },
        { from: "2026-10-24T09:31:00Z", endUser: "\u{1F600}x" },
        { endUser: "x\\u0000y\u001f" },
        { action: "mcp a\u001bb" },
      ];
      for (const personId of people) {
        for (const set of filterSets) {
          const filters = { personId, ...set };
          const label = JSON.stringify(filters);
          for (const limit of [1000, 3]) {
            // Every page, as the console and the API walk them.
            let before: number | undefined;
            for (let page = 0; page < 100; page++) {
              const f = { ...filters, limit, ...(before === undefined ? {} : { before }) };
              const expected = queryAudit(embedded, f);
              assert.deepEqual(await queryAuditFrom(shared, calls, f), expected, label);
              before = expected.next_before;
              if (before === undefined) break;
            }
          }
          const head = store.head().position;
          for (const upTo of [head, head - 3, 40]) {
            const expected = auditRange(embedded, filters, upTo);
            const range = await auditRangeFrom(shared, calls, filters, upTo);
            assert.equal(range.total, expected.total, label);
            let after = 0;
            for (;;) {
              // (SQLite's rows have no prototype; the calls' are made here.)
              const want = expected.rowsAfter(after, 4).map((row) => ({ ...row }));
              assert.deepEqual((await range.rowsAfter(after, 4)).map((row) => ({ ...row })), want, label);
              if (want.length === 0) break;
              after = want[want.length - 1]!.position;
            }
          }
        }
        assert.deepEqual(await auditActionsFrom(shared, calls, personId), auditActions(embedded, personId));
      }
      for (const key of [w.research.keyId, w.helper.keyId]) {
        for (const person_id of people) {
          for (const now of ["2026-10-24T10:00:00Z", "2026-10-25T09:31:00Z", "2026-11-20T09:00:00Z"]) {
            const k = { person_id, key_id: key };
            // (Compared as JSON: SQLite's rows have no prototype.)
            assert.deepEqual(
              JSON.parse(JSON.stringify(await agentKeyUsageFrom(shared, calls, k, new Date(now)))),
              JSON.parse(JSON.stringify(agentKeyUsage(embedded, k, new Date(now)))),
            );
          }
        }
      }
      // Without the calls (the embedded log's) the reads are the local view's.
      assert.deepEqual(
        await queryAuditFrom(embedded, null, { personId: w.ava.personId, limit: 50 }),
        queryAudit(embedded, { personId: w.ava.personId, limit: 50 }),
      );
    } finally {
      projector.close();
    }
  } finally {
    await store.close();
    await install.close();
  }
});

Deno.test("an audit view built with the calls drops them on the shared log, and is built again with them off it", async () => {
  const install = await openInstall();
  try {
    const path = join(install.dir, "switch.db");
    const build = (projection: typeof auditView, at: string) => {
      const projector = openProjector(at, [projection]);
      projector.catchUp(install.store);
      const digest = projectionDigest(projector.db, [projection]);
      const calls = (projector.db.prepare("SELECT count(*) AS n FROM audit_entries WHERE type = 'McpCalled'")
        .get() as { n: number }).n;
      projector.close();
      return { digest, calls };
    };
    const withCalls = build(auditView, join(install.dir, "with.db"));
    const withoutCalls = build(auditViewWithoutCalls, join(install.dir, "without.db"));
    assert.notEqual(withCalls.digest, withoutCalls.digest);
    assert.ok(withCalls.calls > 0);
    assert.equal(withoutCalls.calls, 0);
    assert.deepEqual(build(auditView, path), withCalls);
    assert.deepEqual(build(auditViewWithoutCalls, path), withoutCalls);
    assert.deepEqual(build(auditViewWithoutCalls, path), withoutCalls);
    assert.deepEqual(build(auditView, path), withCalls);
  } finally {
    await install.close();
  }
});
