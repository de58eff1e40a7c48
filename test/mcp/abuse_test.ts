/**
 * Abuse controls of `/mcp`, through the server's HTTP handler with its
 * settings read from the environment: DNS rebinding (an Origin that matches a
 * Host that is not this machine) is refused, the rate limiter refills at its
 * rate up to its burst, and a refused call leaves no audit entry.
 */
import assert from "node:assert/strict";
import { served } from "./_served.ts";

const LIST = {
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_documents", arguments: {} },
};

function auditCount(s: Awaited<ReturnType<typeof served>>): number {
  return s.server.app.store.readFrom(0, 1_000_000).filter((event) => event.type === "McpCalled").length;
}

Deno.test("DNS rebinding: an Origin matching a Host that is not loopback is refused, and audits nothing", async () => {
  await using s = await served();
  const key = await s.key("reader", { folders: [], documents: [] });
  const call = async (url: string, headers: Record<string, string>) => {
    const response = await s.server.handler(
      new Request(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${key}`,
          ...headers,
        },
        body: JSON.stringify(LIST),
      }),
    );
    return { status: response.status, body: await response.text() };
  };
  // A page on evil.example whose name now points at 127.0.0.1: the browser sends its own Origin and Host.
  const rebound = await call("http://evil.example:8787/mcp", { origin: "http://evil.example:8787" });
  assert.deepEqual(rebound, {
    status: 403,
    body:
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Origin \'http://evil.example:8787\' may not call this server."}}',
  });
  const forged = await call("http://127.0.0.1:8787/mcp", {
    origin: "http://evil.example:8787",
    host: "evil.example:8787",
  });
  assert.equal(forged.status, 403);
  assert.equal(auditCount(s), 0);
  // The same request from this machine's own origin is answered (and audited).
  for (const host of ["127.0.0.1:8787", "localhost:8787"]) {
    const own = await call(`http://${host}/mcp`, { origin: `http://${host}` });
    assert.equal(own.status, 200, own.body);
  }
  assert.equal(auditCount(s), 2);
});

Deno.test("DNS rebinding: an allowed origin is answered; the same origin on another port is not", async () => {
  await using s = await served({ SERGO_ALLOWED_ORIGINS: "https://app.example" });
  const key = await s.key("reader", { folders: [], documents: [] });
  assert.equal((await s.post(key, LIST, { origin: "https://app.example" })).status, 200);
  const other = await s.post(key, LIST, { origin: "https://app.example:444" });
  assert.equal(other.status, 403);
  await other.body?.cancel();
  assert.equal(auditCount(s), 1);
});

Deno.test("the rate limiter refills at its rate up to its burst; refused calls get 429 and leave no audit entry", async () => {
  let nowMs = Date.parse("2026-12-01T10:00:00Z");
  await using s = await served({ SERGO_RATE_LIMIT: "2", SERGO_RATE_BURST: "3" }, {
    now: () => new Date(nowMs),
  });
  const key = await s.key("reader", { folders: [], documents: [] });
  const statuses = async (n: number) => {
    const out: Array<number | string> = [];
    for (let i = 0; i < n; i++) {
      const response = await s.post(key, LIST);
      const retry = response.headers.get("retry-after");
      const body = await response.json();
      out.push(response.status === 429 ? `429 after ${retry}: ${body.error.message}` : response.status);
    }
    return out;
  };
  const refused = "429 after 1: Too many calls with this key: at most 2 a second — try again in 1 s.";
  assert.deepEqual(await statuses(4), [200, 200, 200, refused]);
  assert.equal(auditCount(s), 3);
  nowMs += 499; // just short of one call at 2 a second
  assert.deepEqual(await statuses(1), [refused]);
  nowMs += 1; // one call refilled
  assert.deepEqual(await statuses(2), [200, refused]);
  nowMs += 1_000; // two more
  assert.deepEqual(await statuses(3), [200, 200, refused]);
  nowMs += 60_000; // a long pause refills the burst, never more
  assert.deepEqual(await statuses(4), [200, 200, 200, refused]);
  assert.equal(auditCount(s), 3 + 1 + 2 + 3, "one McpCalled per answered call, none for the refused");
});

Deno.test("X-Sergo-End-User: 200 characters are taken (and audited), 201 are refused with the limit", async () => {
  await using s = await served();
  const key = await s.key("reader", { folders: [], documents: [] });
  const taken = await s.post(key, LIST, { "x-sergo-end-user": "é".repeat(200) });
  assert.equal(taken.status, 200);
  await taken.body?.cancel();
  const refused = await s.post(key, LIST, { "x-sergo-end-user": "é".repeat(201) });
  assert.equal(refused.status, 400);
  assert.equal(
    (await refused.json()).error.message,
    "X-Sergo-End-User must be at most 200 characters without control characters.",
  );
  assert.equal(auditCount(s), 1);
});

Deno.test("batches (2025-03-26): 50 messages are answered, 51 are refused whole and audit nothing", async () => {
  await using s = await served();
  const key = await s.key("reader", { folders: [], documents: [] });
  const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ ...LIST, id: i + 1 }));
  const version = { "mcp-protocol-version": "2025-03-26" };
  const fifty = await s.post(key, batch(50), version);
  assert.equal(fifty.status, 200);
  assert.equal((await fifty.json()).length, 50);
  assert.equal(auditCount(s), 50);
  const fiftyOne = await s.post(key, batch(51), version);
  assert.equal(fiftyOne.status, 400);
  assert.equal((await fiftyOne.json()).error.message, "A batch may hold at most 50 messages.");
  assert.equal(auditCount(s), 50);
});
