import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

async function initialize(url: string, key: string): Promise<Response> {
  return await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
}

Deno.test("a key made, renamed, rolled and deleted by the CLI reaches a running server within a second", async () => {
  await using dir = await tempDir();
  const server = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const d = ["--data", dir.path];
    assert.equal(
      (await runCli(["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com", ...d])).code,
      0,
    );
    assert.equal(
      (await runCli(["folder", "add", "--person", "ava@example.com", "Energy outlooks/Basic", ...d])).code,
      0,
    );
    const added = await runCli([
      "key",
      "add",
      "--person",
      "ava@example.com",
      "--name",
      "energy-outlooks",
      "--description",
      "Decks",
      "--read",
      "Energy outlooks",
      ...d,
    ]);
    assert.equal(added.code, 0, added.stderr);
    const key = added.stdout.trim().split("\n").pop()!;
    assert.match(key, /^sgk_s_/);
    const waitFor = async (check: () => Promise<boolean>) => {
      const start = Date.now();
      while (!(await check())) {
        assert.ok(Date.now() - start < 1000, "the server did not see the change within a second");
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await waitFor(async () => (await initialize(server.url, key)).status === 200);
    const rolled = await runCli([
      "key",
      "roll",
      "--person",
      "ava@example.com",
      "--name",
      "energy-outlooks",
      "--grace",
      "now",
      ...d,
    ]);
    assert.equal(rolled.code, 0, rolled.stderr);
    const newKey = rolled.stdout.trim().split("\n").pop()!;
    await waitFor(async () =>
      (await initialize(server.url, key)).status === 401 &&
      (await initialize(server.url, newKey)).status === 200
    );
    const list = await runCli(["key", "list", "--person", "ava@example.com", ...d]);
    assert.ok(list.stdout.includes(`sgk_s_…${newKey.slice(-4)}`));
    assert.ok(!list.stdout.includes(newKey), "key list shows keys masked only");
    assert.equal(
      (await runCli(["key", "delete", "--person", "ava@example.com", "--name", "energy-outlooks", ...d]))
        .code,
      0,
    );
    await waitFor(async () => (await initialize(server.url, newKey)).status === 401);
    // A bad argument: one clear line on stderr, non-zero exit, nothing written.
    const bad = await runCli(["key", "add", "--person", "ava@example.com", "--name", "Bad Name", ...d]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim().split("\n").length, 1);
    assert.match(bad.stderr, /Key name "Bad Name" is not allowed/);
    // The key's life is in the audit, and an export of it verifies offline.
    const out = `${dir.path}/audit.jsonl`;
    const exported = await runCli(["audit", "export", "--person", "ava@example.com", "--out", out, ...d]);
    assert.equal(exported.code, 0, exported.stderr);
    const lines = (await Deno.readTextFile(out)).trim().split("\n");
    const actions = lines.slice(0, -1).map((line) =>
      JSON.parse(line).action ?? JSON.parse(line).audit?.action
    );
    assert.ok(JSON.stringify(actions).includes("key rolled"), JSON.stringify(actions));
    const publicKey = await runCli(["audit", "public-key", ...d]);
    const keyFile = `${dir.path}/install.pem`;
    await Deno.writeTextFile(keyFile, publicKey.stdout);
    const verified = await runCli(["audit", "verify", out, "--public-key", keyFile, ...d]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^Intact: /);
  } finally {
    await server.stop();
  }
});
