/**
 * Sergo is not an open redirector: anyone may register an app with any https
 * redirect URI, so a request nobody has seen never sends the browser there on
 * its own (RFC 9700 §4.11.2), a bad client or redirect URI gets a page only
 * (RFC 6749 §4.1.2.1), and client metadata documents are held to the same
 * redirect URI rules as registration.
 */
import assert from "node:assert/strict";
import { ClientDirectory, ClientError, parseClientDocument } from "../../src/auth/oauth/clients.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/auth/oauth/mod.ts";
import { openApp } from "../../src/app.ts";
import { appServer, Browser, pkce, startOAuthWorld } from "./_oauth.ts";

const LOOPBACK = { ...DEFAULT_OAUTH_SETTINGS, loopbackClients: true };

async function register(url: string, redirectUris: string[]): Promise<string> {
  const response = await fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Phish", redirect_uris: redirectUris }),
  });
  assert.equal(response.status, 201);
  return (await response.json()).client_id;
}

Deno.test("a registered app's bad authorization request shows a page, signed out or in, and never redirects on its own", async () => {
  await using world = await startOAuthWorld();
  const clientId = await register(world.url, ["https://evil.example/phish"]);
  const { challenge } = pkce();
  const base = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: "https://evil.example/phish",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s",
  };
  const signedOut = new Browser(world.url);
  const signedIn = new Browser(world.url);
  await signedIn.signIn(world.email, world.password);
  for (const browser of [signedOut, signedIn]) {
    for (
      const change of [
        { response_type: "token" },
        { code_challenge_method: "plain" },
        { code_challenge: "" },
        { resource: "https://other.example.com/mcp" },
      ] as Record<string, string>[]
    ) {
      const response = await browser.fetch(`/oauth/authorize?${new URLSearchParams({ ...base, ...change })}`);
      assert.equal(response.status, 400, JSON.stringify(change));
      assert.equal(response.headers.get("location"), null, `no redirect for ${JSON.stringify(change)}`);
      const html = await response.text();
      assert.match(html, /id="authorize-error"/);
      // The person sees where the link would take them before choosing to follow it.
      assert.match(html, /Go back to Phish<\/a> <span class="hint">\(evil\.example\)<\/span>/);
    }
  }
  // A valid request signed out still goes to sign-in, on this server.
  const valid = await signedOut.fetch(`/oauth/authorize?${new URLSearchParams(base)}`);
  assert.equal(valid.status, 303);
  assert.match(valid.headers.get("location")!, /^\/sign-in\?next=/);
  // An unknown client or a redirect URI the app does not have: a page, and no link anywhere.
  for (
    const change of [
      { client_id: "sgc_nobody" },
      { redirect_uri: "https://evil.example/other" },
      { redirect_uri: "" },
    ] as Record<string, string>[]
  ) {
    const response = await signedOut.fetch(
      `/oauth/authorize?${new URLSearchParams({ ...base, ...change, response_type: "token" })}`,
    );
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null);
    const html = await response.text();
    assert.doesNotMatch(html, /back-to-app/);
  }
});

Deno.test("client metadata documents: redirect URIs follow registration's rules", async () => {
  const url = "https://app.example.com/client.json";
  const doc = (redirect: string) => JSON.stringify({ client_id: url, redirect_uris: [redirect] });
  for (
    const [redirect, why] of [
      ["javascript:alert(document.cookie)", /uses the javascript: scheme/],
      ["data:text/html,<script>alert(1)</script>", /uses the data: scheme/],
      ["http://app.example.com/callback", /is http on a public host/],
      ["https://app.example.com/cb#frag", /has a fragment/],
      ["not a url", /is not a URL/],
    ] as const
  ) {
    assert.throws(
      () => parseClientDocument(url, doc(redirect)),
      (e: Error) =>
        e instanceof ClientError && /lists a redirect URI that cannot be used/.test(e.message) &&
        why.test(e.message),
      redirect,
    );
  }
  for (const fine of ["https://app.example.com/cb", "http://127.0.0.1:3000/cb", "cursor://anysphere/cb"]) {
    assert.deepEqual(parseClientDocument(url, doc(fine)).redirect_uris, [fine]);
  }

  // Served over the network, such a document is refused before any consent page.
  const app = await openApp(await Deno.makeTempDir());
  try {
    await using server = appServer((origin) => ({
      client_id: `${origin}/client.json`,
      redirect_uris: ["javascript:alert(1)"],
    }));
    await assert.rejects(
      new ClientDirectory(app.db, LOOPBACK).find(server.metadataUrl),
      /uses the javascript: scheme/,
    );
  } finally {
    await app.close();
    await Deno.remove(app.dataDir, { recursive: true });
  }
});
