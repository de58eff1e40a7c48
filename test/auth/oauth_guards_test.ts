/**
 * What an attacker would try against Sergo's OAuth server, request by request
 * against the real `serve`: a redirect URI that only starts like a registered
 * one (a longer path, a `..` out of it), and an authorization code exchanged
 * by another app with the right verifier and redirect URI, the consent form
 * and the key page's "revoke" posted from another site or without the page's
 * CSRF token. Each is refused, and nothing is granted or revoked.
 */
import assert from "node:assert/strict";
import { Browser, pkce, startOAuthWorld } from "./_oauth.ts";

async function register(url: string, name: string, redirect: string): Promise<string> {
  const response = await fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect] }),
  });
  assert.equal(response.status, 201);
  return (await response.json()).client_id;
}

async function tokenRequest(url: string, fields: Record<string, string>) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: await response.json() };
}

Deno.test("OAuth: a redirect URI that only starts like a registered one is refused; a code is exchanged by its own app only; consent and revocation need the page's CSRF token", async (t) => {
  await using world = await startOAuthWorld();
  const { url } = world;
  const redirectA = "https://desk.example.com/cb";
  const appA = await register(url, "Research Desk", redirectA);
  const appB = await register(url, "Other App", "https://other.example.com/cb");
  const browser = new Browser(url);
  await browser.signIn(world.email, world.password);
  const { verifier, challenge } = pkce();
  let token = "";
  const fields = (redirect: string) => ({
    response_type: "code",
    client_id: appA,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st",
    resource: `${url}/mcp`,
  });

  await t.step(
    "a longer path, a path below it or a '..' out of it is not the registered redirect URI",
    async () => {
      for (
        const redirect of [
          `${redirectA}x`,
          `${redirectA}/more`,
          `${redirectA}/../evil`,
          `${redirectA}?next=https://evil.example.com/`,
          `${redirectA}@evil.example.com`,
        ]
      ) {
        const page = await browser.fetch(`/oauth/authorize?${new URLSearchParams(fields(redirect))}`);
        const html = await page.text();
        assert.equal(page.status, 400, `${redirect}: ${page.headers.get("location")}`);
        assert.equal(page.headers.get("location"), null, `${redirect}: nothing goes back to it`);
        assert.ok(html.includes("is not one of Research Desk"), `${redirect}: ${html.slice(0, 300)}`);
        const posted = await browser.post("/oauth/authorize", [
          ...Object.entries(fields(redirect)),
          ["decision", "allow"],
          ["key", world.decksKey.keyId],
        ]);
        assert.equal(posted.status, 400, `${redirect}: the consent form's answer is refused too`);
        assert.equal(posted.headers.get("location"), null);
        await posted.body?.cancel();
      }
      assert.equal(
        world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "OAuthGranted").length,
        0,
        "nothing was granted",
      );
    },
  );

  await t.step("app A's code, with its verifier and redirect URI, is invalid_grant for app B", async () => {
    const allowed = await browser.post("/oauth/authorize", [
      ...Object.entries(fields(redirectA)),
      ["decision", "allow"],
      ["key", world.decksKey.keyId],
    ]);
    assert.equal(allowed.status, 303);
    const back = new URL(allowed.headers.get("location")!);
    assert.equal(back.origin + back.pathname, redirectA);
    const code = back.searchParams.get("code")!;
    const exchange = {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectA,
      code_verifier: verifier,
    };
    const asB = await tokenRequest(url, { ...exchange, client_id: appB });
    assert.deepEqual([asB.status, asB.body.error, asB.body.access_token], [400, "invalid_grant", undefined]);
    assert.equal(asB.body.error_description, "The code is unknown, or was given to another app.");
    const none = await tokenRequest(url, exchange);
    assert.deepEqual([none.status, none.body.error], [400, "invalid_grant"], "no client_id is no app");
    const asA = await tokenRequest(url, { ...exchange, client_id: appA });
    assert.equal(asA.status, 200, JSON.stringify(asA.body));
    assert.match(asA.body.access_token, /^sgo_at_/);
    token = asA.body.access_token;
  });

  await t.step("the consent form posted from another site's page grants nothing", async () => {
    const grants = () =>
      world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "OAuthGranted");
    const before = grants().length;
    const forged = await browser.fetch("/oauth/authorize", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example.com" },
      body: new URLSearchParams([
        ["csrf", browser.cookie("sergo_csrf")!],
        ...Object.entries(fields(redirectA)),
        ["decision", "allow"],
        ["key", world.decksKey.keyId],
      ]),
    });
    assert.equal(forged.status, 400);
    assert.equal(forged.headers.get("location"), null);
    assert.ok((await forged.text()).includes("This form has expired"));
    assert.equal(grants().length, before);
  });

  await t.step("revoking an app from the key's page needs the page's CSRF token and origin", async () => {
    const keyPage = await (await browser.fetch(`/keys/${world.decksKey.keyId}`)).text();
    const grantId = /data-grant="([A-Za-z0-9]+)"/.exec(keyPage)![1]!;
    const works = async () => (await mcpList(url, token)).status === 200;
    assert.ok(await works());
    for (
      const [how, csrf, origin] of [
        ["without the token", null, new URL(url).origin],
        ["with another token", "A".repeat(43), new URL(url).origin],
        ["from another site", browser.cookie("sergo_csrf")!, "https://evil.example.com"],
      ] as const
    ) {
      const answer = await browser.fetch(`/oauth/grants/${grantId}/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin },
        body: new URLSearchParams(csrf === null ? [] : [["csrf", csrf]]),
      });
      assert.equal(answer.status, 403, how);
      await answer.body?.cancel();
      assert.ok(await works(), `${how}: the app keeps its access`);
    }
    const revoked = await browser.post(`/oauth/grants/${grantId}/revoke`, []);
    await revoked.body?.cancel();
    assert.equal((await mcpList(url, token)).status, 401, "revoked from the page itself");
  });
});

async function mcpList(url: string, token: string): Promise<{ status: number }> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body?.cancel();
  return { status: response.status };
}
