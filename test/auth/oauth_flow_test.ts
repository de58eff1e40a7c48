/**
 * Sergo as an OAuth 2.1 authorization server, request by request against the
 * real `serve`: discovery (RFC 9728, RFC 8414), a client metadata document on
 * loopback, consent through the console's form (a new key made there), the
 * code with PKCE and `iss` (RFC 9207), tokens bound to `/mcp` (RFC 8707),
 * refresh rotation and reuse, revocation from the key's page, deletion of the
 * key, replay, and the rules that keep static keys out of OAuth.
 */
import assert from "node:assert/strict";
import { MCP_AUTH_ERRORS } from "../../src/auth/mcp_auth.ts";
import { deleteAgentKey, rollAgentKey } from "../../src/domain/keys.ts";
import { appServer, Browser, pkce, startOAuthWorld } from "./_oauth.ts";
import { replayInto } from "../../projections/replay.ts";
import { DatabaseSync } from "node:sqlite";
import { readUntil, within } from "../helpers/wait.ts";

const decoder = new TextDecoder();

async function mcpCall(
  url: string,
  token: string | null,
  method: string,
  params: unknown = {},
  path = "/mcp",
) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function tokenRequest(url: string, fields: Record<string, string>) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: await response.json() };
}

function authorizeQuery(fields: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    code_challenge_method: "S256",
    ...fields,
  })}`;
}

Deno.test("a 401 names the resource metadata and keeps its body; discovery documents describe Sergo's server", async () => {
  await using world = await startOAuthWorld();
  const { url } = world;
  const none = await mcpCall(url, null, "tools/list");
  assert.equal(none.status, 401);
  assert.equal(
    none.text,
    JSON.stringify({ code: MCP_AUTH_ERRORS.noAuth.code, message: MCP_AUTH_ERRORS.noAuth.message }),
  );
  assert.equal(
    none.headers.get("www-authenticate"),
    `Bearer realm="sergo", resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`,
  );
  // A client configured with an sgk_ key is never pushed into OAuth: the reference's answer, untouched.
  await deleteAgentKey(world.running.app, { personId: world.personId, keyId: world.decksKey.keyId }, "cli");
  const gone = await mcpCall(url, world.decksKey.value, "tools/list");
  assert.equal(gone.status, 401);
  assert.equal(gone.headers.get("www-authenticate"), 'Bearer realm="sergo", error="invalid_token"');
  assert.equal(JSON.parse(gone.text).message, MCP_AUTH_ERRORS.unknown.message);
  const sse = await fetch(`${url}/sse`);
  assert.match(sse.headers.get("www-authenticate")!, /resource_metadata=".*\/oauth-protected-resource\/sse"/);
  await sse.body?.cancel();

  for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
    const prm = await (await fetch(`${url}${path}`)).json();
    assert.equal(prm.resource, `${url}/mcp`);
    assert.deepEqual(prm.authorization_servers, [url]);
  }
  const as = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
  assert.equal(as.issuer, url);
  assert.deepEqual(as.code_challenge_methods_supported, ["S256"]);
  assert.deepEqual(as.token_endpoint_auth_methods_supported, ["none"]);
  assert.equal(as.client_id_metadata_document_supported, true);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
  assert.equal(as.registration_endpoint, `${url}/oauth/register`);
});

Deno.test("with SERGO_OAUTH=off there is no discovery and no challenge, and the 401s are the reference's", async () => {
  await using world = await startOAuthWorld({ oauth: false });
  const none = await mcpCall(world.url, null, "tools/list");
  assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="sergo"');
  for (
    const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"]
  ) {
    const response = await fetch(`${world.url}${path}`);
    assert.equal(response.status, 404);
    await response.body?.cancel();
  }
  const register = await fetch(`${world.url}/oauth/register`, { method: "POST", body: "{}" });
  assert.equal(register.status, 404);
  await register.body?.cancel();
  // The console then offers no connector snippet (snippets.js reads the panel's data-oauth).
  const browser = new Browser(world.url);
  await browser.signIn(world.email, world.password);
  assert.match(await (await browser.fetch("/keys")).text(), /id="secret"[^>]*data-oauth="off"/);
});

Deno.test("the whole flow with a client metadata document: consent makes a key, the token acts as it until revoked", async (t) => {
  await using world = await startOAuthWorld();
  await using client = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Research Desk",
    redirect_uris: [`${origin}/callback`],
    token_endpoint_auth_method: "none",
  }));
  const { url } = world;
  const browser = new Browser(url);
  const { verifier, challenge } = pkce();
  const query = authorizeQuery({
    client_id: client.metadataUrl,
    redirect_uri: client.redirectUri,
    code_challenge: challenge,
    state: "st-1",
    resource: `${url}/mcp`,
  });
  let code = "";
  let token = "";
  let refresh = "";

  await t.step("signed out, the authorize request goes to sign-in and back", async () => {
    const first = await browser.fetch(query);
    assert.equal(first.status, 303);
    const location = first.headers.get("location")!;
    assert.match(location, /^\/sign-in\?next=%2Foauth%2Fauthorize%3F/);
    await browser.signIn(world.email, world.password);
  });

  await t.step(
    "the consent page names the app, where it sends you back and its metadata document",
    async () => {
      const page = await browser.fetch(query);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /<span id="consent-app">Research Desk<\/span>/);
      assert.match(html, new RegExp(`<dd id="consent-redirect-host">127\\.0\\.0\\.1:\\d+</dd>`));
      assert.ok(html.includes(`<dd id="consent-metadata-url">${client.metadataUrl}</dd>`));
      assert.match(html, /value="[A-Za-z0-9]+"[^>]*>?.*decks/s, "her existing key is offered");
      assert.match(
        page.headers.get("content-security-policy")!,
        new RegExp(`form-action 'self' ${client.origin}`),
      );
    },
  );

  await t.step("a bad new key name is refused on the page and nothing is granted", async () => {
    const response = await browser.post("/oauth/authorize", [
      ...new URLSearchParams(query.split("?")[1]),
      ["decision", "allow"],
      ["key", "new"],
      ["new_name", "Bad Name!"],
    ]);
    assert.equal(response.status, 400);
    assert.match(await response.text(), /role="alert" id="consent-error">[^<]+/);
    assert.equal(
      world.running.app.store.readFrom(0, 10_000).filter((e) => e.type === "OAuthGranted").length,
      0,
    );
  });

  await t.step("allowing with a new key sends the code back with state and iss", async () => {
    const response = await browser.post("/oauth/authorize", [
      ...new URLSearchParams(query.split("?")[1]),
      ["decision", "allow"],
      ["key", "new"],
      ["new_name", "research-desk"],
      ["new_description", "Papers for the research desk."],
      ["folders", world.folders.papers],
    ]);
    assert.equal(response.status, 303);
    const back = new URL(response.headers.get("location")!);
    assert.equal(back.origin + back.pathname, client.redirectUri);
    assert.equal(back.searchParams.get("state"), "st-1");
    assert.equal(back.searchParams.get("iss"), url);
    code = back.searchParams.get("code")!;
    assert.match(code, /^sgo_ac_/);
    const log = decoder.decode(await Deno.readFile(`${world.running.app.dataDir}/events.db`));
    assert.ok(!log.includes(code), "the code is stored as its hash only");
  });

  await t.step("a wrong verifier fails; the right one gets tokens; the code works once", async () => {
    const base = {
      grant_type: "authorization_code",
      code,
      client_id: client.metadataUrl,
      redirect_uri: client.redirectUri,
    };
    const refused = async (fields: Record<string, string>) => {
      const answer = await tokenRequest(url, fields);
      return [answer.status, answer.body.error, answer.body.error_description];
    };
    assert.deepEqual(await refused({ ...base, code_verifier: pkce().verifier }), [
      400,
      "invalid_grant",
      "The code_verifier does not match the code_challenge.",
    ]);
    // The right verifier, but another redirect URI or another resource than the grant's.
    assert.deepEqual(
      await refused({ ...base, code_verifier: verifier, redirect_uri: `${client.redirectUri}/elsewhere` }),
      [400, "invalid_grant", "The redirect_uri differs from the authorization request's."],
    );
    assert.deepEqual(await refused({ ...base, code_verifier: verifier, resource: `${url}/sse` }), [
      400,
      "invalid_target",
      `This grant is for ${url}/mcp only.`,
    ]);
    const ok = await tokenRequest(url, { ...base, code_verifier: verifier, resource: `${url}/mcp` });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.token_type, "Bearer");
    token = ok.body.access_token;
    refresh = ok.body.refresh_token;
    assert.match(token, /^sgo_at_/);
    const again = await tokenRequest(url, { ...base, code_verifier: verifier });
    assert.equal(again.body.error, "invalid_grant");
  });

  await t.step("the reused code ended the grant, so the flow starts over", async () => {
    const list = await mcpCall(url, token, "tools/list");
    assert.equal(list.status, 401);
    assert.match(list.headers.get("www-authenticate")!, /error="invalid_token", resource_metadata=/);
    const response = await browser.post("/oauth/authorize", [
      ...new URLSearchParams(query.split("?")[1]),
      ["decision", "allow"],
      [
        "key",
        world.running.app.db.prepare("SELECT key_id FROM key_agents WHERE name = 'research-desk'").get()!
          .key_id as string,
      ],
    ]);
    code = new URL(response.headers.get("location")!).searchParams.get("code")!;
    const ok = await tokenRequest(url, {
      grant_type: "authorization_code",
      code,
      client_id: client.metadataUrl,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
    });
    token = ok.body.access_token;
    refresh = ok.body.refresh_token;
  });

  await t.step(
    "the token acts exactly as the key: its texts, its scope, its audit entries with the app",
    async () => {
      await world.processed();
      const init = JSON.parse(
        (await mcpCall(url, token, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        })).text,
      );
      assert.equal(init.result.serverInfo.name, "research-desk");
      assert.match(
        init.result.instructions,
        /^research-desk — a document store you can search\.\nPapers for the research desk\./,
      );
      const found = JSON.parse(
        (await mcpCall(url, token, "tools/call", {
          name: "search",
          arguments: { query: "MarkItDown converting files to Markdown" },
        })).text,
      );
      // The key reads Papers only: the MarkItDown readme in Decks is not found.
      assert.ok(!found.result.content[0].text.includes("markitdown-readme.md"));
      const papers = JSON.parse(
        (await mcpCall(url, token, "tools/call", {
          name: "search",
          arguments: { query: "service blocking and filtering" },
        })).text,
      );
      assert.match(papers.result.content[0].text, /rfc7754-technical-considerations\.txt/);
      const call = world.running.app.store.readFrom(0, 10_000).filter((e) => e.type === "McpCalled").at(-1)!;
      assert.equal(call.data.key_name, "research-desk");
      assert.equal(call.data.details.oauth_app, "Research Desk");
      world.running.app.settle();
      const entry = world.running.app.db.prepare(
        "SELECT actor FROM audit_entries WHERE type = 'McpCalled' ORDER BY position DESC LIMIT 1",
      ).get() as { actor: string };
      assert.match(entry.actor, /\(research-desk\) through OAuth app “Research Desk”$/);
    },
  );

  await t.step(
    "a token for /mcp does not work at /sse, and tokens never go in the query string",
    async () => {
      const sse = await fetch(`${url}/sse`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(sse.status, 401);
      assert.match((await sse.json()).message, /issued for another resource/);
      const inQuery = await fetch(`${url}/oauth/token?grant_type=refresh_token&refresh_token=${refresh}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "",
      });
      assert.equal(inQuery.status, 400);
      await inQuery.body?.cancel();
    },
  );

  await t.step(
    "refresh rotates: the new pair works, the old refresh token ends the grant when reused",
    async () => {
      // Another app, or another resource, cannot use this refresh token (and it stays good for its app).
      const stolen = await tokenRequest(url, {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: `${client.metadataUrl}?another`,
      });
      assert.deepEqual(
        [stolen.status, stolen.body.error, stolen.body.error_description],
        [400, "invalid_grant", "The refresh token was given to another app."],
      );
      const elsewhere = await tokenRequest(url, {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: client.metadataUrl,
        resource: `${url}/sse`,
      });
      assert.deepEqual(
        [elsewhere.status, elsewhere.body.error, elsewhere.body.error_description],
        [400, "invalid_target", `This grant is for ${url}/mcp only.`],
      );
      const next = await tokenRequest(url, {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: client.metadataUrl,
      });
      assert.equal(next.status, 200);
      assert.notEqual(next.body.refresh_token, refresh);
      assert.equal((await mcpCall(url, next.body.access_token, "tools/list")).status, 200);
      // Rolling the key does not stop the app.
      const key = world.running.app.db.prepare("SELECT key_id FROM key_agents WHERE name = 'research-desk'")
        .get()!;
      await rollAgentKey(world.running.app, {
        personId: world.personId,
        keyId: key.key_id as string,
        grace: "now",
      }, "cli");
      assert.equal((await mcpCall(url, next.body.access_token, "tools/list")).status, 200);
      const reused = await tokenRequest(url, {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: client.metadataUrl,
      });
      assert.equal(reused.body.error, "invalid_grant");
      assert.equal((await mcpCall(url, next.body.access_token, "tools/list")).status, 401);
    },
  );

  await t.step(
    "revoking the app on the key's page stops its token at once; the page lists it before",
    async () => {
      const fresh = pkce();
      const response = await browser.post("/oauth/authorize", [
        ...new URLSearchParams(
          authorizeQuery({
            client_id: client.metadataUrl,
            redirect_uri: client.redirectUri,
            code_challenge: fresh.challenge,
          }).split("?")[1],
        ),
        ["decision", "allow"],
        ["key", world.decksKey.keyId],
      ]);
      const issued = await tokenRequest(url, {
        grant_type: "authorization_code",
        code: new URL(response.headers.get("location")!).searchParams.get("code")!,
        client_id: client.metadataUrl,
        redirect_uri: client.redirectUri,
        code_verifier: fresh.verifier,
      });
      assert.equal((await mcpCall(url, issued.body.access_token, "tools/list")).status, 200);
      const keyPage = await (await browser.fetch(`/keys/${world.decksKey.keyId}`)).text();
      const grantId = /data-grant="([A-Za-z0-9]+)"/.exec(keyPage)![1]!;
      assert.match(keyPage, /class="key-app-name">Research Desk</);
      const revoked = await browser.post(`/oauth/grants/${grantId}/revoke`, []);
      assert.equal(revoked.status, 303);
      const after = await mcpCall(url, issued.body.access_token, "tools/list");
      assert.equal(after.status, 401);
      assert.match(after.headers.get("www-authenticate")!, /resource_metadata=/);
      assert.ok(!(await (await browser.fetch(`/keys/${world.decksKey.keyId}`)).text()).includes(grantId));
    },
  );

  await t.step("the audit page shows the app being allowed and its calls through OAuth", async () => {
    const page = await (await browser.fetch("/audit")).text();
    assert.ok(page.includes("oauth app allowed"));
    assert.ok(page.includes("through OAuth app “Research Desk”"));
  });

  await t.step("the audit export shows who let which app read what, and no code or token hash", async () => {
    const exported = await browser.fetch("/api/audit/export?format=jsonl");
    assert.equal(exported.status, 200);
    const text = decoder.decode(new Uint8Array(await exported.arrayBuffer()));
    for (
      const action of [
        "oauth app allowed",
        "oauth tokens issued",
        "oauth tokens refreshed",
        "oauth app revoked",
      ]
    ) {
      assert.ok(text.includes(action), `the export has "${action}"`);
    }
    const hashes = world.running.app.db.prepare(
      "SELECT code_hash AS h FROM oauth_grants UNION SELECT access_hash FROM oauth_grants WHERE access_hash IS NOT NULL UNION SELECT hash FROM oauth_spent_refresh",
    ).all() as Array<{ h: string }>;
    assert.ok(hashes.length >= 4);
    for (const { h } of hashes) assert.ok(!text.includes(h), "no secret's hash leaves the install");
  });

  await t.step("replay rebuilds the grants: revoked stays revoked", async () => {
    const app = world.running.app;
    const before = app.db.prepare("SELECT grant_id, revoked, code_used FROM oauth_grants ORDER BY grant_id")
      .all();
    const dir = await Deno.makeTempDir();
    try {
      await replayInto(app.store, `${dir}/projections.db`);
      const rebuilt = new DatabaseSync(`${dir}/projections.db`);
      assert.deepEqual(
        rebuilt.prepare("SELECT grant_id, revoked, code_used FROM oauth_grants ORDER BY grant_id").all(),
        before,
      );
      rebuilt.close();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("a token for /sse opens the SSE stream as its key, and revoking the app ends the stream", async () => {
  await using world = await startOAuthWorld();
  await using client = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "Old SSE App",
    redirect_uris: [`${origin}/callback`],
  }));
  const { url } = world;
  const browser = new Browser(url);
  await browser.signIn(world.email, world.password);
  const { verifier, challenge } = pkce();
  const fields = {
    client_id: client.metadataUrl,
    redirect_uri: client.redirectUri,
    code_challenge: challenge,
    resource: `${url}/sse`,
  };
  const allowed = await browser.post("/oauth/authorize", [
    ...new URLSearchParams(authorizeQuery(fields).split("?")[1]),
    ["decision", "allow"],
    ["key", world.decksKey.keyId],
  ]);
  const code = new URL(allowed.headers.get("location")!).searchParams.get("code")!;
  const tokens = await tokenRequest(url, {
    grant_type: "authorization_code",
    code,
    client_id: client.metadataUrl,
    redirect_uri: client.redirectUri,
    code_verifier: verifier,
    resource: `${url}/sse`,
  });
  const token = tokens.body.access_token;
  assert.equal((await mcpCall(url, token, "tools/list")).status, 401, "an /sse token is not for /mcp");
  const stream = await fetch(`${url}/sse`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(stream.status, 200);
  const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = await readUntil(reader, (t) => t.includes("\n\n"), {
    ms: 10_000,
    what: "the stream's first event (its endpoint)",
  });
  const endpoint = /data: (\S+)/.exec(text)![1]!;
  const posted = await fetch(`${url}${endpoint}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
  });
  assert.equal(posted.status, 202);
  await posted.body?.cancel();
  text = await readUntil(reader, (t) => t.includes('"id":5'), {
    ms: 10_000,
    what: "the answer to message 5 on the stream",
  });
  const keyPage = await (await browser.fetch(`/keys/${world.decksKey.keyId}`)).text();
  const grantId = /data-grant="([A-Za-z0-9]+)"/.exec(keyPage)![1]!;
  await (await browser.post(`/oauth/grants/${grantId}/revoke`, [])).body?.cancel();
  // The session ends within a recheck (a second); a stream still open after 10 s fails the test.
  const ends = (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  try {
    await within(ends, { ms: 10_000, what: "the SSE stream's end after the app was revoked" });
  } finally {
    await reader.cancel().catch(() => {});
  }
});
