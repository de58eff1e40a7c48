import assert from "node:assert/strict";
import {
  createAgentKey,
  createPersonalKey,
  deleteAgentKey,
  issueLoginToken,
  rollAgentKey,
} from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { testServer } from "./_server.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
};

function mcp(auth?: string): RequestInit {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (auth !== undefined) headers.authorization = auth;
  return { method: "POST", headers, body: JSON.stringify(INIT) };
}

async function expectAuth(
  response: Response,
  status: number,
  body: Record<string, string>,
  challenge: string | null,
) {
  assert.equal(response.status, status);
  assert.equal(await response.text(), JSON.stringify(body));
  assert.equal(response.headers.get("www-authenticate"), challenge);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
}

Deno.test("/mcp answers the reference's auth errors byte for byte, before MCP starts", async () => {
  let now = new Date("2026-11-29T12:00:00Z");
  const server = await testServer({ now: () => now });
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const { key, value } = await createAgentKey(server.app, {
    personId: ava.person_id,
    name: "energy-outlooks",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "t");
  const { value: personal } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
  const { value: login } = await issueLoginToken(server.app, { personId: ava.person_id }, "t");

  // No credentials, or not a Bearer one.
  for (const auth of [undefined, "", `Basic ${btoa("a:b")}`, "Bearer"]) {
    await expectAuth(
      await server.fetch("/mcp", mcp(auth)),
      401,
      {
        code: "no_auth",
        message: "No credentials — send a login token or an sgk_ key in the Authorization header",
      },
      'Bearer realm="sergo"',
    );
  }
  // Malformed: truncated, a changed character, or not an sgk_ key at all.
  for (
    const bad of [
      value.slice(0, -1),
      value.slice(0, -1) + (value.endsWith("A") ? "B" : "A"),
      "hello",
      "sgk_x_abc",
      "eyJhbGciOi.x.y",
    ]
  ) {
    await expectAuth(
      await server.fetch("/mcp", mcp(`Bearer ${bad}`)),
      401,
      {
        code: "bad_key",
        message:
          "Malformed key — the prefix or checksum doesn't match, so check the value wasn't truncated when copied",
      },
      'Bearer realm="sergo", error="invalid_token"',
    );
  }
  await expectAuth(
    await server.fetch("/mcp", mcp(`Bearer ${login}`)),
    401,
    { code: "no_auth", message: "MCP takes an agent key (sgk_s_…) in the Authorization header" },
    'Bearer realm="sergo", error="invalid_token"',
  );
  await expectAuth(
    await server.fetch("/mcp", mcp(`Bearer ${personal}`)),
    403,
    {
      code: "personal_key",
      message: "Personal keys work with the API only — make a key for an agent to use MCP",
    },
    null,
  );
  // A good key starts MCP.
  const ok = await server.fetch("/mcp", mcp(`Bearer ${value}`));
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).result.serverInfo.name, "energy-outlooks");

  // Rolled with a grace of one hour: both values work until then, then only the new one.
  const rolled = await rollAgentKey(
    server.app,
    { personId: ava.person_id, keyId: key.key_id, grace: "1h" },
    "t",
  );
  assert.equal((await server.fetch("/mcp", mcp(`Bearer ${value}`))).status, 200);
  assert.equal((await server.fetch("/mcp", mcp(`Bearer ${rolled.value}`))).status, 200);
  now = new Date(now.getTime() + 3_600_000);
  const unknown = {
    code: "bad_key",
    message: "Unknown key — it was deleted, or rolled and its old value has expired",
  };
  await expectAuth(
    await server.fetch("/mcp", mcp(`Bearer ${value}`)),
    401,
    unknown,
    'Bearer realm="sergo", error="invalid_token"',
  );
  assert.equal((await server.fetch("/mcp", mcp(`Bearer ${rolled.value}`))).status, 200);

  // Deleted: every value stops at once.
  await deleteAgentKey(server.app, { personId: ava.person_id, keyId: key.key_id }, "t");
  await expectAuth(
    await server.fetch("/mcp", mcp(`Bearer ${rolled.value}`)),
    401,
    unknown,
    'Bearer realm="sergo", error="invalid_token"',
  );
});

Deno.test("/mcp refuses a body over its size limit and an oversized batch, with one sentence", async () => {
  const server = await testServer();
  await using _ = server;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const { value } = await createAgentKey(server.app, {
    personId: ava.person_id,
    name: "decks",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "t");
  const before = server.app.head().position;
  const huge = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "search", arguments: { query: "x".repeat(2_000_000) } },
  });
  let r = await server.fetch("/mcp", { ...mcp(`Bearer ${value}`), body: huge });
  assert.equal(r.status, 413);
  assert.match((await r.json()).error.message, /^The request body is too large: at most 1,000,000 bytes\.$/);
  const batch = Array.from({ length: 51 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
  r = await server.fetch("/mcp", {
    ...mcp(`Bearer ${value}`),
    body: JSON.stringify(batch),
    headers: {
      ...(mcp(`Bearer ${value}`).headers as Record<string, string>),
      "mcp-protocol-version": "2025-03-26",
    },
  });
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /at most 50 messages/);
  assert.equal(server.app.head().position, before, "refused requests leave no audit event");
});
