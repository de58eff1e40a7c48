/**
 * PostgreSQL goes away under a running `serve`: MCP calls are answered 503
 * (never unaudited) while it is down, and the same server answers again, each
 * call audited, once it is back, without a restart.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { createSergoDatabase, startThrowawayCluster } from "../helpers/postgres.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

async function listDocuments(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_documents", arguments: {} },
    }),
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("PostgreSQL stopped under serve: calls get 503, none answered unaudited, and serve recovers by itself", async () => {
  await using cluster = await startThrowawayCluster();
  const url = await createSergoDatabase(cluster);
  await using dir = await tempDir();
  const env = { SERGO_DATABASE_URL: url };
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, "--data", dir.path], { env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim().split("\n").pop()!;
  };
  await cli("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
  await cli("folder", "add", "--person", "ava@example.com", "Reports");
  const key = await cli(
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "reports",
    "--description",
    "Reports",
    "--read",
    "Reports",
  );
  const server = await startServer(
    loadConfig(
      ["--data", dir.path, "--port", "0"],
      (name) => name === "SERGO_DATABASE_URL" ? url : undefined,
    ),
    { quiet: true },
  );
  let answered = 0;
  try {
    assert.equal(await listDocuments(server.url, key), 200);
    answered++;
    await cluster.stop();
    const whileDown = [];
    for (let i = 0; i < 5; i++) whileDown.push(await listDocuments(server.url, key));
    assert.deepEqual(whileDown, [503, 503, 503, 503, 503]);
    await cluster.start();
    const started = Date.now();
    for (;;) {
      const status = await listDocuments(server.url, key);
      if (status === 200) {
        answered++;
        break;
      }
      assert.equal(status, 503);
      assert.ok(Date.now() - started < 15_000, "serve did not recover within 15 s of PostgreSQL's return");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await listDocuments(server.url, key), 200);
    answered++;
  } finally {
    await server.stop();
  }
  const sql = postgres(url, { max: 1 });
  try {
    const [row] = await sql`SELECT count(*)::int AS n FROM sergo_events WHERE type = 'McpCalled'`;
    assert.equal(
      row!.n,
      answered,
      "every call answered 200 has exactly one audit event, and no other call has one",
    );
  } finally {
    await sql.end();
  }
});
