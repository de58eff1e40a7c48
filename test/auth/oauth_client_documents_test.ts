/**
 * Fetching client metadata documents as an attacker would have it go wrong:
 * IPv6 forms that carry a private IPv4 address, a name that resolves to a
 * public address when checked and elsewhere when fetched (the fetch connects
 * to the checked address), a body that trickles in (a page, not a 500), and
 * a flood of authorization requests (one fetch, cached; failures cached; a
 * host's fetches and an address's requests limited).
 */
import assert from "node:assert/strict";
import {
  ClientDirectory,
  documentLifetimeMs,
  HOST_FETCHES_PER_MINUTE,
  isPrivateAddress,
} from "../../src/auth/oauth/clients.ts";
import { AUTHORIZE_PER_MINUTE } from "../../src/auth/oauth/authorize.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/auth/oauth/mod.ts";
import { openApp, type SergoApp } from "../../src/app.ts";
import { Browser, pkce, startOAuthWorld } from "./_oauth.ts";

const LOOPBACK = { ...DEFAULT_OAUTH_SETTINGS, loopbackClients: true };

async function withApp(run: (app: SergoApp) => Promise<void>): Promise<void> {
  const app = await openApp(await Deno.makeTempDir());
  try {
    await run(app);
  } finally {
    await app.close();
    await Deno.remove(app.dataDir, { recursive: true });
  }
}

/** A loopback app server that counts every request, answering `answer(path)`. */
function countingServer(hostname: string, answer: (url: URL, request: Request) => Response) {
  const seen: Array<{ path: string; host: string | null }> = [];
  const server = Deno.serve({ hostname, port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    seen.push({ path: url.pathname + url.search, host: request.headers.get("host") });
    return answer(url, request);
  });
  return {
    port: server.addr.port,
    seen,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

Deno.test("IPv6 forms that carry an IPv4 address are private, whatever that address", () => {
  for (
    const address of [
      "::7f00:1",
      "[::7f00:1]",
      "::127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:127.0.0.1",
      "::ffff:8.8.8.8",
      "::ffff:0:7f00:1",
      "64:ff9b::a00:1",
      "64:ff9b::8.8.8.8",
      "64:ff9b:1::a00:1",
      "2002:7f00:1::",
      "2002:808:808::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001:db8::1",
      "fec0::1",
      "ff02::1",
      "1::",
      "not-an-address",
      "1:2:3:4:5:6:7:8:9",
      "300.1.2.3",
    ]
  ) {
    assert.equal(isPrivateAddress(address), true, address);
  }
  for (const address of ["93.184.216.34", "2606:4700::6810:85e5", "2a00:1450:4001:82b::200e"]) {
    assert.equal(isPrivateAddress(address), false, address);
  }
});

Deno.test("a metadata URL at such an address, or a name resolving to one, is refused before any request", async () => {
  await withApp(async (app) => {
    const clients = new ClientDirectory(app.db, DEFAULT_OAUTH_SETTINGS, {
      resolve: (host) =>
        Promise.resolve(host === "mapped.example.com" ? ["::ffff:10.0.0.1"] : ["64:ff9b::a00:1"]),
    });
    for (
      const url of [
        "https://[::7f00:1]/client.json",
        "https://[64:ff9b::a00:1]/client.json",
        "https://[2002:7f00:1::]/client.json",
        "https://[::ffff:7f00:1]/client.json",
        "https://mapped.example.com/client.json",
        "https://nat64.example.com/client.json",
      ]
    ) {
      await assert.rejects(clients.find(url), /resolves to a private address/, url);
    }
  });
});

Deno.test("the fetch connects to the address that was checked, with the URL's host name as Host", async () => {
  // Listens on 127.0.0.2 only: a fetch that resolved "localhost" again (127.0.0.1 or ::1) would find nobody.
  await using server = countingServer(
    "127.0.0.2",
    (url) => Response.json({ client_id: `${url.origin}/client.json`, redirect_uris: [`${url.origin}/cb`] }),
  );
  await withApp(async (app) => {
    const asked: string[] = [];
    const clients = new ClientDirectory(app.db, LOOPBACK, {
      resolve: (host) => {
        asked.push(host);
        return Promise.resolve(["127.0.0.2"]);
      },
    });
    const url = `http://localhost:${server.port}/client.json`;
    const client = await clients.find(url);
    assert.equal(client.client_id, url);
    assert.deepEqual(asked, ["localhost"], "resolved once");
    assert.deepEqual(server.seen, [{ path: "/client.json", host: `localhost:${server.port}` }]);
  });
  // And when the checked address is not public, nothing connects at all.
  await withApp(async (app) => {
    const clients = new ClientDirectory(app.db, DEFAULT_OAUTH_SETTINGS, {
      resolve: () => Promise.resolve(["127.0.0.2"]),
    });
    await assert.rejects(
      clients.find(`https://rebind.example.com:${server.port}/client.json`),
      /points at this machine/,
    );
    assert.equal(server.seen.length, 1);
  });
});

Deno.test("a metadata document whose body trickles in gets the error page within seconds, not a 500", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const conns: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      (async () => {
        await conn.read(new Uint8Array(4096));
        const body = JSON.stringify({
          client_id: `http://127.0.0.1:${port}/client.json`,
          redirect_uris: ["x"],
        });
        const encoder = new TextEncoder();
        await conn.write(encoder.encode(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
        ));
        for (const char of body) {
          await new Promise((r) => setTimeout(r, 400));
          await conn.write(encoder.encode(char));
        }
      })().catch(() => {});
    }
  })();
  const errors: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => errors.push(args.map(String).join(" "));
  try {
    await using world = await startOAuthWorld();
    const browser = new Browser(world.url);
    const started = performance.now();
    const response = await browser.fetch(`/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: `http://127.0.0.1:${port}/client.json`,
      redirect_uri: "x",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
    })}`);
    const html = await response.text();
    assert.equal(response.status, 400);
    assert.match(html, /could not be read: no answer within 5 s\./);
    assert.ok(performance.now() - started < 9000, "answered within the fetch's deadline");
    assert.deepEqual(errors.filter((line) => /TimeoutError|Uncaught|at .*\.ts:/.test(line)), []);
  } finally {
    console.error = original;
    listener.close();
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed already
      }
    }
    await serving.catch(() => {});
  }
});

Deno.test("authorization requests: one fetch for many, failures kept briefly, a host's fetches and an address's requests limited", async () => {
  await using app = countingServer("127.0.0.1", (url) => {
    if (url.pathname === "/missing.json") return new Response("no", { status: 404 });
    return Response.json({
      client_id: url.href,
      client_name: "Counted",
      redirect_uris: [`${url.origin}/cb`],
    });
  });
  const origin = `http://127.0.0.1:${app.port}`;
  await using world = await startOAuthWorld();
  const browser = new Browser(world.url);
  const ask = async (clientId: string) => {
    const response = await browser.fetch(`/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: `${origin}/cb`,
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
    })}`);
    await response.body?.cancel();
    return response.status;
  };
  // Twenty at once, then twenty more one by one: one fetch.
  const together = await Promise.all(Array.from({ length: 20 }, () => ask(`${origin}/client.json`)));
  assert.deepEqual(new Set(together), new Set([303]));
  for (let i = 0; i < 20; i++) assert.equal(await ask(`${origin}/client.json`), 303);
  assert.equal(app.seen.filter((s) => s.path === "/client.json").length, 1);
  // A document that fails is fetched once too, while its failure is kept.
  for (let i = 0; i < 10; i++) assert.equal(await ask(`${origin}/missing.json`), 400);
  assert.equal(app.seen.filter((s) => s.path === "/missing.json").length, 1);
  // From one address, at most AUTHORIZE_PER_MINUTE a minute; then a 429 page with its sentence.
  let sent = 50;
  while (sent < AUTHORIZE_PER_MINUTE) {
    assert.equal(await ask(`${origin}/client.json`), 303);
    sent++;
  }
  const refused = await browser.fetch(
    `/oauth/authorize?client_id=${encodeURIComponent(`${origin}/client.json`)}`,
  );
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "60");
  assert.match(await refused.text(), /Too many sign-in requests from your address: at most 60 a minute/);
  assert.equal(app.seen.length, 2, "the refused requests fetched nothing");
});

Deno.test("a host's documents are fetched at most 10 times a minute; documents are kept for their max-age, between 1 and 10 minutes", async () => {
  await using server = countingServer("127.0.0.1", (url) =>
    Response.json(
      { client_id: url.href, redirect_uris: [`${url.origin}/cb`] },
      { headers: url.pathname === "/short.json" ? { "cache-control": "public, max-age=120" } : {} },
    ));
  const origin = `http://127.0.0.1:${server.port}`;
  await withApp(async (app) => {
    let now = 1_000_000;
    const clients = new ClientDirectory(app.db, LOOPBACK, { nowMs: () => now });
    for (let i = 0; i < HOST_FETCHES_PER_MINUTE; i++) await clients.find(`${origin}/client.json?n=${i}`);
    await assert.rejects(
      clients.find(`${origin}/client.json?n=x`),
      /Client metadata documents from 127\.0\.0\.1:\d+ were fetched 10 times this minute: try again in a minute\./,
    );
    assert.equal(server.seen.length, HOST_FETCHES_PER_MINUTE);
    // A minute later the host may be fetched again; what was fetched is still kept (five minutes by default).
    now += 61_000;
    await clients.find(`${origin}/client.json?n=0`);
    assert.equal(server.seen.length, HOST_FETCHES_PER_MINUTE);
    now += 4 * 60_000;
    await clients.find(`${origin}/client.json?n=0`);
    assert.equal(server.seen.length, HOST_FETCHES_PER_MINUTE + 1);
    // A document's own max-age is honoured: two minutes here.
    await clients.find(`${origin}/short.json`);
    now += 119_000;
    await clients.find(`${origin}/short.json`);
    assert.equal(server.seen.length, HOST_FETCHES_PER_MINUTE + 2);
    now += 2_000;
    await clients.find(`${origin}/short.json`);
    assert.equal(server.seen.length, HOST_FETCHES_PER_MINUTE + 3);
  });
  assert.equal(documentLifetimeMs(null), 5 * 60_000);
  assert.equal(documentLifetimeMs("public, max-age=120"), 120_000);
  assert.equal(documentLifetimeMs("max-age=0"), 60_000);
  assert.equal(documentLifetimeMs("no-store"), 60_000);
  assert.equal(documentLifetimeMs("max-age=86400"), 10 * 60_000);
});
