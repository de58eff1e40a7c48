/**
 * PostgreSQL restarted (`pg_ctl stop -m immediate`, then start) under two
 * real replicas while uploads are being read and MCP calls are in flight:
 * both replica processes live through it and print nothing uncaught, the
 * replicas answer MCP calls again by themselves, every call answered 200 is
 * audited exactly once, every upload answered 201 is read and its result
 * recorded exactly once (work the outage interrupted is claimed again when
 * its lease runs out), and `log verify` passes.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { callTool } from "../helpers/mcp_http.ts";
import { createSergoDatabase, startThrowawayCluster } from "../helpers/postgres.ts";
import { type Replicas, startReplicas } from "../helpers/replicas.ts";
import { runCli, tempDir } from "../helpers/temp.ts";
import { STRAY_ERROR } from "../../src/cli/serve.ts";

const PDF = await Deno.readFile(`${CORPUS_DIR}/pdf/hebrew-rtl-word365.pdf`);

/** The PDF with a comment after its end, so each upload is new bytes (a new blob, a new reading). */
function uniquePdf(token: string): Uint8Array<ArrayBuffer> {
  const tail = new TextEncoder().encode(`\n% ${token}\n`);
  const bytes = new Uint8Array(PDF.byteLength + tail.byteLength);
  bytes.set(PDF);
  bytes.set(tail, PDF.byteLength);
  return bytes;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Fails the test with what both replicas printed when one has ended. */
function assertAlive(cluster: Replicas, when: string): void {
  for (const replica of cluster.replicas) {
    assert.equal(
      replica.exitCode,
      null,
      `replica ${replica.index} exited (code ${replica.exitCode}) ${when}:\n${replica.output().slice(-4000)}`,
    );
  }
}

Deno.test("PostgreSQL restarted while two replicas read uploads and answer MCP calls: both live on, nothing uncaught, each result recorded once", async () => {
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
    count: 2,
    // Short leases: work the outage interrupted is claimed again within seconds of the restart.
    env: { SERGO_WORK_LEASE_S: "3", SERGO_RATE_LIMIT: "100000", SERGO_RATE_BURST: "100000" },
  });
  const created = await fetch(`${cluster.replicas[0]!.url}/api/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${personal}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "restart", description: "The restart load" }),
  });
  assert.equal(created.status, 201);
  const key = (await created.json() as { value: string }).value;
  for (const replica of cluster.replicas) {
    const since = Date.now();
    while ((await callTool(replica.url, key, "list_documents", {})).status !== 200) {
      assert.ok(Date.now() - since < 5000, `replica ${replica.index} does not take the new key`);
      await sleep(20);
    }
  }

  let stop = false;
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 }); // each request sent once
  const calls: { token: string; status: number }[] = [];
  const uploads: { token: string; status: number; id: string | null; body: string }[] = [];
  // Two MCP callers through HAProxy, and an upload to each replica about every half second.
  const callers = Array.from({ length: 2 }, async (_, loop) => {
    for (let n = 0; !stop; n++) {
      const token = `restart${loop}x${n}`;
      try {
        const answer = await callTool(cluster.url, key, "search", { query: `${token} passage` }, n, client);
        calls.push({ token, status: answer.status });
      } catch {
        calls.push({ token, status: 0 }); // the connection dropped: not answered
      }
      await sleep(50);
    }
  });
  const upload = async (replica: Replicas["replicas"][number], token: string) => {
    try {
      const response = await fetch(`${replica.url}/api/documents?name=${token}.pdf&preset=basic`, {
        client,
        method: "POST",
        headers: { authorization: `Bearer ${personal}`, "content-type": "application/pdf" },
        body: uniquePdf(token),
      });
      const body = await response.text();
      const id = response.status === 201
        ? (JSON.parse(body) as { documents: { id: string }[] }).documents[0]!.id
        : null;
      uploads.push({ token, status: response.status, id, body });
    } catch {
      uploads.push({ token, status: 0, id: null, body: "" });
    }
  };
  const uploaders = cluster.replicas.map(async (replica) => {
    for (let n = 0; !stop; n++) {
      await upload(replica, `upload${replica.index}x${n}`);
      await sleep(500);
    }
  });
  await sleep(2000);
  // A burst just before the stop (two at a time, a person's uploads in flight are limited): each replica is
  // reading when the database goes, with more waiting, so readings end and start while it is away.
  await Promise.all(cluster.replicas.map(async (replica) => {
    for (let n = 0; n < 10; n += 2) {
      await Promise.all([
        upload(replica, `burst${replica.index}x${n}`),
        upload(replica, `burst${replica.index}x${n + 1}`),
      ]);
    }
  }));
  assertAlive(cluster, "before the restart");
  // Ten seconds, as in the report: readings in flight end while it is away, and new ones are due.
  await database.stop();
  await sleep(10_000);
  await database.start();
  const since = Date.now();
  for (const replica of cluster.replicas) {
    for (;;) {
      assertAlive(cluster, "after the restart");
      const answer = await callTool(replica.url, key, "search", { query: "recovered" }, 1, client)
        .catch((error) => ({ status: 0, body: String(error) }));
      if (answer.status === 200) break;
      assert.ok(
        Date.now() - since < 20_000,
        `replica ${replica.index} does not answer within 20 s of the restart (${answer.status} ${answer.body}):\n` +
          replica.output().slice(-4000),
      );
      await sleep(100);
    }
  }
  await sleep(2000);
  stop = true;
  await Promise.all([...callers, ...uploaders]);
  client.close();

  // Every upload answered 201 is read; the outage's interrupted readings are claimed again when their lease ends.
  const accepted = uploads.filter((upload) => upload.status === 201).map((upload) => upload.id!);
  assert.ok(accepted.length >= 6, `only ${accepted.length} uploads accepted: ${JSON.stringify(uploads)}`);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const results = async () =>
      await sql<{ id: string; type: string; n: number }[]>`
        SELECT substr(stream, 10) AS id, type, count(*)::int AS n FROM sergo_events
        WHERE stream LIKE 'document-%' AND type IN ('DocumentProcessed', 'ProcessingFailed') GROUP BY 1, 2`;
    const waited = Date.now();
    for (;;) {
      assertAlive(cluster, "while the uploads are read");
      const done = new Set((await results()).map((row) => row.id));
      const missing = accepted.filter((id) => !done.has(id));
      if (missing.length === 0) break;
      assert.ok(Date.now() - waited < 60_000, `${missing.length} uploads not read within 60 s: ${missing}`);
      await sleep(250);
    }
    await sleep(1000); // a second result, were one on its way
    for (const row of await results()) {
      assert.equal(row.type, "DocumentProcessed", `document ${row.id}: ${row.n} ${row.type}`);
      assert.equal(row.n, 1, `document ${row.id} has ${row.n} results`);
    }

    const audited = new Map<string, number>();
    for (
      const row of await sql<{ token: string; n: number }[]>`
        SELECT split_part(data::jsonb->'arguments'->>'query', ' ', 1) AS token, count(*)::int AS n
        FROM sergo_events WHERE type = 'McpCalled' AND data::jsonb->'arguments'->>'query' LIKE 'restart%'
        GROUP BY 1`
    ) audited.set(row.token, row.n);
    const answered = calls.filter((call) => call.status === 200);
    assert.ok(answered.length >= 10, `only ${answered.length} calls answered`);
    for (const call of answered) {
      assert.equal(
        audited.get(call.token),
        1,
        `${call.token}, answered 200, has ${audited.get(call.token) ?? 0} events`,
      );
    }
    for (const [token, n] of audited) assert.equal(n, 1, `${token} audited ${n} times`);
    // Calls answered while the database was away got the replica's 503, not a balancer's page or a 500.
    for (const call of calls) assert.ok([0, 200, 503].includes(call.status), JSON.stringify(call));
  } finally {
    await sql.end();
  }

  if (Deno.env.get("SERGO_TEST_VERBOSE")) {
    for (const replica of cluster.replicas) {
      console.log(`Replica ${replica.index} printed:\n${replica.output()}`);
    }
  }
  const verified = await runCli(["log", "verify", "--data", scratch.path], {
    env: { SERGO_DATABASE_URL: databaseUrl },
  });
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  assert.match(verified.stdout, /^ok: /m);
  assertAlive(cluster, "at the end");
  for (const replica of cluster.replicas) {
    // Nothing uncaught, and nothing that only serve's last line of defence kept from ending the process.
    for (const stray of ["Uncaught", STRAY_ERROR]) {
      assert.ok(
        !replica.output().includes(stray),
        `replica ${replica.index} printed "${stray}":\n${replica.output().slice(-4000)}`,
      );
    }
  }
});
