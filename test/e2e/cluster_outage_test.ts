/**
 * PostgreSQL restarted under three replicas behind HAProxy during a burst of
 * audited MCP calls: while it is down every call is answered 503 by the
 * replica (never 200 unaudited); once it is back every replica answers again
 * without a restart (same processes), and changes flow between them again
 * (a key made through one works on the others within a second). Every call
 * answered 200 has exactly one audit event in PostgreSQL.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { callTool } from "../helpers/mcp_http.ts";
import { createSergoDatabase, startThrowawayCluster } from "../helpers/postgres.ts";
import { startReplicas } from "../helpers/replicas.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

Deno.test("PostgreSQL restarted during a burst through HAProxy: 503 while down, none unaudited, every replica recovers by itself", async () => {
  await using database = await startThrowawayCluster();
  const databaseUrl = await createSergoDatabase(database);
  await using scratch = await tempDir();
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, "--data", scratch.path], {
      env: { SERGO_DATABASE_URL: databaseUrl },
    });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim().split("\n").pop()!;
  };
  await cli("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
  const personal = await cli("personal-key", "add", "--person", "ava@example.com");
  await using cluster = await startReplicas({
    databaseUrl,
    count: 3,
    env: { SERGO_RATE_LIMIT: "100000", SERGO_RATE_BURST: "100000" },
  });
  const created = await fetch(`${cluster.replicas[0]!.url}/api/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${personal}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "outage", description: "The outage burst" }),
  });
  assert.equal(created.status, 201);
  const key = (await created.json() as { value: string }).value;
  const pids = cluster.replicas.map((replica) => replica.pid);
  for (const replica of cluster.replicas) {
    const since = Date.now();
    while ((await callTool(replica.url, key, "list_documents", {})).status !== 200) {
      assert.ok(Date.now() - since < 1000, `replica ${replica.index} does not take the new key`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  // 0: up; 1: stopping; 2: down; 3: down for 1.5 s already; 4: starting again; 5: every replica answered again.
  let phase = 0;
  let stop = false;
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 }); // each request sent once
  const calls: { token: string; status: number; phase: number; body: string }[] = [];
  const load = Array.from({ length: 4 }, async (_, loop) => {
    for (let n = 0; !stop; n++) {
      const token = `outage${loop}x${n}`;
      const started = phase;
      const answer = await callTool(cluster.url, key, "search", { query: `${token} report` }, 1, client);
      // A call that spans two phases counts in neither.
      if (started === phase) calls.push({ token, status: answer.status, phase: started, body: answer.body });
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  phase = 1;
  await database.stop();
  phase = 2;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  phase = 3;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  phase = 4;
  await database.start();
  const since = Date.now();
  for (const replica of cluster.replicas) {
    while ((await callTool(replica.url, key, "search", { query: "recovered" }, 1, client)).status !== 200) {
      assert.ok(Date.now() - since < 15_000, `replica ${replica.index} did not recover within 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  phase = 5;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  stop = true;
  await Promise.all(load);
  client.close();

  const inPhase = (p: number) => calls.filter((call) => call.phase === p);
  assert.ok(
    inPhase(0).length >= 5 && inPhase(0).every((call) => call.status === 200),
    JSON.stringify(inPhase(0)),
  );
  // Calls keep failing fast while it stays down (the driver's reconnect backoff does not make them wait).
  assert.ok(inPhase(3).length >= 4, `only ${inPhase(3).length} calls answered after 1.5 s of the outage`);
  for (const call of [...inPhase(2), ...inPhase(3)]) {
    assert.equal(call.status, 503, JSON.stringify(call));
    assert.match(call.body, /"error"/, "the replica's own JSON-RPC answer, not the balancer's page");
  }
  assert.ok(
    inPhase(5).length >= 5 && inPhase(5).every((call) => call.status === 200),
    JSON.stringify(inPhase(5)),
  );
  // Without a restart: the same processes.
  assert.deepEqual(cluster.replicas.map((replica) => replica.pid), pids);
  assert.ok(cluster.replicas.every((replica) => replica.running));

  // Changes flow between the replicas again (each one's NOTIFY listener came back).
  const later = await fetch(`${cluster.replicas[0]!.url}/api/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${personal}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "after", description: "Made after the outage" }),
  });
  assert.equal(later.status, 201);
  const laterKey = (await later.json() as { value: string }).value;
  const made = Date.now();
  for (const replica of cluster.replicas.slice(1)) {
    while ((await callTool(replica.url, laterKey, "list_documents", {})).status !== 200) {
      assert.ok(
        Date.now() - made < 1000,
        `replica ${replica.index} does not take a key made after the outage`,
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const audited = new Map<string, number>();
    for (
      const row of await sql<{ token: string; n: number }[]>`
      SELECT split_part(data::jsonb->'arguments'->>'query', ' ', 1) AS token, count(*)::int AS n
      FROM sergo_events WHERE type = 'McpCalled' AND data::jsonb->'arguments'->>'query' LIKE 'outage%'
      GROUP BY 1`
    ) audited.set(row.token, row.n);
    for (const call of calls.filter((call) => call.status === 200)) {
      assert.equal(
        audited.get(call.token),
        1,
        `${call.token} answered 200 has ${audited.get(call.token) ?? 0} events`,
      );
    }
    for (const call of [...inPhase(2), ...inPhase(3)]) {
      assert.equal(
        audited.get(call.token),
        undefined,
        `${call.token}, answered 503 while down, is in the log`,
      );
    }
    for (const [token, n] of audited) assert.equal(n, 1, `${token} audited ${n} times`);
  } finally {
    await sql.end();
  }
});
