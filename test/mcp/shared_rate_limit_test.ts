/**
 * The MCP endpoint on replicas' shared rate buckets (a real PostgreSQL): a
 * tool call's token is taken in the statement that writes its audit entry,
 * so of calls sent at once past a key's burst exactly the allowed ones are
 * answered and audited, the others get 429 and leave nothing; a key known to
 * be empty is refused without a round trip, and one that refilled since is
 * not; a request that writes no audit entry (tools/list) takes its token on
 * its own; a batch refused at its first call audits none; and PostgreSQL
 * stopped while calls wait in a group commit answers all of them 503, none
 * audited.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import type { PostgresEventStore } from "../../events/postgres/store.ts";
import { openApp, type SergoApp } from "../../src/app.ts";
import { ensureFolderPath } from "../../src/domain/folders.ts";
import { createAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { openSharedRateLimiter } from "../../src/mcp/shared_rate_limit.ts";
import { createSergoDatabase, startThrowawayCluster, testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";
import { post } from "./_fixture.ts";

const LIST = { jsonrpc: "2.0", method: "tools/call", params: { name: "list_documents", arguments: {} } };
const REFUSED = /^Too many calls with this key: at most 0\.01 a second — try again in \d+ s\.$/;

/** An app on `url` with a person and `keys` keys reading one folder; the endpoint with a shared limiter. */
async function setUp(url: string, dir: string, keys: number, burst: number) {
  const app = await openApp(dir, { databaseUrl: url });
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = await ensureFolderPath(app, { personId: ava.person_id, path: "Decks" }, "test");
  const values: string[] = [];
  for (let i = 0; i < keys; i++) {
    const { value } = await createAgentKey(app, {
      personId: ava.person_id,
      name: `decks-${i}`,
      description: "Decks.",
      canRead: { folders: [folder.folder_id], documents: [] },
    }, "test");
    values.push(value);
  }
  // One token refilled every 100 s: nothing refills while the test runs, however slow the machine.
  const limiter = await openSharedRateLimiter(url, { perSecond: 0.01, burst });
  const endpoint = createMcpEndpoint({
    db: app.db,
    store: app.store,
    limiter,
    settings: { rateLimitPerSecond: 0.01, rateLimitBurst: burst },
  });
  return { app, limiter, endpoint, keys: values };
}

async function auditedInDatabase(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM sergo_events WHERE type = 'McpCalled'`;
    return row!.n;
  } finally {
    await sql.end();
  }
}

function audited(app: SergoApp): number {
  return app.store.readFrom(0, 10_000).filter((e) => e.type === "McpCalled").length;
}

Deno.test("shared buckets: of calls sent at once past the burst, exactly the allowed ones are answered and audited, in one round trip each", async (t) => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const { app, limiter, endpoint, keys } = await setUp(db.url, dir.path, 3, 3);
  const [one, two, three] = keys as [string, string, string];
  try {
    await t.step(
      "six tool calls at once on a burst of 3: three answered and audited, three 429",
      async () => {
        const answers = await Promise.all(
          Array.from({ length: 6 }, async (_, i) => {
            const response = await post(endpoint, one, { ...LIST, id: i + 1 });
            return {
              status: response.status,
              retry: response.headers.get("retry-after"),
              body: await response.json(),
            };
          }),
        );
        const answered = answers.filter((a) => a.status === 200);
        const refused = answers.filter((a) => a.status === 429);
        assert.equal(answered.length, 3, JSON.stringify(answers));
        assert.equal(refused.length, 3, JSON.stringify(answers));
        for (const a of answered) assert.equal(a.body.result.isError, false);
        for (const a of refused) {
          assert.match(a.body.error.message, REFUSED);
          assert.ok(Number(a.retry) >= 1);
        }
        assert.equal(audited(app), 3);
        assert.equal(await auditedInDatabase(db.url), 3);
        // The tokens went with the audit entries: no statement of the limiter's own.
        assert.equal(limiter.statements, 0);
      },
    );

    await t.step(
      "the next call is refused here, without asking the database, and leaves nothing",
      async () => {
        const commits = (app.store as PostgresEventStore).transactions;
        const response = await post(endpoint, one, { ...LIST, id: 7 });
        assert.equal(response.status, 429);
        assert.match((await response.json()).error.message, REFUSED);
        // Neither a take of its own nor a group commit: its tool never ran.
        assert.equal(limiter.statements, 0);
        assert.equal((app.store as PostgresEventStore).transactions, commits);
        assert.equal(await auditedInDatabase(db.url), 3);
      },
    );

    await t.step("requests that write no audit entry take their token on their own", async () => {
      const list = (id: number) => post(endpoint, two, { jsonrpc: "2.0", id, method: "tools/list" });
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const response = await list(i + 1);
        await response.body?.cancel();
        statuses.push(response.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal(limiter.statements, 4);
      assert.equal(await auditedInDatabase(db.url), 3);
    });

    await t.step(
      "a batch whose token another replica took is refused whole: none of its calls is audited",
      async () => {
        const elsewhere = await openSharedRateLimiter(db.url, { perSecond: 0.01, burst: 3 });
        try {
          const keyId = app.store.readFrom(0, 1000).filter((e) => e.type === "AgentKeyCreated").at(-1)!.data
            .key_id as string;
          for (let i = 0; i < 3; i++) assert.deepEqual(await elsewhere.take(keyId), { allowed: true });
        } finally {
          await elsewhere.close();
        }
        const batch = await post(endpoint, three, [{ ...LIST, id: 10 }, { ...LIST, id: 11 }], {
          "mcp-protocol-version": "2025-03-26",
        });
        assert.equal(batch.status, 429);
        assert.match((await batch.json()).error.message, REFUSED);
        assert.equal(await auditedInDatabase(db.url), 3);
      },
    );
  } finally {
    await limiter.close();
    await app.close();
  }
});

Deno.test("shared buckets: a key refused here is answered again once its bucket refilled", async () => {
  await using db = await testDatabase();
  const limiter = await openSharedRateLimiter(db.url, { perSecond: 0.5, burst: 2 });
  try {
    const decisions = await Promise.all([limiter.take("k"), limiter.take("k"), limiter.take("k")]);
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, false]);
    assert.deepEqual(limiter.surelyRefused("k"), { allowed: false, retryAfterSeconds: 2 });
    // A token comes back within two seconds: no longer refused here, and the database agrees.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(limiter.surelyRefused("k"), null);
    assert.deepEqual(await limiter.take("k"), { allowed: true });
  } finally {
    await limiter.close();
  }
});

Deno.test("shared buckets: PostgreSQL stopped while calls wait in a group commit: every one is answered 503, none audited", async () => {
  await using cluster = await startThrowawayCluster();
  const url = await createSergoDatabase(cluster);
  await using dir = await tempDir();
  const { app, limiter, endpoint, keys } = await setUp(url, dir.path, 1, 100);
  try {
    const before = await auditedInDatabase(url);
    // Another session holds the chain head: the calls' group commit waits in PostgreSQL when it stops.
    const holder = postgres(url, { max: 1, onnotice: () => {} });
    const held = holder.begin(async (tx) => {
      await tx`SELECT position FROM sergo_log_head WHERE id = 1 FOR UPDATE`;
      await new Promise((resolve) => setTimeout(resolve, 60_000));
    }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const calls = Array.from({ length: 5 }, (_, i) => post(endpoint, keys[0]!, { ...LIST, id: i + 1 }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.stop();
    const answers = await Promise.all(calls.map(async (call) => {
      const response = await call;
      return { status: response.status, body: await response.json() };
    }));
    assert.deepEqual(answers.map((a) => a.status), [503, 503, 503, 503, 503]);
    for (const a of answers) assert.match(a.body.error.message, /could not be written to the audit log/);
    await holder.end({ timeout: 1 }).catch(() => {});
    await held;
    await cluster.start();
    // Back by itself: the next call is answered and audited, and only it.
    let status = 0;
    for (let tries = 0; tries < 50 && status !== 200; tries++) {
      const response = await post(endpoint, keys[0]!, { ...LIST, id: 100 + tries });
      status = response.status;
      await response.body?.cancel();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200);
    assert.equal(await auditedInDatabase(url), before + 1);
  } finally {
    await limiter.close();
    await app.close();
  }
});
