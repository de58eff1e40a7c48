/**
 * The legacy HTTP+SSE transport: the official Python SDK's `sse_client`
 * (what Sagewai's `McpClient.connect_sse` uses) against `/sse` on a socket,
 * and the transport's own rules — the same 401s as `/mcp`, sessions bound to
 * their key, a bounded number per key, ended when the key stops working.
 */
import assert from "node:assert/strict";
import {
  agentKeyAuthenticator,
  createSseTransport,
  type SseTransport,
} from "../../src/mcp/transports/sse.ts";
import { buildWorld, type World } from "./_world.ts";
import { needs } from "../helpers/dependencies.ts";
import { startServer } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createAgentKey, deleteAgentKey } from "../../src/domain/keys.ts";

const PYTHON_CLIENT = new URL("../clients/python_sse.py", import.meta.url).pathname;

interface Served extends AsyncDisposable {
  world: World;
  url: string;
  sse: SseTransport;
  mcp: (request: Request) => Promise<Response>;
}

async function serve(options: { maxSessionsPerKey?: number } = {}): Promise<Served> {
  const world = await buildWorld();
  const mcp = world.fixture.endpoint();
  const sse = createSseTransport({
    mcp,
    authenticate: agentKeyAuthenticator(world.fixture.db),
    allowedOrigins: [],
    maxSessionsPerKey: options.maxSessionsPerKey,
    recheckMs: 100,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/mcp") return mcp(request);
    if (path.startsWith("/sse")) return sse.handle(request);
    return new Response("Not found", { status: 404 });
  });
  return {
    world,
    url: `http://127.0.0.1:${server.addr.port}`,
    sse,
    mcp,
    async [Symbol.asyncDispose]() {
      sse.close();
      await server.shutdown();
      await world.fixture.dispose();
    },
  };
}

/** Reads a stream's events until `count` have come (or the stream ends). */
async function readEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  count: number,
): Promise<{ events: Array<{ event: string; data: string }>; ended: boolean }> {
  const decoder = new TextDecoder();
  const events: Array<{ event: string; data: string }> = [];
  let buffer = "";
  // A stream that neither sends the events nor ends fails the test instead of holding it forever.
  const deadline = Date.now() + 20_000;
  while (events.length < count) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${events.length} of ${count} SSE events, and no end, within 20 s`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    const { value, done } = await Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
    if (done) return { events, ended: true };
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data });
    }
  }
  return { events, ended: false };
}

async function openStream(url: string, key: string) {
  const response = await fetch(`${url}/sse`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const reader = response.body!.getReader();
  const { events } = await readEvents(reader, 1);
  assert.equal(events[0]!.event, "endpoint");
  return { reader, endpoint: new URL(events[0]!.data, url).href };
}

Deno.test("the official Python SDK's sse_client lists the tools and searches through /sse, audited as over /mcp", async () => {
  await using served = await serve();
  const { world, url } = served;
  const query = "AutoGen multi-agent framework";
  const run = new Deno.Command(await needs("python3"), {
    args: [PYTHON_CLIENT, `${url}/sse`, world.keys.all, query],
    stdout: "piped",
    stderr: "piped",
  });
  const { code, stdout, stderr } = await run.output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const out = JSON.parse(new TextDecoder().decode(stdout));
  assert.equal(out.server, "everything");
  assert.deepEqual(out.tools, ["search", "list_documents", "read_document", "view_page"]);
  assert.equal(out.search.is_error, false);
  assert.equal(JSON.parse(out.search.text)[0].document_id, world.docs.markitdown);
  assert.deepEqual(out.missing, {
    is_error: true,
    text: "Not found, or not yours to see — the two are deliberately indistinguishable",
  });

  // The same search over /mcp gives the same text and an audit entry of the same shape.
  const direct = await served.mcp(
    new Request(`${url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.keys.all}`, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "search", arguments: { query, limit: 4 } },
      }),
    }),
  );
  assert.equal((await direct.json()).result.content[0].text, out.search.text);
  const searches = world.fixture.auditEvents().filter((e) => e.data.tool === "search");
  assert.equal(searches.length, 2);
  const strip = (data: Record<string, unknown>) => ({ ...data, duration_ms: 0 });
  assert.deepEqual(strip(searches[0]!.data), strip(searches[1]!.data));
  assert.equal(searches[0]!.data.action, "mcp search");
  assert.equal(served.sse.open, 0, "the session ends with its stream");
});

Deno.test("/sse answers a missing or bad key exactly as /mcp does", async () => {
  await using served = await serve();
  // A real key with its last character changed (to one it does not already end with).
  const key = served.world.keys.all;
  const altered = key.slice(0, -1) + (key.endsWith("x") ? "y" : "x");
  for (const authorization of [null, "Bearer sgk_s_nope", `Bearer ${altered}`]) {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    const viaSse = await fetch(`${served.url}/sse`, { headers });
    const viaMcp = await served.mcp(
      new Request(`${served.url}/mcp`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: "{}",
      }),
    );
    assert.equal(viaSse.status, viaMcp.status);
    assert.equal(viaSse.headers.get("www-authenticate"), viaMcp.headers.get("www-authenticate"));
    assert.equal(await viaSse.text(), await viaMcp.text());
  }
});

Deno.test("an SSE session belongs to its key, answers on its stream, and ends when the key is deleted", async () => {
  await using served = await serve();
  const { world, url } = served;
  const { reader, endpoint } = await openStream(url, world.keys.decks);
  const post = (key: string, body: unknown) =>
    fetch(endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  // Another key cannot use this session: it looks like one that does not exist.
  const stolen = await post(world.keys.all, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  assert.equal(stolen.status, 404);
  assert.match((await stolen.json()).error.message, /^No such SSE session/);
  const none = await fetch(`${url}/sse/messages?session_id=0123`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.keys.decks}`, "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(none.status, 404);
  await none.body?.cancel();

  // Bad JSON gets /mcp's answer on the POST itself.
  const bad = await fetch(endpoint, {
    method: "POST",
    headers: { authorization: `Bearer ${world.keys.decks}`, "content-type": "application/json" },
    body: "{",
  });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, -32700);

  const accepted = await post(world.keys.decks, {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "read_document", arguments: { document_id: world.docs.tracemonkey, page: 1 } },
  });
  assert.equal(accepted.status, 202);
  await accepted.body?.cancel();
  const answer = JSON.parse((await readEvents(reader, 1)).events[0]!.data);
  assert.equal(answer.id, 7);
  // The decks key cannot read the paper: the same answer as over /mcp.
  assert.equal(answer.result.isError, true);
  assert.equal(
    answer.result.content[0].text,
    "Not found, or not yours to see — the two are deliberately indistinguishable",
  );

  // Deleting the key ends the stream.
  await world.fixture.deleteKey(world.keyIds.decks);
  served.sse.recheck();
  assert.equal((await readEvents(reader, 1)).ended, true);
  assert.equal(served.sse.open, 0);
});

Deno.test("a key has a bounded number of SSE sessions; closing one frees its place", async () => {
  await using served = await serve({ maxSessionsPerKey: 2 });
  const { world, url } = served;
  const first = await openStream(url, world.keys.all);
  const second = await openStream(url, world.keys.all);
  const third = await fetch(`${url}/sse`, { headers: { authorization: `Bearer ${world.keys.all}` } });
  assert.equal(third.status, 429);
  assert.match((await third.json()).error.message, /^This key has 2 SSE sessions open already/);
  // Another key is not affected.
  const other = await openStream(url, world.keys.decks);
  await first.reader.cancel();
  for (let i = 0; i < 50 && served.sse.open > 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(served.sse.open, 2);
  const again = await openStream(url, world.keys.all);
  await second.reader.cancel();
  await other.reader.cancel();
  await again.reader.cancel();
});

Deno.test("serve mounts /sse, ends a session when its key is deleted, and stops with a stream open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sergo-sse-" });
  const running = await startServer({ ...loadConfig(["--data", dir, "--port", "0"]) }, { quiet: true });
  try {
    const person = await addPerson(running.app, { name: "Ava Bennett", email: "ava@example.com" });
    const { key, value } = await createAgentKey(running.app, {
      personId: person.person_id,
      name: "nothing",
      description: "",
      canRead: { folders: [], documents: [] },
    }, "cli");
    const first = await openStream(running.url, value);
    await deleteAgentKey(running.app, { personId: person.person_id, keyId: key.key_id }, "cli");
    assert.equal((await readEvents(first.reader, 1)).ended, true);
    const gone = await fetch(`${running.url}/sse`, { headers: { authorization: `Bearer ${value}` } });
    assert.equal(gone.status, 401);
    await gone.body?.cancel();
    const other = await createAgentKey(running.app, {
      personId: person.person_id,
      name: "other",
      description: "",
      canRead: { folders: [], documents: [] },
    }, "cli");
    const open = await openStream(running.url, other.value);
    await running.stop();
    assert.equal((await readEvents(open.reader, 1)).ended, true);
  } finally {
    await running.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
