/**
 * The limits of Sergo's OAuth server: what client metadata documents may be
 * fetched (SSRF), what an authorization request must carry before it goes
 * back to an app, what registration takes and how often, and how long codes
 * and tokens work (with a clock the test moves).
 */
import assert from "node:assert/strict";
import {
  checkMetadataUrl,
  ClientDirectory,
  ClientError,
  isPrivateAddress,
  redirectAllowed,
} from "../../src/auth/oauth/clients.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/auth/oauth/mod.ts";
import { createAgentKey, deleteAgentKey } from "../../src/domain/keys.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { openApp } from "../../src/app.ts";
import { appServer, Browser, pkce, startOAuthWorld } from "./_oauth.ts";

const LOOPBACK = { ...DEFAULT_OAUTH_SETTINGS, loopbackClients: true };

Deno.test("client metadata URLs: https with a path; http only on loopback and only when the setting allows", () => {
  const refused = (settings: typeof LOOPBACK, url: string, message: RegExp) =>
    assert.throws(
      () => checkMetadataUrl(settings, url),
      (e: Error) => e instanceof ClientError && message.test(e.message),
    );
  checkMetadataUrl(DEFAULT_OAUTH_SETTINGS, "https://app.example.com/oauth/client.json");
  refused(DEFAULT_OAUTH_SETTINGS, "http://app.example.com/client.json", /must be at an https URL/);
  refused(DEFAULT_OAUTH_SETTINGS, "http://127.0.0.1:9/client.json", /must be at an https URL/);
  refused(DEFAULT_OAUTH_SETTINGS, "https://localhost/client.json", /points at this machine/);
  refused(DEFAULT_OAUTH_SETTINGS, "https://app.example.com/", /must have a path/);
  refused(DEFAULT_OAUTH_SETTINGS, "https://app.example.com/c.json#x", /no credentials or fragment/);
  refused(DEFAULT_OAUTH_SETTINGS, "https://user:pw@app.example.com/c.json", /no credentials or fragment/);
  refused(LOOPBACK, "http://app.example.com/client.json", /must be at an https URL/);
  checkMetadataUrl(LOOPBACK, "http://127.0.0.1:9/client.json");
});

Deno.test("private, loopback, link-local and mapped addresses are never fetched from", () => {
  for (
    const address of [
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "127.0.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:10.0.0.1",
      "[::1]",
    ]
  ) {
    assert.equal(isPrivateAddress(address), true, address);
  }
  for (const address of ["93.184.216.34", "2606:4700::6810:85e5", "8.8.8.8"]) {
    assert.equal(isPrivateAddress(address), false, address);
  }
});

Deno.test("a metadata document at a private address is refused before any request", async () => {
  const app = await openApp(await Deno.makeTempDir());
  try {
    const clients = new ClientDirectory(app.db, DEFAULT_OAUTH_SETTINGS);
    await assert.rejects(clients.find("https://10.1.2.3/client.json"), /resolves to a private address/);
    await assert.rejects(clients.find("https://[fd00::1]/client.json"), /resolves to a private address/);
    await assert.rejects(clients.find("sgc_unknown"), /No app is registered with client id "sgc_unknown"/);
  } finally {
    await app.close();
    await Deno.remove(app.dataDir, { recursive: true });
  }
});

Deno.test("metadata documents: no redirects, at most 64 KB, their own client_id, public clients only, 5 s", async () => {
  const app = await openApp(await Deno.makeTempDir());
  let document: (origin: string) => unknown = (origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Fine",
    redirect_uris: [`${origin}/callback`],
  });
  await using server = appServer((origin) => document(origin));
  const hang = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of hang) held.push(conn);
  })();
  try {
    const clients = () => new ClientDirectory(app.db, LOOPBACK);
    const fine = await clients().find(server.metadataUrl);
    assert.equal(fine.client_name, "Fine");
    assert.equal(fine.metadata_url, server.metadataUrl);
    await assert.rejects(clients().find(`${server.origin}/moved.json`), /redirects are not followed/);
    await assert.rejects(clients().find(`${server.origin}/huge.json`), /larger than 64 KB/);
    document = () => ({ client_id: "https://elsewhere.example.com/c.json", redirect_uris: ["https://x/cb"] });
    await assert.rejects(clients().find(server.metadataUrl), /names another client_id/);
    document = (origin) => ({
      client_id: `${origin}/client.json`,
      redirect_uris: [`${origin}/cb`],
      token_endpoint_auth_method: "client_secret_basic",
    });
    await assert.rejects(clients().find(server.metadataUrl), /public clients only/);
    const started = performance.now();
    const port = (hang.addr as Deno.NetAddr).port;
    await assert.rejects(clients().find(`http://127.0.0.1:${port}/client.json`), /no answer within 5 s/);
    assert.ok(performance.now() - started < 8000);
  } finally {
    hang.close();
    for (const conn of held) conn.close();
    await accepting.catch(() => {});
    await app.close();
    await Deno.remove(app.dataDir, { recursive: true });
  }
});

Deno.test("loopback redirect URIs may change their port (RFC 8252); others must match exactly", () => {
  const client = {
    client_id: "x",
    client_name: "x",
    metadata_url: null,
    redirect_uris: ["http://127.0.0.1:3000/callback", "https://app.example.com/cb"],
  };
  assert.equal(redirectAllowed(client, "http://127.0.0.1:49152/callback"), true);
  assert.equal(redirectAllowed(client, "http://127.0.0.1:49152/other"), false);
  assert.equal(redirectAllowed(client, "https://app.example.com/cb"), true);
  assert.equal(redirectAllowed(client, "https://app.example.com:8443/cb"), false);
  assert.equal(redirectAllowed(client, "https://evil.example.com/cb"), false);
});

Deno.test("registration: public clients with safe redirect URIs, at most 20 an hour from one address", async () => {
  await using world = await startOAuthWorld();
  const register = (body: unknown) =>
    fetch(`${world.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const refused = async (body: unknown, error: string, message: RegExp) => {
    const response = await register(body);
    assert.equal(response.status, 400);
    const answer = await response.json();
    assert.equal(answer.error, error);
    assert.match(answer.error_description, message);
  };
  await refused({ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri", /javascript: scheme/);
  await refused(
    { redirect_uris: ["http://app.example.com/cb"] },
    "invalid_redirect_uri",
    /http on a public host/,
  );
  await refused({ redirect_uris: [] }, "invalid_redirect_uri", /1 to 10 URLs/);
  await refused(
    { redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "client_secret_basic" },
    "invalid_client_metadata",
    /public clients only/,
  );
  const ok = await register({
    client_name: "Cursor",
    redirect_uris: ["cursor://anysphere.cursor-mcp/oauth/callback"],
  });
  assert.equal(ok.status, 201);
  const client = await ok.json();
  assert.match(client.client_id, /^sgc_[A-Za-z0-9]{24}$/);
  assert.equal(client.token_endpoint_auth_method, "none");
  // 4 refused + 1 registered so far: the limit counts attempts.
  for (let i = 0; i < 15; i++) {
    const more = await register({ redirect_uris: ["https://app.example.com/cb"] });
    assert.equal(more.status, 201);
    await more.body?.cancel();
  }
  const over = await register({ redirect_uris: ["https://app.example.com/cb"] });
  assert.equal(over.status, 429);
  assert.match((await over.json()).error_description, /at most 20 an hour from one address/);
  const registered = world.running.app.store.readFrom(0, 100_000).filter((e) =>
    e.type === "OAuthClientRegistered"
  );
  assert.equal(registered.length, 16);
});

Deno.test("authorization requests: a bad client or redirect URI gets a page, anything else a page with a link back carrying the error", async () => {
  await using world = await startOAuthWorld();
  await using client = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Checker",
    redirect_uris: [`${origin}/callback`],
  }));
  const browser = new Browser(world.url);
  await browser.signIn(world.email, world.password);
  const { challenge } = pkce();
  const ask = (fields: Record<string, string>) =>
    browser.fetch(`/oauth/authorize?${new URLSearchParams(fields)}`);
  const base = {
    response_type: "code",
    client_id: client.metadataUrl,
    redirect_uri: client.redirectUri,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s",
  };
  const page = await ask({ ...base, redirect_uri: "https://evil.example.com/cb" });
  assert.equal(page.status, 400);
  assert.match(
    await page.text(),
    /is not one of Checker&#39;s redirect URIs|is not one of Checker's redirect URIs/,
  );
  const unknown = await ask({ ...base, client_id: "sgc_nobody" });
  assert.equal(unknown.status, 400);
  assert.match(await unknown.text(), /No app is registered/);
  for (
    const [change, error] of [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: "short" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ resource: "https://other.example.com/mcp" }, "invalid_target"],
    ] as const
  ) {
    // A page, never a redirect on its own: the person may follow the link back to the app.
    const response = await ask({ ...base, ...change });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null);
    const html = await response.text();
    const href = /id="back-to-app" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    assert.ok(href, "the page links back to the app");
    const back = new URL(href);
    assert.equal(back.origin + back.pathname, client.redirectUri);
    assert.equal(back.searchParams.get("error"), error);
    assert.equal(back.searchParams.get("state"), "s");
    assert.equal(back.searchParams.get("iss"), world.url);
  }
  const denied = await browser.post("/oauth/authorize", [...Object.entries(base), ["decision", "deny"]]);
  assert.equal(new URL(denied.headers.get("location")!).searchParams.get("error"), "access_denied");
  const forged = await browser.fetch("/oauth/authorize", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams([...Object.entries(base), ["decision", "allow"], [
      "key",
      world.decksKey.keyId,
    ]]),
  });
  assert.equal(forged.status, 400, "without the CSRF token nothing is granted");
  await forged.body?.cancel();
  assert.equal(
    world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "OAuthGranted").length,
    0,
  );
});

Deno.test("codes work for a minute, access tokens for an hour, refresh tokens for 30 days; deleting the key stops its tokens at once", async () => {
  let now = Date.parse("2026-12-01T09:00:00Z");
  await using world = await startOAuthWorld({}, { now: () => new Date(now) });
  await using client = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Clock",
    redirect_uris: [`${origin}/callback`],
  }));
  const browser = new Browser(world.url);
  await browser.signIn(world.email, world.password);
  const grant = async () => {
    const { verifier, challenge } = pkce();
    const response = await browser.post("/oauth/authorize", [
      ["response_type", "code"],
      ["client_id", client.metadataUrl],
      ["redirect_uri", client.redirectUri],
      ["code_challenge", challenge],
      ["code_challenge_method", "S256"],
      ["decision", "allow"],
      ["key", world.decksKey.keyId],
    ]);
    return { code: new URL(response.headers.get("location")!).searchParams.get("code")!, verifier };
  };
  const exchange = async (code: string, verifier: string) =>
    await (await fetch(`${world.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        client_id: client.metadataUrl,
        redirect_uri: client.redirectUri,
      }),
    })).json();
  const list = async (token: string) => {
    const response = await fetch(`${world.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await response.body?.cancel();
    return { status: response.status, challenge: response.headers.get("www-authenticate") };
  };

  const late = await grant();
  now += 61_000;
  const expiredCode = await exchange(late.code, late.verifier);
  assert.equal(expiredCode.error, "invalid_grant");
  assert.equal(expiredCode.error_description, "The code has expired: sign in again.");

  const fresh = await grant();
  const tokens = await exchange(fresh.code, fresh.verifier);
  assert.equal(tokens.expires_in, 3600);
  assert.equal((await list(tokens.access_token)).status, 200);
  now += 3601_000;
  const expired = await list(tokens.access_token);
  assert.equal(expired.status, 401);
  assert.match(expired.challenge!, /error="invalid_token", resource_metadata="[^"]+\/mcp"/);
  const refresh = async (token: string) =>
    await (await fetch(`${world.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: token,
        client_id: client.metadataUrl,
      }),
    })).json();
  const refreshed = await refresh(tokens.refresh_token);
  assert.equal((await list(refreshed.access_token)).status, 200);

  // A refresh token works for 30 days: a second before, it gives a new pair; from then on it is refused.
  const days30 = 30 * 24 * 3600_000;
  now += days30 - 1000;
  const last = await refresh(refreshed.refresh_token);
  assert.equal((await list(last.access_token)).status, 200);
  now += days30;
  const late30 = await refresh(last.refresh_token);
  assert.deepEqual([late30.error, late30.error_description], [
    "invalid_grant",
    "The refresh token has expired: sign in again.",
  ]);

  await browser.signIn(world.email, world.password); // 60 days on: the console's sign-in has run out too
  const again = await grant();
  const pair = await exchange(again.code, again.verifier);
  assert.equal((await list(pair.access_token)).status, 200);
  await deleteAgentKey(world.running.app, { personId: world.personId, keyId: world.decksKey.keyId }, "cli");
  const gone = await list(pair.access_token);
  assert.equal(gone.status, 401);
  assert.match(gone.challenge!, /resource_metadata=/);
});

Deno.test("the consent form gives only the signed-in person's own keys: another's key id looks like a missing one", async () => {
  await using world = await startOAuthWorld();
  await using client = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Grabby",
    redirect_uris: [`${origin}/callback`],
  }));
  const app = world.running.app;
  const bob = await addPerson(app, { name: "Bob Stone", email: "bob@example.com" });
  const bobs = await createAgentKey(app, {
    personId: bob.person_id,
    name: "bobs-key",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "cli");
  const browser = new Browser(world.url);
  await browser.signIn(world.email, world.password);
  const page = await (await browser.fetch(`/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: client.metadataUrl,
    redirect_uri: client.redirectUri,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
  })}`)).text();
  assert.ok(page.includes("decks") && !page.includes("bobs-key"), "only Ava's keys are offered");
  const response = await browser.post("/oauth/authorize", [
    ["response_type", "code"],
    ["client_id", client.metadataUrl],
    ["redirect_uri", client.redirectUri],
    ["code_challenge", pkce().challenge],
    ["code_challenge_method", "S256"],
    ["decision", "allow"],
    ["key", bobs.key.key_id],
  ]);
  assert.equal(response.status, 400);
  assert.ok((await response.text()).includes(`No agent key with id &quot;${bobs.key.key_id}&quot;`));
  assert.equal(app.store.readFrom(0, 100_000).filter((e) => e.type === "OAuthGranted").length, 0);
  // Nor can Ava revoke Bob's apps: another person's grant is a missing one.
  // Bob gives the app his own key through the consent page, as people do.
  await setPasswordHash(app, bob.person_id, await hashPassword("bob's own long passphrase"));
  const bobsBrowser = new Browser(world.url);
  await bobsBrowser.signIn("bob@example.com", "bob's own long passphrase");
  const bobsConsent = await bobsBrowser.post("/oauth/authorize", [
    ["response_type", "code"],
    ["client_id", client.metadataUrl],
    ["redirect_uri", client.redirectUri],
    ["code_challenge", pkce().challenge],
    ["code_challenge_method", "S256"],
    ["decision", "allow"],
    ["key", bobs.key.key_id],
  ]);
  assert.equal(bobsConsent.status, 303);
  await bobsConsent.body?.cancel();
  const grants = app.store.readFrom(0, 100_000).flatMap((e) => e.type === "OAuthGranted" ? [e.data] : []);
  assert.deepEqual(grants.map((g) => g.person_id), [bob.person_id]);
  const bobsGrant = grants[0]!.grant_id;
  const revoke = await browser.post(`/oauth/grants/${bobsGrant}/revoke`, []);
  assert.equal(revoke.status, 404);
  await revoke.body?.cancel();
  assert.equal(app.store.readFrom(0, 100_000).filter((e) => e.type === "OAuthGrantRevoked").length, 0);
});

Deno.test("the token and registration endpoints read bodies of 16 KB; one byte more is a 413 with its sentence", async () => {
  await using world = await startOAuthWorld();
  const padded = (text: string, bytes: number) => text + " ".repeat(bytes - text.length);
  const token = (body: string) =>
    fetch(`${world.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
  // A code nobody was given: read, and refused as such.
  const form = "grant_type=authorization_code&client_id=sgc_nobody&code=sgo_nothing&code_verifier=v&pad=";
  const read = await token(padded(form, 16 * 1024));
  assert.equal(read.status, 400);
  assert.deepEqual(await read.json(), {
    error: "invalid_grant",
    error_description: "The code is unknown, or was given to another app.",
  });
  const large = await token(padded(form, 16 * 1024 + 1));
  assert.equal(large.status, 413);
  assert.deepEqual(await large.json(), {
    error: "invalid_request",
    error_description: "The request is larger than 16 KB.",
  });

  const register = (body: string) =>
    fetch(`${world.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
  const metadata = JSON.stringify({ client_name: "Cursor", redirect_uris: ["https://app.example.com/cb"] });
  const registered = await register(padded(metadata, 16 * 1024));
  assert.equal(registered.status, 201);
  await registered.body?.cancel();
  const before = world.running.app.head().position;
  const tooLarge = await register(padded(metadata, 16 * 1024 + 1));
  assert.equal(tooLarge.status, 413);
  assert.deepEqual(await tooLarge.json(), {
    error: "invalid_client_metadata",
    error_description: "The registration is larger than 16 KB.",
  });
  assert.equal(world.running.app.head().position, before, "nothing registered");
});
