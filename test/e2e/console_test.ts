/**
 * The console end to end, in a real browser (Debian's Chromium driven by
 * playwright-core) against the real server: sign in, folders, uploads that
 * become searchable, page pictures, agent keys used from the MCP SDK client,
 * rolled and deleted, personal keys, the audit view and its exports, and bad
 * input in every form. Screenshots go to test/artifacts/console/.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { strFromU8, unzipSync } from "fflate";
import type { Page } from "playwright-core";
import { getPersonByEmail, listFolders } from "../../projections/catalogue.ts";
import { listAgentKeys, personalKeys } from "../../projections/key_scopes.ts";
import {
  type ConsoleServer,
  type ConsoleUnderTest,
  consoleUnderTest,
  startConsoleServer,
} from "./_console_server.ts";
import { loadPlaywright } from "./_playwright.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";

const CORPUS = `${CORPUS_DIR}/`;
const DECK = `${CORPUS}pptx/markitdown-test-deck-chart-table.pptx`;
const NOTES = `${CORPUS}text/markitdown-readme.md`;
const ARTIFACTS = new URL("../artifacts/console/", import.meta.url);

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
}

/** The text of the visible alert inside `scope`. */
async function alertText(page: Page, scope: string): Promise<string> {
  const alert = page.locator(`${scope} [role="alert"]:visible`).first();
  await alert.waitFor({ timeout: 10_000 });
  return (await alert.textContent())?.trim() ?? "";
}

/** Connects the MCP SDK client with a key; resolves to the client or rejects when the key is refused. */
async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: "console-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, "x-sergo-end-user": "e2e-tester" } },
  });
  await client.connect(transport);
  return client;
}

async function mcpSearch(url: string, key: string, query: string): Promise<Array<{ document: string }>> {
  const client = await mcpClient(url, key);
  try {
    const result = await client.callTool({ name: "search", arguments: { query, limit: 4 } });
    assert.equal(result.isError, false, JSON.stringify(result));
    return JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
  } finally {
    await client.close();
  }
}

/** Files for a drop, built inside the page from bytes (as a drag from the desktop gives them). */
async function dropFiles(
  page: Page,
  selector: string,
  files: Array<{ name: string; type: string; bytes: Uint8Array }>,
) {
  const payload = files.map((f) => ({
    name: f.name,
    type: f.type,
    data: Buffer.from(f.bytes).toString("base64"),
  }));
  const transfer = await page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) {
      const raw = atob(f.data);
      const bytes = new Uint8Array(raw.length);
      for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    return dt;
  }, payload);
  await page.dispatchEvent(selector, "dragenter", { dataTransfer: transfer });
  await page.dispatchEvent(selector, "drop", { dataTransfer: transfer });
}

Deno.test({
  name: "the console: sign in, documents, keys used over MCP, roll, delete, audit and bad input",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const chromiumPath = await needs("chromium");
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await using server: ConsoleServer = await startConsoleServer();
    const { url, running } = server;
    const db = running.app.db;
    const head = () => running.app.head().position;
    const profile = await Deno.makeTempDir({ prefix: "sergo-chromium-" });
    const { chromium } = await loadPlaywright();
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
      acceptDownloads: true,
      viewport: { width: 1280, height: 860 },
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
    const page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(url) && !request.url().startsWith("data:")) outside.push(request.url());
    });
    const person = getPersonByEmail(db, server.email)!;
    let documentId = "";
    let keyValue = "";
    let keyId = "";

    try {
      await t.step(
        "sign in: bad input is refused with a clear message, failures are slowed down",
        async () => {
          await page.goto(`${url}/keys`);
          assert.match(page.url(), /\/sign-in\?next=%2Fkeys$/);
          await shot(page, "01-sign-in");
          const before = head();
          await page.click('button:has-text("Sign in")');
          assert.equal(await alertText(page, "main"), "Enter your email.");
          await page.fill('input[name="email"]', server.email);
          await page.click('button:has-text("Sign in")');
          assert.equal(await alertText(page, "main"), "Enter your password.");
          let slowed = "";
          for (let i = 0; i < 8 && !slowed; i++) {
            await page.fill('input[name="password"]', `wrong password ${i}`);
            await page.click('button:has-text("Sign in")');
            const message = await alertText(page, "main");
            if (message.startsWith("Too many")) slowed = message;
            else assert.equal(message, "The email or password is wrong.");
          }
          const wait = /^Too many failed sign-ins — wait (\d+) seconds? and try again\.$/.exec(slowed);
          assert.ok(wait, `failures are slowed down, got "${slowed}"`);
          await page.fill('input[name="password"]', server.password);
          await page.click('button:has-text("Sign in")');
          assert.match(
            await alertText(page, "main"),
            /^Too many failed sign-ins/,
            "even the right password waits",
          );
          await shot(page, "02-sign-in-slowed");
          assert.equal(head(), before, "failed sign-ins wrote nothing to the log");
          const cookies = await context.cookies();
          assert.ok(!cookies.some((c) => c.name === "sergo_session"));
          server.advanceSignInClock(Number(wait[1]) * 1000 + 100);
          await page.fill('input[name="password"]', server.password);
          await page.click('button:has-text("Sign in")');
          await page.waitForURL(`${url}/keys`);
          const session = (await context.cookies()).find((c) => c.name === "sergo_session")!;
          assert.ok(session.httpOnly, "the session cookie is HttpOnly");
          assert.equal(session.sameSite, "Lax");
        },
      );

      await t.step("folders: bad names change nothing; a good one is made", async () => {
        await page.goto(`${url}/documents`);
        const before = head();
        const form = "#new-folder";
        const cases: Array<[string, RegExp]> = [
          ["", /^Give the folder a name\.$/],
          ["Energy/outlooks", /cannot contain "\/"/],
          ["x".repeat(201), /at most 200 characters; this one has 201/],
        ];
        for (const [name, message] of cases) {
          await page.fill(`${form} input[name="name"]`, name);
          await page.click(`${form} button`);
          assert.match(await alertText(page, form), message);
        }
        await page.fill(`${form} input[name="name"]`, "Energy outlooks");
        await page.click(`${form} button`);
        await page.waitForURL(/\/documents\?folder=/);
        assert.equal(head(), before + 1, "only the good folder was recorded");
        await page.goto(`${url}/documents`);
        await page.fill(`${form} input[name="name"]`, "Energy outlooks");
        await page.click(`${form} button`);
        assert.equal(await alertText(page, form), 'A folder named "Energy outlooks" already exists there.');
        assert.equal(listFolders(db, person.person_id).length, 1);
        await page.click('.tree a:has-text("Energy outlooks")');
        await page.waitForURL(/\/documents\?folder=/);
        assert.equal(await page.locator("h1").textContent(), "Energy outlooks");
      });

      await t.step(
        "upload: a non-document is refused; two dropped files upload with progress and become searchable",
        async () => {
          const before = head();
          await page.setInputFiles("#upload-files", {
            name: "holiday.bin",
            mimeType: "application/octet-stream",
            buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3, 0, 4, 5]),
          });
          const failed = page.locator(".upload-item.failed .upload-state");
          await failed.waitFor();
          assert.match(
            (await failed.textContent())!,
            /"holiday\.bin" is not a file Sergo reads.*— nothing was uploaded\./,
          );
          assert.equal(head(), before, "the refused upload wrote nothing");

          await dropFiles(page, "#upload", [
            {
              name: "markitdown-test-deck.pptx",
              type: "application/octet-stream",
              bytes: await Deno.readFile(DECK),
            },
            { name: "markitdown-readme.md", type: "text/markdown", bytes: await Deno.readFile(NOTES) },
          ]);
          await page.locator(".upload-item.done").nth(1).waitFor({ timeout: 30_000 });
          assert.equal(await page.locator(".upload-item progress").count(), 3, "one progress bar per file");
          assert.deepEqual(
            await page.locator(".upload-item.done progress").evaluateAll((bars) =>
              bars.map((b) => (b as HTMLProgressElement).value)
            ),
            [100, 100],
          );
          const row = page.locator('tr:has(a:has-text("markitdown-test-deck.pptx"))');
          await row.waitFor({ timeout: 10_000 });
          await shot(page, "03-uploading");
          await row.locator('[data-status="searchable"]').waitFor({ timeout: 60_000 });
          documentId = (await row.getAttribute("data-document-id"))!;
          assert.equal((await row.locator('[data-cell="pages"]').textContent())?.trim(), "6");
          assert.ok(await row.locator('[data-cell="to-view"] a').count() > 0, "pages to view are listed");
          await page.locator('tr[data-status="searchable"]').nth(1).waitFor({ timeout: 30_000 });
          await shot(page, "04-documents");
        },
      );

      await t.step("a document: its pages with text, marked pages flagged, a page as a picture", async () => {
        await page.click(`a[href="/documents/${documentId}"]`);
        await page.waitForURL(`${url}/documents/${documentId}`);
        assert.equal(await page.locator("ol.pages > li").count(), 6);
        assert.ok(await page.locator("li.page.marked .badge:has-text('To view')").count() > 0);
        assert.match((await page.locator("#page-1 .page-text").textContent())!, /AutoGen/);
        const deadline = Date.now() + 60_000;
        while (await page.locator("details.picture").count() === 0) {
          assert.ok(Date.now() < deadline, "the PDF copy was made within a minute");
          await new Promise((resolve) => setTimeout(resolve, 1000));
          await page.reload();
        }
        await page.click("#page-2 details.picture summary");
        const img = page.locator("#page-2 details.picture img");
        await img.waitFor();
        await page.waitForFunction(
          () => {
            const el = document.querySelector<HTMLImageElement>("#page-2 details.picture img");
            return el !== null && el.complete && el.naturalWidth > 0;
          },
          undefined,
          { timeout: 30_000 },
        );
        const size = await img.evaluate((
          el,
        ) => [(el as HTMLImageElement).naturalWidth, (el as HTMLImageElement).naturalHeight]);
        assert.ok(size[0]! > 300 && size[1]! > 200, `the picture is a real page drawing, got ${size}`);
        await img.scrollIntoViewIfNeeded();
        await shot(page, "05-document");
      });

      await t.step(
        "agent keys: bad input changes nothing; a key is made and its snippets are filled in",
        async () => {
          await page.goto(`${url}/keys`);
          const form = "#key-create";
          const before = head();
          const check = page.locator("#new-name-check");
          await page.fill(`${form} input[name="name"]`, "Energy");
          assert.match((await check.textContent())!, /must start with a lowercase letter/);
          await page.fill(`${form} input[name="name"]`, "energy outlooks!");
          assert.match((await check.textContent())!, /not " ", "!"/);
          await page.fill(`${form} input[name="name"]`, "e".repeat(33));
          assert.match((await check.textContent())!, /at most 32 characters, and has 33/);
          await shot(page, "06-key-name-check");
          await page.click(`${form} button[type="submit"]`);
          assert.match(await alertText(page, form), /at most 32 characters/);
          await page.fill(`${form} input[name="name"]`, "");
          await page.click(`${form} button[type="submit"]`);
          assert.equal(await alertText(page, form), "Give the key a name.");
          await page.fill(`${form} input[name="name"]`, "energy-outlooks");
          assert.match((await check.textContent())!, /is a good name/);
          await page.fill(`${form} textarea[name="description"]`, "d".repeat(1001));
          assert.match(
            (await page.locator("#new-description-count").textContent())!,
            /1,001 \/ 1,000 — too long/,
          );
          await page.click(`${form} button[type="submit"]`);
          assert.match(await alertText(page, form), /at most 1,000 characters; this one has 1001/);
          assert.equal(head(), before);
          assert.equal(listAgentKeys(db, person.person_id).length, 0);

          await page.fill(`${form} textarea[name="description"]`, "Energy outlook decks and notes.");
          await page.check(`${form} label:has-text("Energy outlooks") input[name="folders"]`);
          await page.click(`${form} button[type="submit"]`);
          const panel = page.locator("#secret");
          await panel.waitFor({ state: "visible" });
          keyValue = (await panel.locator('[data-slot="value"]').textContent())!;
          assert.match(keyValue, /^sgk_s_[A-Za-z0-9]+$/);
          const claude = await panel.locator('[data-slot="claude"]').textContent();
          assert.equal(
            claude,
            `claude mcp add --transport http energy-outlooks ${url}/mcp \\\n  --header "Authorization: Bearer ${keyValue}"`,
          );
          // Cursor's mcpServers: url and headers (test/console/snippets_test.ts checks every app's snippet).
          assert.deepEqual(JSON.parse((await panel.locator('[data-slot="json"]').textContent())!), {
            mcpServers: {
              "energy-outlooks": {
                url: `${url}/mcp`,
                headers: { Authorization: `Bearer ${keyValue}` },
              },
            },
          });
          await panel.locator('button:has-text("Copy key")').click();
          assert.equal(await page.evaluate(() => navigator.clipboard.readText()), keyValue);
          await shot(page, "07-key-created");
          const keys = listAgentKeys(db, person.person_id);
          assert.equal(keys.length, 1);
          keyId = keys[0]!.key_id;
          await page.click('a:has-text("Done")');
          assert.ok(!(await page.content()).includes(keyValue), "the value is shown once only");
          await page.fill(`${form} input[name="name"]`, "energy-outlooks");
          await page.click(`${form} button[type="submit"]`);
          assert.match(await alertText(page, form), /already exists/);
          await shot(page, "08-keys");
        },
      );

      await t.step("the key works from the MCP SDK client", async () => {
        const groups = await mcpSearch(url, keyValue, "AutoGen multi-agent framework");
        assert.equal(groups[0]?.document, "markitdown-test-deck.pptx");
      });

      await t.step("edit a key: a bad name is refused; a good description is saved", async () => {
        await page.goto(`${url}/keys/${keyId}`);
        const form = "#key-edit";
        await page.fill(`${form} input[name="name"]`, "-bad");
        await page.click(`${form} button[type="submit"]`);
        assert.match(await alertText(page, form), /must start with a lowercase letter/);
        await page.fill(`${form} input[name="name"]`, "energy-outlooks");
        await page.fill(`${form} textarea[name="description"]`, "EIA energy outlook decks.");
        await page.click(`${form} button[type="submit"]`);
        await page.locator(`${form} [data-slot="saved"]`).waitFor({ state: "visible" });
        assert.equal(listAgentKeys(db, person.person_id)[0]!.description, "EIA energy outlook decks.");
      });

      let oldValue = "";
      await t.step("roll with a grace time: the new and the old value both work", async () => {
        await page.check('#key-roll input[value="1h"]');
        assert.match((await page.locator("#roll-until").textContent())!, /keeps working until about/);
        await page.click('#key-roll button[type="submit"]');
        const panel = page.locator("#secret");
        await panel.waitFor({ state: "visible" });
        oldValue = keyValue;
        keyValue = (await panel.locator('[data-slot="value"]').textContent())!;
        assert.notEqual(keyValue, oldValue);
        assert.match(
          (await panel.locator('[data-slot="note"]').textContent())!,
          /The old value keeps working until/,
        );
        assert.ok((await panel.locator('[data-slot="claude"]').textContent())!.includes(keyValue));
        await shot(page, "09-key-rolled");
        for (const value of [keyValue, oldValue]) {
          const groups = await mcpSearch(url, value, "AutoGen");
          assert.equal(groups[0]?.document, "markitdown-test-deck.pptx");
        }
        await page.reload();
        assert.match((await page.locator(".old-value").first().textContent())!, /works until/);
      });

      await t.step("delete the key: both values stop at once", async () => {
        await page.click('button:has-text("Delete key")');
        await page.waitForURL(`${url}/keys`);
        assert.equal(listAgentKeys(db, person.person_id).length, 0);
        for (const value of [keyValue, oldValue]) {
          await assert.rejects(
            mcpClient(url, value),
            /Unknown key — it was deleted, or rolled and its old value has expired/,
          );
        }
      });

      await t.step("personal keys: made (shown once) and deleted", async () => {
        await page.goto(`${url}/personal-keys`);
        await page.click('button:has-text("Create a personal key")');
        await page.locator("#secret").waitFor({ state: "visible" });
        const value = (await page.locator('#secret [data-slot="value"]').textContent())!;
        assert.match(value, /^sgk_p_/);
        const me = await fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${value}` } });
        assert.equal((await me.json()).email, server.email);
        await shot(page, "10-personal-key");
        await page.click('a:has-text("Done")');
        await page.click('tr button:has-text("Delete")');
        await page.locator("p.empty").waitFor();
        assert.equal(personalKeys(db, person.person_id).length, 0);
        const after = await fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${value}` } });
        assert.equal(after.status, 401);
        await after.body?.cancel();
      });

      await t.step(
        "audit: the MCP calls are found by key, end user and action; exports download",
        async () => {
          await page.goto(`${url}/audit`);
          await page.fill('input[name="from"]', "yesterday");
          await page.click('#audit-filters button[type="submit"]');
          assert.match(await alertText(page, "#audit-filters"), /"From" must be a date such as 2025-01-31/);
          await page.fill('input[name="from"]', "");
          await page.selectOption('select[name="key"]', "energy-outlooks");
          await page.selectOption('select[name="action"]', "mcp search");
          await page.fill('input[name="end_user"]', "e2e-tester");
          await page.click('#audit-filters button[type="submit"]');
          await page.waitForURL(/action=mcp\+search/);
          const rows = page.locator('tr[data-action="mcp search"]');
          assert.equal(await rows.count(), 3, "one search before the roll and one with each value after it");
          assert.match((await rows.first().textContent())!, /AutoGen/);
          assert.match((await rows.first().textContent())!, /e2e-tester/);
          await shot(page, "11-audit");
          for (const format of ["jsonl", "csv"]) {
            const [download] = await Promise.all([
              page.waitForEvent("download"),
              page.click(`a:has-text("Export ${format.toUpperCase()}")`),
            ]);
            const path = new URL(`audit-export.${format}`, ARTIFACTS).pathname;
            await download.saveAs(path);
            const bytes = await Deno.readFile(path);
            const zipped = bytes[0] === 0x50 && bytes[1] === 0x4b;
            const text = zipped
              ? Object.values(unzipSync(bytes)).map((file) => strFromU8(file)).join("\n")
              : new TextDecoder().decode(bytes);
            assert.match(text, /mcp search/, `the ${format} export holds the searches`);
            assert.match(text, /e2e-tester/, `the ${format} export holds the end user`);
          }
        },
      );

      await t.step("phone width: the documents page still reads", async () => {
        const phone = await context.newPage();
        await phone.setViewportSize({ width: 390, height: 844 });
        await phone.goto(`${url}/documents`);
        const overflow = await phone.evaluate(() =>
          document.documentElement.scrollWidth - globalThis.innerWidth
        );
        assert.ok(overflow <= 1, `no sideways scrolling, got ${overflow}px`);
        await shot(phone, "12-documents-phone");
        await phone.close();
      });

      await t.step("sign out: the login token stops working", async () => {
        const cookie = (await context.cookies()).find((c) => c.name === "sergo_session")!;
        await page.goto(`${url}/documents`);
        await page.click('button:has-text("Sign out")');
        await page.waitForURL(`${url}/sign-in?signed-out=1`);
        assert.equal(await page.locator('[role="status"]').textContent(), "You are signed out.");
        const api = await fetch(`${url}/api/me`, { headers: { cookie: `sergo_session=${cookie.value}` } });
        assert.equal(api.status, 401);
        await api.body?.cancel();
        await page.goto(`${url}/documents`);
        assert.match(page.url(), /\/sign-in/);
        assert.deepEqual(outside, [], "the console asked for nothing outside this server");
      });
    } finally {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  },
});

/** Gets the sign-in page and returns the CSRF cookie value it sets. */
async function csrfFrom(server: ConsoleUnderTest): Promise<string> {
  const page = await server.fetch("/sign-in");
  await page.body?.cancel();
  const cookie = /sergo_csrf=([A-Za-z0-9]+)/.exec(page.headers.get("set-cookie") ?? "");
  assert.ok(cookie, "the sign-in page sets the CSRF cookie");
  return cookie[1]!;
}

function signInRequest(
  fields: Record<string, string>,
  cookie: string,
  headers: Record<string, string> = {},
): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
    body: new URLSearchParams(fields).toString(),
  };
}

Deno.test("console: sign-in needs the CSRF token and a same-origin post, and writes nothing otherwise", async () => {
  await using server = await consoleUnderTest();
  const csrf = await csrfFrom(server);
  const before = server.app.head().position;
  const fields = { email: server.email, password: server.password, csrf };
  const noCookie = await server.fetch("/sign-in", signInRequest(fields, ""));
  assert.equal(noCookie.status, 403);
  assert.match(await noCookie.text(), /This form has expired — try again\./);
  const wrongToken = await server.fetch(
    "/sign-in",
    signInRequest({ ...fields, csrf: "x".repeat(32) }, `sergo_csrf=${csrf}`),
  );
  assert.equal(wrongToken.status, 403);
  await wrongToken.body?.cancel();
  const foreign = await server.fetch(
    "/sign-in",
    signInRequest(fields, `sergo_csrf=${csrf}`, { origin: "https://evil.example" }),
  );
  assert.equal(foreign.status, 403);
  await foreign.body?.cancel();
  assert.equal(server.app.head().position, before, "no login token was issued");

  const good = await server.fetch(
    "/sign-in",
    signInRequest({ ...fields, next: "//evil.example/x" }, `sergo_csrf=${csrf}`, {
      origin: "http://127.0.0.1:8787",
    }),
  );
  assert.equal(good.status, 303);
  assert.equal(good.headers.get("location"), "/documents", "an off-site next is not followed");
  const cookie = good.headers.get("set-cookie") ?? "";
  assert.match(cookie, /^sergo_session=sgl_[A-Za-z0-9]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
  assert.equal(server.app.head().position, before + 1);
});

Deno.test("console: failed sign-ins are slowed down per email, with a clear message", async () => {
  await using server = await consoleUnderTest();
  const csrf = await csrfFrom(server);
  const attempt = async (password: string) => {
    const response = await server.fetch(
      "/sign-in",
      signInRequest({ email: server.email, password, csrf }, `sergo_csrf=${csrf}`),
    );
    return { status: response.status, text: await response.text() };
  };
  assert.equal((await attempt("nope")).status, 401);
  assert.equal((await attempt("nope again")).status, 401);
  const slowed = await attempt(server.password);
  assert.equal(slowed.status, 429);
  // The wait counts from the last failure: "1 minute" when the attempt is quick, "59 seconds" on a slow machine.
  assert.match(slowed.text, /Too many failed sign-ins — wait (1 minute|[1-5]?\d seconds?) and try again\./);
});

Deno.test("console: pages need a session; unknown paths fall through to the JSON 404", async () => {
  await using server = await consoleUnderTest();
  const page = await server.fetch("/keys/abc?x=1");
  assert.equal(page.status, 303);
  assert.equal(page.headers.get("location"), "/sign-in?next=%2Fkeys%2Fabc%3Fx%3D1");
  for (
    const path of ["/nope", "/.well-known/oauth-authorization-server", "/register", "/console/assets/nope.js"]
  ) {
    const response = await server.fetch(path);
    assert.equal(response.status, 404, path);
    assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8", path);
    await response.body?.cancel();
  }
  const css = await server.fetch("/console/assets/console.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  await css.body?.cancel();
});

Deno.test("console: names are escaped, cookies are Secure under https, snippets use the public URL", async () => {
  await using server = await consoleUnderTest({
    publicUrl: "https://sergo.example.com",
    origin: "https://sergo.example.com",
  });
  const csrf = await csrfFrom(server);
  const signIn = await server.fetch(
    "/sign-in",
    signInRequest({ email: server.email, password: server.password, csrf }, `sergo_csrf=${csrf}`),
  );
  assert.match(signIn.headers.get("set-cookie") ?? "", /; Secure$/);
  const session = /sergo_session=([^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")![1]!;
  const cookie = `sergo_session=${session}; sergo_csrf=${csrf}`;
  const evil = '<img src=x onerror="alert(1)">';
  const made = await server.fetch("/api/folders", {
    method: "POST",
    headers: { cookie, "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify({ name: evil }),
  });
  assert.equal(made.status, 201);
  const folderId = (await made.json()).id;
  const html = await (await server.fetch(`/documents?folder=${folderId}`, { headers: { cookie } })).text();
  assert.ok(!html.includes(evil), "the folder name is not written as markup");
  assert.ok(html.includes("&lt;img src=x onerror=&quot;alert(1)&quot;>"), "the folder name is shown as text");
  const keys = await (await server.fetch("/keys", { headers: { cookie } })).text();
  assert.match(keys, /data-public-url="https:\/\/sergo\.example\.com"/);
  const missing = await server.fetch("/documents/nOtThErE", { headers: { cookie } });
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /No document with id &quot;nOtThErE&quot;/);
});
