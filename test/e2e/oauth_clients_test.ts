/**
 * Connector apps nobody here wrote, signing in to Sergo with OAuth against
 * the real `serve`: the official Python SDK (`streamablehttp_client` with its
 * `OAuthClientProvider`) and the official TypeScript SDK client (with its
 * `OAuthClientProvider` interface), each through discovery, registration,
 * PKCE and the console's consent page in Chromium (Playwright), then tool
 * calls, a refresh, and a revocation from the key's page.
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { loadPlaywright } from "./_playwright.ts";
import { needs } from "../helpers/dependencies.ts";
import { startOAuthWorld } from "../auth/_oauth.ts";
import { within } from "../helpers/wait.ts";

const PYTHON_CLIENT = new URL("../clients/python_oauth.py", import.meta.url).pathname;

async function launch(): Promise<{ context: BrowserContext; page: Page; close: () => Promise<void> }> {
  const executablePath = await needs("chromium");
  const profile = await Deno.makeTempDir({ prefix: "sergo-chromium-" });
  const { chromium } = await loadPlaywright();
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
      "--disable-quic",
    ],
  });
  const page = await context.newPage();
  return {
    context,
    page,
    close: async () => {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** Opens an authorization URL, signs in if asked, picks a key (or makes one) and allows. */
async function consent(
  page: Page,
  authorizationUrl: string,
  world: { email: string; password: string },
  choice: { key: string } | { newKey: string; folderLabel: string },
): Promise<{ app: string; redirectHost: string }> {
  await page.goto(authorizationUrl);
  if (new URL(page.url()).pathname === "/sign-in") {
    await page.fill('input[name="email"]', world.email);
    await page.fill('input[name="password"]', world.password);
    await page.click('button[type="submit"]');
    await page.waitForSelector("#consent");
  }
  const app = (await page.textContent("#consent-app"))!.trim();
  const redirectHost = (await page.textContent("#consent-redirect-host"))!.trim();
  if ("key" in choice) {
    await page.locator("label.choice", { hasText: choice.key }).locator('input[type="radio"]').check();
  } else {
    await page.check("#consent-new-key");
    await page.fill('input[name="new_name"]', choice.newKey);
    await page.locator("fieldset.tree label", { hasText: choice.folderLabel }).locator(
      'input[name="folders"]',
    )
      .check();
  }
  await Promise.all([page.waitForURL((url) => url.pathname === "/callback"), page.click("#consent-allow")]);
  return { app, redirectHost };
}

/** Revokes an app on a key's page. */
async function revokeOnKeyPage(page: Page, base: string, keyId: string, app: string): Promise<void> {
  await page.goto(`${base}/keys/${keyId}`);
  const row = page.locator(".key-app", { hasText: app });
  await row.waitFor();
  await Promise.all([page.waitForURL(`${base}/keys/${keyId}`), row.locator("button").click()]);
  assert.equal(await page.locator(".key-app", { hasText: app }).count(), 0);
}

Deno.test({
  name:
    "the official Python SDK signs in with OAuth through the console, searches, refreshes, and stops when revoked",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using world = await startOAuthWorld();
    await world.processed();
    const browser = await launch();
    const python = new Deno.Command(await needs("python3"), {
      args: [PYTHON_CLIENT, `${world.url}/mcp`, "MarkItDown converting files to Markdown"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const lines = python.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const stdin = python.stdin.getWriter();
    let buffered = "";
    const next = async (): Promise<Record<string, unknown>> => {
      for (;;) {
        const newline = buffered.indexOf("\n");
        if (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          return JSON.parse(line);
        }
        const { value, done } = await within(lines.read(), {
          ms: 180_000,
          what: "the Python client's next line",
        });
        if (done) {
          const err = await new Response(python.stderr).text();
          throw new Error(`The Python client ended early: ${buffered} ${err.slice(-3000)}`);
        }
        buffered += value;
      }
    };
    try {
      const { authorize } = await next() as { authorize: string };
      const asked = new URL(authorize);
      assert.equal(asked.origin + asked.pathname, `${world.url}/oauth/authorize`);
      assert.equal(asked.searchParams.get("code_challenge_method"), "S256");
      assert.equal(asked.searchParams.get("resource"), `${world.url}/mcp`);
      const shown = await consent(browser.page, authorize, world, { key: "decks" });
      assert.equal(shown.app, "Python SDK test app");
      assert.match(shown.redirectHost, /^127\.0\.0\.1:\d+$/);

      const { connected } = await next() as {
        connected: {
          server: string;
          tools: string[];
          search: { is_error: boolean; text: string };
          client_id: string;
        };
      };
      assert.equal(connected.server, "decks");
      assert.deepEqual(connected.tools, ["search", "list_documents", "read_document", "view_page"]);
      assert.equal(connected.search.is_error, false);
      assert.match(connected.search.text, /markitdown-readme\.md/);
      assert.ok(!connected.search.text.includes("rfc7754"), "the decks key never reads Papers");
      assert.match(connected.client_id, /^sgc_/, "the SDK registered itself (RFC 7591)");

      const { refreshed } = await next() as {
        refreshed: { search: { is_error: boolean }; rotated: boolean; new_access: boolean };
      };
      assert.deepEqual(refreshed, {
        search: { is_error: false, text: connected.search.text },
        rotated: true,
        new_access: true,
      });

      const calls = world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "McpCalled");
      assert.equal(calls.length, 2);
      for (const call of calls) {
        assert.equal(call.data.key_id, world.decksKey.keyId);
        assert.equal(call.data.details.oauth_app, "Python SDK test app");
      }
      const types = world.running.app.store.readFrom(0, 100_000).map((e) => e.type);
      assert.deepEqual(types.filter((t) => t.startsWith("OAuth")), [
        "OAuthClientRegistered",
        "OAuthGranted",
        "OAuthTokensIssued",
        "OAuthTokensIssued",
      ]);

      assert.deepEqual(await next(), { revoke: true });
      await revokeOnKeyPage(browser.page, world.url, world.decksKey.keyId, "Python SDK test app");
      await stdin.write(new TextEncoder().encode("go\n"));
      const { done } = await next() as { done: { error?: string; after?: unknown } };
      assert.equal(done.after, undefined, "no call succeeds after the revocation");
      assert.match(done.error ?? "", /sign-in again/);
      const after = world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "McpCalled");
      assert.equal(after.length, 2, "nothing was answered after the revocation");
    } finally {
      await stdin.close().catch(() => {});
      try {
        python.kill("SIGTERM");
      } catch {
        // it ended by itself
      }
      await python.status;
      await lines.cancel().catch(() => {});
      await python.stderr.cancel().catch(() => {});
      await browser.close();
    }
  },
});

/** The TypeScript SDK's OAuth provider interface, kept in memory as a desktop app keeps it on disk. */
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
      client_name: "TypeScript SDK test app",
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
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.stored = undefined;
    if (scope === "all" || scope === "client") this.client = undefined;
  }
}

Deno.test({
  name:
    "the official TypeScript SDK client signs in with OAuth, makes a key on the consent page, and refreshes",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using world = await startOAuthWorld();
    await world.processed();
    const browser = await launch();
    const callback = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("Signed in"),
    );
    const provider = new MemoryProvider(`http://127.0.0.1:${callback.addr.port}/callback`);
    const mcpUrl = new URL(`${world.url}/mcp`);
    const connect = async () => {
      const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await client.connect(transport);
      return { client, transport };
    };
    try {
      // First contact: the SDK discovers, registers and sends the person to consent.
      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await assert.rejects(
        new Client({ name: "ts-oauth-test", version: "1.0.0" }).connect(first),
        UnauthorizedError,
      );
      assert.equal(provider.authorizations.length, 1);
      assert.match(String(provider.client?.client_id), /^sgc_/);
      const shown = await consent(browser.page, provider.authorizations[0]!.href, world, {
        newKey: "ts-app",
        folderLabel: "Papers",
      });
      assert.equal(shown.app, "TypeScript SDK test app");
      const back = new URL(browser.page.url());
      assert.equal(back.searchParams.get("iss"), world.url);
      await first.finishAuth(back.searchParams.get("code")!);
      assert.match(provider.stored!.access_token, /^sgo_at_/);

      const { client } = await connect();
      assert.equal(client.getServerVersion()?.name, "ts-app");
      const found = await client.callTool({
        name: "search",
        arguments: { query: "service blocking and filtering" },
      });
      assert.match(
        (found.content as Array<{ text: string }>)[0]!.text,
        /rfc7754-technical-considerations\.txt/,
      );
      const other = await client.callTool({ name: "search", arguments: { query: "MarkItDown" } });
      assert.ok(!(other.content as Array<{ text: string }>)[0]!.text.includes("markitdown-readme"));
      await client.close();

      // The access token stops working (as after an hour): the SDK refreshes on the 401 and carries on.
      const old = provider.stored!;
      provider.stored = { ...old, access_token: `${old.access_token.slice(0, -4)}xxxx` };
      const again = await connect();
      const listed = await again.client.listTools();
      assert.equal(listed.tools.length, 4);
      assert.notEqual(provider.stored!.refresh_token, old.refresh_token, "the refresh token was rotated");
      await again.client.close();

      // Revoked on the key's page: the next connection is sent back to sign in.
      const keyId =
        (world.running.app.db.prepare("SELECT key_id FROM key_agents WHERE name = 'ts-app'").get() as {
          key_id: string;
        }).key_id;
      await revokeOnKeyPage(browser.page, world.url, keyId, "TypeScript SDK test app");
      await assert.rejects(connect(), UnauthorizedError);
      assert.equal(provider.authorizations.length, 2);
    } finally {
      await callback.shutdown();
      await browser.close();
    }
  },
});
