/**
 * `SERGO_DATABASE_URL` through the real entry point: a bad URL and an
 * unreachable server each stop with one line; the CLI writes to the shared log
 * and `log verify` walks it in PostgreSQL; each `serve`'s audit (its page of
 * the API and its export) shows the MCP calls of both as soon as they are
 * answered; and a key deleted through one `serve` stops working on another
 * `serve` on the same database (each with its own data directory, so its own
 * projections) within a second.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

/** A JSON-RPC message posted to a replica's `/mcp` with an agent key (and more headers); the answer's status. */
async function post(
  url: string,
  key: string,
  message: object,
  headers: Record<string, string> = {},
): Promise<number> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
  await response.body?.cancel();
  return response.status;
}

function initialize(url: string, key: string): Promise<number> {
  return post(url, key, {
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
}

/** An audited `list_documents` call through a replica's `/mcp`, naming `endUser`; its status. */
function listDocuments(url: string, key: string, endUser: string): Promise<number> {
  return post(
    url,
    key,
    { id: 2, method: "tools/call", params: { name: "list_documents", arguments: {} } },
    { "x-sergo-end-user": endUser },
  );
}

Deno.test("SERGO_DATABASE_URL: a URL that is not PostgreSQL's stops the command with one line that does not repeat it", async () => {
  await using dir = await tempDir();
  for (
    const url of ["mysql://root:hunter2@db/sergo", "postgres://root:hunter2@/sergo", "not a url hunter2"]
  ) {
    const result = await runCli(["log", "verify", "--data", dir.path], { env: { SERGO_DATABASE_URL: url } });
    assert.equal(result.code, 2, url);
    assert.equal(
      result.stderr,
      "SERGO_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/sergo\n",
    );
    assert.ok(!result.stderr.includes("hunter2"));
  }
});

Deno.test("SERGO_DATABASE_URL: an unreachable server stops serve with one line naming it, without the password", async () => {
  await using dir = await tempDir();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const result = await runCli(["serve", "--data", dir.path, "--port", "0"], {
    env: { SERGO_DATABASE_URL: `postgres://sergo:hunter2@127.0.0.1:${port}/sergo` },
  });
  assert.equal(result.code, 1);
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    new RegExp(`^sergo serve failed: Cannot open the log at 127\\.0\\.0\\.1:${port}/sergo: .*ECONNREFUSED`),
  );
  assert.ok(!result.stderr.includes("hunter2"));
});

Deno.test("two serve replicas on one PostgreSQL log: an upload through one is read on the other, a key deleted through one stops working on the other within 1 s", async () => {
  await using db = await testDatabase();
  await using dirA = await tempDir();
  await using dirB = await tempDir();
  const env = { SERGO_DATABASE_URL: db.url };
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, "--data", dirA.path], { env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim().split("\n").pop()!;
  };
  await cli("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
  await cli("folder", "add", "--person", "ava@example.com", "Energy outlooks");
  const key = await cli(
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "energy",
    "--description",
    "Decks",
    "--read",
    "Energy outlooks",
  );
  const personal = await cli("personal-key", "add", "--person", "ava@example.com");
  const original = new URL("../corpus/text/", import.meta.url);
  let file = "";
  for await (const entry of Deno.readDir(original)) if (!file && entry.isFile) file = entry.name;
  const uploadedPath = new URL(file, original).pathname;
  await cli(
    "upload",
    "--person",
    "ava@example.com",
    "--folder",
    "Energy outlooks",
    "--preset",
    "basic",
    uploadedPath,
  );
  // The log is in PostgreSQL, not in the data directory; log verify walks it there.
  await assert.rejects(Deno.stat(`${dirA.path}/events.db`), Deno.errors.NotFound);
  const verified = await cli("log", "verify");
  assert.match(verified, /^ok: \d+ events, head \d+ [0-9a-f]{64}$/);

  const environment = (name: string) => name === "SERGO_DATABASE_URL" ? db.url : undefined;
  const a = await startServer(loadConfig(["--data", dirA.path, "--port", "0"], environment), { quiet: true });
  try {
    // Replica B starts on an empty data directory: it builds its projections from the shared log.
    const b = await startServer(loadConfig(["--data", dirB.path, "--port", "0"], environment), {
      quiet: true,
    });
    try {
      assert.equal(await initialize(b.url, key), 200);
      // The upload made through A's data directory: its original is in the shared blobs, read on B.
      const row = b.app.db.prepare("SELECT sha256, status FROM cat_documents").get() as {
        sha256: string;
        status: string;
      };
      assert.equal(row.status, "searchable");
      assert.deepEqual(await b.app.blobs.read(row.sha256), await Deno.readFile(uploadedPath));
      // Calls through both replicas: each replica's audit shows every call, its own and the other's, as soon
      // as the call is answered (the calls' entries are read from PostgreSQL), and so does its export.
      const personalAuth = { authorization: `Bearer ${personal}` };
      const audited: string[] = [];
      for (const [i, replica] of [a, b, b, a, b].entries()) {
        assert.equal(await listDocuments(replica.url, key, `user-${i}`), 200);
        audited.push(`user-${i}`);
        for (const reader of [a, b]) {
          const page =
            await (await fetch(`${reader.url}/api/audit?action=${encodeURIComponent("mcp listing")}`, {
              headers: personalAuth,
            })).json() as { entries: { end_user: string; actor_kind: string }[] };
          assert.deepEqual(page.entries.map((entry) => entry.end_user), [...audited].reverse());
          const byUser =
            await (await fetch(`${reader.url}/api/audit?end_user=user-${i}`, { headers: personalAuth }))
              .json() as { entries: { action: string }[] };
          assert.deepEqual(byUser.entries.map((entry) => entry.action), ["mcp listing"]);
        }
      }
      // An export reads up to the replica's copy of the log, which follows the other's calls within moments.
      const since = Date.now();
      while (a.app.head().position !== b.app.head().position) {
        assert.ok(Date.now() - since < 2000, "the replicas' copies of the log differ after 2 s");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (const reader of [a, b]) {
        const exported = await fetch(`${reader.url}/api/audit/export?format=jsonl`, {
          headers: personalAuth,
        });
        assert.equal(exported.status, 200);
        const records = (await exported.text()).trim().split("\n").map((line) => JSON.parse(line));
        assert.deepEqual(
          records.filter((record) => record.audit?.action === "mcp listing").map((record) =>
            record.audit.end_user
          ),
          audited,
        );
      }
      const keys =
        await (await fetch(`${a.url}/api/keys`, { headers: { authorization: `Bearer ${personal}` } }))
          .json() as { keys: { id: string }[] };
      assert.equal(keys.keys.length, 1);
      const deleted = await fetch(`${a.url}/api/keys/${keys.keys[0]!.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${personal}` },
      });
      await deleted.body?.cancel();
      assert.ok(deleted.ok, `DELETE answered ${deleted.status}`);
      const started = Date.now();
      assert.equal(await initialize(a.url, key), 401, "the replica that deleted it still takes the key");
      while (await initialize(b.url, key) !== 401) {
        assert.ok(Date.now() - started < 1000, "the other replica still takes the deleted key after 1 s");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Both replicas' projections agree on the whole log.
      assert.equal(b.app.head().position, a.app.head().position);
      assert.equal(b.app.projector.position, a.app.projector.position);
    } finally {
      await b.stop();
    }
  } finally {
    await a.stop();
  }
});

Deno.test("SERGO_DATABASE_URL on a data directory whose projections came from its embedded log is refused, not served wrong", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const added = await runCli([
    "person",
    "add",
    "--name",
    "Ava Bennett",
    "--email",
    "ava@example.com",
    "--data",
    dir.path,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const result = await runCli(["document", "list", "--person", "ava@example.com", "--data", dir.path], {
    env: { SERGO_DATABASE_URL: db.url },
  });
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /^sergo document list failed: The projections in ".*projections\.db" are at event 1, past the log's head \(0\): they were built from another log; remove the file to rebuild it\n$/,
  );
});
