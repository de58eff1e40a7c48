/**
 * The ChatGPT-shaped server against the real `serve`, signed in the way
 * ChatGPT signs in: OAuth discovery from the 401 of `/chatgpt/mcp`, a client
 * ID metadata document (and, with the official TypeScript SDK client,
 * dynamic registration), consent in the console, a token for the
 * `/chatgpt/mcp` resource, then `search` and `fetch` in OpenAI's shapes; the
 * result links open the page for its owner only; the same key's `/mcp` is
 * untouched, and both endpoints share the key's rate limit.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { appServer, Browser, pkce, startOAuthWorld } from "../auth/_oauth.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { hashPassword } from "../../src/auth/passwords.ts";

async function rpc(url: string, token: string, method: string, params: unknown = {}, path = "/chatgpt/mcp") {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: response.status, text: await response.text() };
}

async function tokenRequest(url: string, fields: Record<string, string>) {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: await response.json() };
}

/** Allows an authorization request on the consent page for an existing key; returns the code. */
async function allow(browser: Browser, authorization: URL, keyId: string): Promise<string> {
  const response = await browser.post("/oauth/authorize", [
    ...authorization.searchParams,
    ["decision", "allow"],
    ["key", keyId],
  ]);
  assert.equal(response.status, 303, await response.text());
  const code = new URL(response.headers.get("location")!).searchParams.get("code");
  assert.ok(code, "the code comes back to the app");
  return code;
}

Deno.test("ChatGPT's way in: discovery, a client metadata document, consent, a token for /chatgpt/mcp, then search and fetch", async () => {
  await using world = await startOAuthWorld();
  await using app = appServer((origin) => ({
    client_id: `${origin}/client.json`,
    client_name: "ChatGPT",
    redirect_uris: [`${origin}/callback`],
    token_endpoint_auth_method: "none",
  }));
  const { url } = world;
  await world.processed();

  // Discovery: the 401 names this path's resource metadata, which names the resource and the server.
  const anonymous = await fetch(`${url}/chatgpt/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  const metadataUrl = `${url}/.well-known/oauth-protected-resource/chatgpt/mcp`;
  assert.equal(
    anonymous.headers.get("www-authenticate"),
    `Bearer realm="sergo", resource_metadata="${metadataUrl}"`,
  );
  const resource = await (await fetch(metadataUrl)).json();
  assert.equal(resource.resource, `${url}/chatgpt/mcp`);
  assert.deepEqual(resource.authorization_servers, [url]);
  const server = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
  assert.equal(server.client_id_metadata_document_supported, true);

  // Consent for the decks key, with the resource; the token is asked for with the resource too.
  const { verifier, challenge } = pkce();
  const authorization = new URL(`${url}/oauth/authorize`);
  for (
    const [name, value] of Object.entries({
      response_type: "code",
      client_id: app.metadataUrl,
      redirect_uri: app.redirectUri,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "gpt-1",
      resource: `${url}/chatgpt/mcp`,
    })
  ) authorization.searchParams.set(name, value);
  const browser = new Browser(url);
  await browser.signIn(world.email, world.password);
  const code = await allow(browser, authorization, world.decksKey.keyId);
  const granted = await tokenRequest(url, {
    grant_type: "authorization_code",
    code,
    client_id: app.metadataUrl,
    redirect_uri: app.redirectUri,
    code_verifier: verifier,
    resource: `${url}/chatgpt/mcp`,
  });
  assert.equal(granted.status, 200, JSON.stringify(granted.body));
  const token = granted.body.access_token as string;

  // The token is for /chatgpt/mcp alone.
  const elsewhere = await rpc(url, token, "tools/list", {}, "/mcp");
  assert.equal(elsewhere.status, 401);
  assert.match(JSON.parse(elsewhere.text).message, /issued for another resource/);

  const list = JSON.parse((await rpc(url, token, "tools/list")).text);
  assert.deepEqual(list.result.tools.map((tool: { name: string }) => tool.name), ["search", "fetch"]);
  const searched = JSON.parse(
    (await rpc(url, token, "tools/call", { name: "search", arguments: { query: "MarkItDown" } })).text,
  );
  assert.equal(searched.result.isError, false);
  assert.equal(searched.result.content.length, 1);
  const { results } = JSON.parse(searched.result.content[0].text);
  assert.ok(results.length > 0);
  for (const result of results) {
    assert.deepEqual(Object.keys(result), ["id", "title", "url"]);
    assert.match(result.title, /^markitdown-readme\.md — page \d+$/);
    assert.ok(result.url.startsWith(`${url}/documents/`));
  }
  // The key reads Decks: the RFC in Papers is never found.
  const papers = JSON.parse(
    (await rpc(url, token, "tools/call", {
      name: "search",
      arguments: { query: "service blocking and filtering" },
    })).text,
  );
  assert.ok(!papers.result.content[0].text.includes("rfc7754"));
  const fetched = JSON.parse(
    (await rpc(url, token, "tools/call", { name: "fetch", arguments: { id: results[0].id } })).text,
  );
  const page = JSON.parse(fetched.result.content[0].text);
  assert.deepEqual(Object.keys(page), ["id", "title", "text", "url", "metadata"]);
  assert.equal(page.id, results[0].id);
  assert.ok(page.text.length > 0);
  assert.equal(page.metadata.folder, "Ava Bennett's documents/Decks");
  assert.equal(page.metadata.type, "md");

  // Audited as the key, through the app, naming the shape.
  const calls = world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "McpCalled");
  const last = calls.at(-1)!;
  assert.equal(last.data.shape, "chatgpt");
  assert.equal(last.data.key_name, "decks");
  assert.equal(last.data.details.oauth_app, "ChatGPT");

  // The link opens the page for Ava, sends anyone signed out to sign in, and is a missing page for Bob.
  const link = new URL(results[0].url);
  const own = await browser.fetch(link.pathname + link.search);
  assert.equal(own.status, 200);
  assert.match(await own.text(), /markitdown-readme\.md/);
  const signedOut = await fetch(link, { redirect: "manual" });
  assert.equal(signedOut.status, 303);
  assert.match(signedOut.headers.get("location")!, /^\/sign-in\?next=%2Fdocuments%2F/);
  await signedOut.body?.cancel();
  const bob = await addPerson(world.running.app, { name: "Bob Stone", email: "bob@example.com" });
  await setPasswordHash(
    world.running.app,
    bob.person_id,
    await hashPassword("another correct horse battery"),
  );
  const bobs = new Browser(url);
  await bobs.signIn("bob@example.com", "another correct horse battery");
  const theirs = await bobs.fetch(link.pathname + link.search);
  assert.equal(theirs.status, 404);
  assert.ok(!(await theirs.text()).includes(page.text.slice(0, 40)), "nothing of the page shows");

  // The same key's /mcp: the reference's four tools, no title, as before.
  const reference = JSON.parse((await rpc(url, world.decksKey.value, "tools/list", {}, "/mcp")).text);
  assert.deepEqual(
    reference.result.tools.map((
      tool: { name: string; annotations: unknown },
    ) => [tool.name, tool.annotations]),
    ["search", "list_documents", "read_document", "view_page"].map((name) => [
      name,
      { readOnlyHint: true, openWorldHint: false },
    ]),
  );
});

/** The TypeScript SDK's OAuth client state, in memory; authorization URLs are collected for the consent. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  stored?: OAuthTokens;
  verifier = "";
  authorizations: URL[] = [];
  constructor(readonly redirect: string) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "ChatGPT-like SDK app",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

Deno.test({
  name:
    "the official TypeScript SDK client signs in to /chatgpt/mcp (dynamic registration) and calls search and fetch",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using world = await startOAuthWorld();
    await world.processed();
    const provider = new MemoryProvider("http://127.0.0.1:9/callback");
    const endpoint = new URL(`${world.url}/chatgpt/mcp`);
    const first = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
    await assert.rejects(
      new Client({ name: "gpt-like", version: "1.0.0" }).connect(first),
      UnauthorizedError,
    );
    assert.equal(provider.authorizations.length, 1);
    const authorization = provider.authorizations[0]!;
    assert.match(String(provider.client?.client_id), /^sgc_/, "registered dynamically");
    assert.equal(authorization.searchParams.get("resource"), `${world.url}/chatgpt/mcp`);
    const browser = new Browser(world.url);
    await browser.signIn(world.email, world.password);
    await first.finishAuth(await allow(browser, authorization, world.decksKey.keyId));
    assert.match(provider.stored!.access_token, /^sgo_at_/);

    const client = new Client({ name: "gpt-like", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    try {
      assert.equal(client.getServerVersion()?.name, "decks");
      const tools = await client.listTools();
      assert.deepEqual(
        tools.tools.map((
          tool: { name: string; annotations?: { title?: string } },
        ) => [tool.name, tool.annotations?.title]),
        [
          ["search", "Search decks"],
          ["fetch", "Read a page from decks"],
        ],
      );
      const found = await client.callTool({ name: "search", arguments: { query: "MarkItDown" } });
      const blocks = found.content as Array<{ type: string; text: string }>;
      assert.equal(blocks.length, 1);
      const { results } = JSON.parse(blocks[0]!.text);
      assert.ok(results.length > 0);
      const read = await client.callTool({ name: "fetch", arguments: { id: results[0].id } });
      const page = JSON.parse((read.content as Array<{ text: string }>)[0]!.text);
      assert.equal(page.id, results[0].id);
      assert.equal(page.title, results[0].title);
      assert.equal(typeof page.metadata.view_page_may_help, "boolean");
    } finally {
      await client.close();
    }
  },
});

Deno.test("one rate limit per key across /mcp and /chatgpt/mcp", async () => {
  await using world = await startOAuthWorld({ rateLimitPerSecond: 1, rateLimitBurst: 2 });
  const key = world.decksKey.value;
  const statuses = [
    (await rpc(world.url, key, "tools/list", {}, "/mcp")).status,
    (await rpc(world.url, key, "tools/list", {}, "/chatgpt/mcp")).status,
    (await rpc(world.url, key, "tools/list", {}, "/chatgpt/mcp")).status,
    (await rpc(world.url, key, "tools/list", {}, "/mcp")).status,
  ];
  assert.deepEqual(statuses.slice(0, 2), [200, 200]);
  assert.ok(statuses.slice(2).includes(429), `the burst is shared: ${statuses}`);
});
