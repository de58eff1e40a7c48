/**
 * Mutations of the h-replica branch (issue 26, items 1 and 11): the
 * processing worker's handling of a lost database, the blob store's writes
 * without a client-side transaction, and the one first administrator across
 * replicas; (issue 32, item 2) replicas following each other through their
 * group commits' answers; (issue 30) the group commit's SQL and hash_chain.ts
 * hashing an event alike; (issue 32, item 2) the audit view's MCP calls read
 * from PostgreSQL. See mutations.ts for the shape.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const RESTART = "test/e2e/postgres_restart_work_test.ts";
const SETUP = "test/e2e/cluster_setup_test.ts";
const BLOBS = "test/blobs/postgres_blob_store_test.ts";
const FOLLOW = "test/events/postgres_follow_test.ts";
const GROUP_COMMIT_SQL = "test/events/postgres/group_commit_sql_test.ts";
const AUDIT_CALLS = "test/events/postgres/audit_calls_test.ts";
const AUDIT_CALLS_VIEW = "test/projections/audit_calls_test.ts";

export const MUTATIONS_REPLICA: Mutation[] = [
  {
    name:
      "processing worker: work ended by a lost database rethrown in the background (an unhandled rejection)",
    file: "src/workers/processing_worker.ts",
    from: 'console.error(pausedOrFailed("Processing", doc.document_id, error));',
    to: "if (error) throw error;",
    tests: [RESTART],
  },
  {
    name: "setup: the first administrator under a random id (two replicas' setups both succeed)",
    file: "src/domain/people_decide.ts",
    from: "const personId = FIRST_PERSON_ID;",
    to: 'const personId = crypto.randomUUID().replaceAll("-", "").slice(0, 12);',
    tests: [SETUP, "test/domain/people_decide_test.ts"],
  },
  {
    name: "blobs: a one-chunk blob's chunk not written with its row",
    file: "src/postgres_blob_store.ts",
    from: "FROM blob WHERE ${count} = 1`;",
    to: "FROM blob WHERE ${count} = 2`;",
    tests: [BLOBS],
  },
  {
    name: "blobs: the temporary row of a large blob left behind",
    file: "src/postgres_blob_store.ts",
    from: "await this.#sql`DELETE FROM sergo_blobs WHERE sha256 = ${temporary}`.catch(() => {});",
    to: "await Promise.resolve();",
    tests: [BLOBS],
  },
  {
    name: "blobs: unfinished blobs removed however recent",
    file: "src/postgres_blob_store.ts",
    from: "const before = unfinishedName(Date.now() - olderThanMs);",
    to: "const before = unfinishedName(Date.now());",
    tests: [BLOBS],
  },
  {
    name: "postgres: a group commit's answer carries no rows (each replica pulls every other replica's rows)",
    file: "events/postgres/group_commit_sql.ts",
    from: "ORDER BY position LIMIT ${CARRIED_ROWS}) e;",
    to: "ORDER BY position LIMIT 0) e;",
    tests: [FOLLOW],
  },
  {
    name:
      "postgres: another replica's notice pulled while an own group commit is in flight (own rows read back)",
    file: "events/postgres/store.ts",
    from: "if (this.#flushes.size > 0 || this.#flushScheduled) {",
    to: "if (this.#flushes.size < 0) {",
    tests: [FOLLOW],
  },
  {
    name: "postgres: sergo_group_commit hashes an event without its stream version",
    file: "events/postgres/group_commit_sql.ts",
    from: "|| ',\"stream_version\":' || (base + n) || ',\"type\":'",
    to: "|| ',\"type\":'",
    tests: [GROUP_COMMIT_SQL],
  },
  {
    name:
      "postgres: hash_chain.ts leaves an event's metadata out of its hash (sergo_group_commit still hashes it)",
    file: "events/hash_chain.ts",
    from: 'return `{"data":${event.data},"metadata":${event.metadata},"position":',
    to: 'return `{"data":${event.data},"position":',
    tests: [GROUP_COMMIT_SQL],
  },
  {
    name: "postgres: every group commit goes through the client-side transaction, however small",
    file: "events/postgres/store.ts",
    from: "if (chars > STATEMENT_LIMIT_CHARS) {",
    to: "if (chars > 0) {",
    tests: ["test/events/postgres_takes_test.ts"],
  },
  {
    name: "audit calls: a call's end user taken only from its data, not from the request's metadata",
    file: "events/postgres/audit_calls.ts",
    from: "WHEN json_typeof(m->'end_user') = 'string' THEN (m->'end_user')::text END;",
    to: "END;",
    tests: [AUDIT_CALLS, AUDIT_CALLS_VIEW],
  },
  {
    name: "audit view on the shared log: a page shows the local entries without the calls from PostgreSQL",
    file: "projections/audit_view.ts",
    from: "const rows = merged(local, remote, true);",
    to: "const rows = merged(local, [], true);",
    tests: [AUDIT_CALLS_VIEW],
  },
  {
    name: "audit view on the shared log: a view built with the calls keeps them (shown twice)",
    file: "projections/audit_view.ts",
    from: `db.exec("DELETE FROM audit_entries WHERE type = 'McpCalled'");`,
    to: `db.exec("SELECT 1");`,
    tests: [AUDIT_CALLS_VIEW],
  },
  {
    name: "following: a group commit's answer cut at its limit taken as if the rows it left out were calls",
    file: "events/postgres/local_copy.ts",
    from: " || carried.length >= CARRIED_ROWS) return null;",
    to: ") return null;",
    tests: [FOLLOW],
  },
  {
    name: "projector: checkpoints moved over calls the store left out although a projection takes them",
    file: "projections/projector.ts",
    from: "    if (taker) {",
    to: "    if (taker && !taker) {",
    tests: ["test/projections/projector_checkpoints_test.ts"],
  },
];
