/**
 * The console as a newcomer meets it, in a real browser (Debian's Chromium
 * driven by playwright-core) against `main.ts serve` in a subprocess over an
 * empty data directory: the setup address from serve's output creates the
 * first person, an administrator, who invites a second; each signs in and
 * sees only their own things. Screenshots at 1280×800 and 390×844 go to
 * test/artifacts/newcomer/.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { loadPlaywright } from "./_playwright.ts";
import { needs } from "../helpers/dependencies.ts";
import { runCli, TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const ARTIFACTS = new URL("../artifacts/newcomer/", import.meta.url);
const README = `${CORPUS_DIR}/text/markitdown-readme.md`;
const FORM = `${CORPUS_DIR}/pdf/form-libreoffice-fields.pdf`;
const SCAN = `${CORPUS_DIR}/pdf/scanned-text-page-image-only.pdf`;
/** A sentence of README's text: the export must never hold it. */
const README_SENTENCE = "MarkItDown is a lightweight Python utility for converting various files to Markdown";
const VIEWPORTS = { wide: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** `main.ts serve` on a free port of 127.0.0.1 over `dir`; resolves with its output lines so far. */
async function serve(dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, MAIN, "serve", "--data", dir, "--port", "0", "--host", "127.0.0.1"],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("/setup?token=") || !out.endsWith("\n")) {
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
    if (done) {
      throw new Error(`serve ended: ${out}${new TextDecoder().decode((await child.output()).stderr)}`);
    }
    out += value;
  }
  const url = /Sergo is serving \S+ at (http:\/\/\S+)/.exec(out)![1]!;
  return {
    url,
    out,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
    },
  };
}

/** Screenshots of the page at both sizes, full length. */
async function shots(page: Page, name: string): Promise<void> {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: new URL(`${name}-${size}.png`, ARTIFACTS).pathname, fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.wide);
}

async function alertText(page: Page): Promise<string> {
  const alert = page.locator('main [role="alert"]:visible').first();
  await alert.waitFor({ timeout: 10_000 });
  return (await alert.textContent())?.trim() ?? "";
}

/** The CSRF token a signed-in page carries. */
function csrfOf(page: Page): Promise<string> {
  return page.locator('meta[name="sergo-csrf"]').getAttribute("content").then((value) => value ?? "");
}

/** Connects the MCP SDK client with an agent key, as an end user. */
async function mcpClient(url: string, key: string, endUser: string): Promise<Client> {
  const client = new Client({ name: "newcomer-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, "x-sergo-end-user": endUser } },
    }),
  );
  return client;
}

/** Waits until the API says the document has left "processing". */
async function settled(page: Page, url: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const answer = await page.request.get(`${url}/api/documents/${id}`);
    const doc = await answer.json();
    if (!answer.ok()) throw new Error(`GET document: ${answer.status()} ${JSON.stringify(doc)}`);
    if (doc.status !== "processing") return doc;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`document ${id} is still processing`);
}

/** Fills and sends the password form (setup, invitation or reset). */
async function choosePassword(page: Page, password: string, again = password): Promise<void> {
  await page.fill('input[name="password"]', password);
  await page.fill('input[name="password2"]', again);
  await page.click('main button[type="submit"]');
}

Deno.test({
  name: "a newcomer: setup address from serve, first administrator, an invited person, each sees their own",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const chromiumPath = await needs("chromium");
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await using dir = await tempDir("sergo-newcomer-");
    await using server = await serve(dir.path);
    const { url } = server;
    const { chromium } = await loadPlaywright();
    const browser: Browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
      ],
    });
    const contexts: BrowserContext[] = [];
    const newPage = async () => {
      // A reader east of UTC, so the local time on hover differs from the UTC on the page.
      const context = await browser.newContext({
        viewport: VIEWPORTS.wide,
        acceptDownloads: true,
        timezoneId: "Asia/Kolkata",
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on("dialog", (dialog) => void dialog.accept());
      return page;
    };
    try {
      const setupLine = server.out.split("\n").find((line) => line.includes("/setup?token="))!;
      const setupUrl = /(http:\/\/\S+\/setup\?token=[0-9A-Za-z]+)/.exec(setupLine)![1]!;
      const ava = await newPage();
      let invitation = "";

      await t.step("before setup: / says how to begin; a wrong token is a missing page", async () => {
        await ava.goto(`${url}/`);
        assert.match(await ava.locator("main").textContent() ?? "", /setup address that serve printed/);
        const wrong = await ava.goto(`${url}/setup?token=${"x".repeat(43)}`);
        assert.equal(wrong?.status(), 404);
        const none = await ava.goto(`${url}/setup`);
        assert.equal(none?.status(), 404);
      });

      await t.step("setup: bad input is refused in one sentence; the first person is signed in", async () => {
        await ava.goto(setupUrl);
        await shots(ava, "01-setup");
        await ava.fill('input[name="name"]', "Ava Bennett");
        await ava.fill('input[name="email"]', "ava@example.com");
        await choosePassword(ava, "a long enough phrase", "a different phrase");
        assert.equal(await alertText(ava), "The two passwords differ — type the same one twice.");
        await choosePassword(ava, "password1");
        assert.match(await alertText(ava), /one of the most common passwords/);
        await choosePassword(ava, "ava's own quiet river");
        await ava.waitForURL(`${url}/documents`);
        assert.equal(await ava.locator(".who").textContent(), "Ava Bennett");
        assert.equal(
          await ava.locator('nav a:has-text("People")').count(),
          1,
          "an administrator sees People",
        );
        const again = await (await newPage()).goto(setupUrl);
        assert.equal(again?.status(), 404, "the setup address worked once");
      });

      await t.step("the administrator adds a person; the invitation link is shown once", async () => {
        await ava.click('nav a:has-text("People")');
        await ava.waitForURL(`${url}/people`);
        await ava.fill('input[name="name"]', "Bea Okafor");
        await ava.fill('input[name="email"]', "ava@example.com");
        await ava.click('button:has-text("Add and make an invitation link")');
        assert.match(await alertText(ava), /already exists/);
        await ava.fill('input[name="email"]', "bea@example.com");
        await ava.click('button:has-text("Add and make an invitation link")');
        invitation = (await ava.locator("#password-link-url").textContent())!;
        assert.match(invitation, new RegExp(`^${url}/password\\?token=[0-9A-Za-z]{43}$`));
        assert.match(await ava.locator("#people").textContent() ?? "", /Bea Okafor.*Not set yet/);
        await shots(ava, "02-people");
        await ava.reload(); // a reload posts nothing: the link is gone from the page
        assert.equal(await ava.locator("#password-link-url").count(), 0);
      });

      const bea = await newPage();
      await t.step("the invited person sets a password through the link, once", async () => {
        await bea.goto(invitation);
        assert.match(await bea.locator("h1").textContent() ?? "", /Welcome to Sergo, Bea Okafor/);
        await choosePassword(bea, "bea@example.com");
        assert.match(await alertText(bea), /must not be the email address/);
        await choosePassword(bea, "bea reads every page twice");
        await bea.waitForURL(`${url}/documents`);
        assert.equal(await bea.locator(".who").textContent(), "Bea Okafor");
        const used = await (await newPage()).goto(invitation);
        assert.equal(used?.status(), 404, "the invitation worked once");
      });

      await t.step("nobody else sees other people: /people is a missing page for Bea", async () => {
        assert.equal(await bea.locator('nav a:has-text("People")').count(), 0);
        const people = await bea.request.get(`${url}/people`);
        const missing = await bea.request.get(`${url}/no-such-page`);
        assert.equal(people.status(), 404);
        assert.equal(await people.text(), await missing.text(), "exactly as a path that does not exist");
        const post = await bea.request.post(`${url}/people`, {
          form: { action: "add", name: "X", email: "x@y.z" },
        });
        assert.equal(post.status(), 404);
      });

      await t.step("each sees only their own folders", async () => {
        await ava.goto(`${url}/documents`);
        await ava.fill('#new-folder input[name="name"]', "Ava's reports");
        await ava.click("#new-folder button");
        await ava.waitForURL(/\/documents\?folder=/);
        const avaFolder = ava.url();
        await bea.goto(`${url}/documents`);
        assert.doesNotMatch(await bea.locator("main").textContent() ?? "", /Ava's reports/);
        const theirs = await bea.goto(avaFolder);
        assert.equal(theirs?.status(), 404);
        await shots(bea, "03-bea-documents");
      });

      await t.step("a reset link replaces the password; the old one stops working", async () => {
        await ava.goto(`${url}/people`);
        await ava.locator('#people tr:has-text("Bea Okafor") button').click();
        const reset = (await ava.locator("#password-link-url").textContent())!;
        const page = await newPage();
        await page.goto(reset);
        assert.match(await page.locator("h1").textContent() ?? "", /A new password for Bea Okafor/);
        await choosePassword(page, "bea's brand new phrase");
        await page.waitForURL(`${url}/documents`);
        const fresh = await newPage();
        await fresh.goto(`${url}/sign-in`);
        await fresh.fill('input[name="email"]', "bea@example.com");
        await fresh.fill('input[name="password"]', "bea reads every page twice");
        await fresh.click('button:has-text("Sign in")');
        assert.equal(await alertText(fresh), "The email or password is wrong.");
        await fresh.fill('input[name="password"]', "bea's brand new phrase");
        await fresh.click('button:has-text("Sign in")');
        await fresh.waitForURL(`${url}/documents`);
        // The session Bea signed in with before the reset ended with it: she signs in again.
        await bea.goto(`${url}/documents`);
        await bea.waitForURL(/\/sign-in/);
        await bea.fill('input[name="email"]', "bea@example.com");
        await bea.fill('input[name="password"]', "bea's brand new phrase");
        await bea.click('button:has-text("Sign in")');
        await bea.waitForURL(`${url}/documents`);
      });

      await t.step(
        "a dropped folder: its tree is made, a duplicate and an .xlsx refused, each file reaches its end",
        async () => {
          const root = `${dir.path}/upload-me`;
          await Deno.mkdir(`${root}/Reports`, { recursive: true });
          await Deno.mkdir(`${root}/Notes`, { recursive: true });
          await Deno.copyFile(FORM, `${root}/Reports/form.pdf`);
          await Deno.copyFile(FORM, `${root}/Reports/form-copy.pdf`);
          await Deno.copyFile(
            `${CORPUS_DIR}/hostile/xml-bomb-xlsx-named.docx`,
            `${root}/Reports/budget.xlsx`,
          );
          await Deno.copyFile(
            `${CORPUS_DIR}/hostile/xml-bomb-xlsx-named.docx`,
            `${root}/Reports/summary.docx`,
          );
          await Deno.copyFile(SCAN, `${root}/Notes/scan.pdf`);
          await Deno.copyFile(README, `${root}/Notes/readme.md`);
          await ava.goto(`${url}/documents`);
          // The page explains its words: the processing presets and "Pages to view".
          assert.match(
            await ava.locator("#preset-help").textContent() ?? "",
            /Basic reads each page's own text by rules.*Standard also reads pages that are scanned/s,
          );
          await ava.setInputFiles("#upload-folder", root);
          const row = (name: string) => ava.locator(`.upload-item[data-name="upload-me/${name}"]`);
          const ended = async (name: string, status: string) => {
            await ava.locator(`.upload-item[data-name="upload-me/${name}"][data-status="${status}"]`).waitFor(
              { timeout: 120_000 },
            );
            return (await row(name).locator(".upload-state").textContent())?.trim() ?? "";
          };
          assert.match(
            await ended("Reports/budget.xlsx", "refused"),
            /"budget\.xlsx" cannot be read by Sergo: .*Excel workbook.*— nothing was uploaded\.$/,
          );
          assert.match(
            await ended("Reports/summary.docx", "refused"),
            /"summary\.docx" cannot be read by Sergo: .*Excel workbook/,
            "judged by its content, not its name",
          );
          assert.match(await ended("Notes/readme.md", "searchable"), /^Searchable — about \d+ pages?\.$/);
          assert.match(await ended("Notes/scan.pdf", "not_indexed"), /^Not indexed: .+\.$/);
          await ava.locator('.upload-item[data-status="duplicate"]').waitFor({ timeout: 60_000 });
          const twin = ava.locator('.upload-item[data-status="duplicate"]');
          assert.match(
            await twin.locator(".upload-state").textContent() ?? "",
            /is already in this folder as "form(-copy)?\.pdf" \(the same bytes\) — nothing was uploaded\.$/,
          );
          await shots(ava, "04-upload-folder");
          const twinName = (await twin.getAttribute("data-name"))!.replace("upload-me/", "");
          await twin.locator('button:has-text("Upload anyway")').click();
          assert.match(await ended(twinName, "searchable"), /^Searchable — 1 page\.$/);
          const folders = await (await ava.request.get(`${url}/api/folders`)).json();
          const paths = (folders.items ?? folders.folders ?? folders).map((f: { path: string }) => f.path)
            .sort();
          for (const path of ["upload-me", "upload-me/Notes", "upload-me/Reports"]) {
            assert.ok(paths.includes(path), `${path} in ${JSON.stringify(paths)}`);
          }
          // The sidebar's tree shows the new folders without a reload.
          await ava.locator('#folder-tree a:text-is("Reports")').waitFor({ timeout: 10_000 });
          assert.deepEqual(
            await ava.locator("#folder-tree a").evaluateAll((links) => links.map((a) => a.textContent)),
            ["Ava Bennett's documents", "Ava's reports", "upload-me", "Notes", "Reports"],
          );
          assert.match(
            await ava.locator('th abbr:has-text("Pages to view")').getAttribute("title") ?? "",
            /an agent is told to look at them with view_page/,
          );
          const docs = (await (await ava.request.get(`${url}/api/documents?limit=100`)).json()).items;
          assert.equal(
            docs.filter((d: { name: string }) => d.name === "budget.xlsx").length,
            0,
            "the .xlsx is not recorded",
          );
          const beas = (await (await bea.request.get(`${url}/api/documents?limit=100`)).json()).items;
          assert.equal(beas.length, 0, "Bea sees none of Ava's documents");
        },
      );

      await t.step(
        "console search finds a page and opens it, text beside picture; the original downloads",
        async () => {
          await ava.goto(`${url}/documents`);
          const csrf = await csrfOf(ava);
          const uploaded = await ava.request.post(`${url}/api/documents`, {
            headers: { "x-csrf-token": csrf },
            multipart: {
              file: {
                name: "form.pdf",
                mimeType: "application/pdf",
                buffer: Buffer.from(await Deno.readFile(FORM)),
              },
            },
          });
          assert.equal(uploaded.status(), 201, await uploaded.text());
          const formId = String((await uploaded.json()).documents[0].id);
          assert.equal((await settled(ava, url, formId)).status, "searchable");
          await ava.goto(`${url}/documents`);
          await ava.fill('#search input[name="q"]', "birthday gender form");
          await ava.click('#search button[type="submit"]');
          await ava.waitForURL(/\/search\?q=birthday/);
          const hit = ava.locator(`#results li[data-document-id="${formId}"] a.hit`).first();
          assert.equal((await hit.textContent())?.trim(), "Page 1");
          assert.match(
            await ava.locator(`#results li[data-document-id="${formId}"] .excerpt`).first().textContent() ??
              "",
            /Birthday/,
          );
          await shots(ava, "06-search");
          await hit.click();
          await ava.waitForURL(new RegExp(`/documents/${formId}\\?page=1#page-1$`));
          const picture = ava.locator("#page-1 details.picture[open] img");
          await picture.waitFor();
          await ava.waitForFunction(() =>
            (document.querySelector("#page-1 details.picture img") as HTMLImageElement)?.naturalWidth > 0
          );
          assert.match(await ava.locator("#page-1 .page-text").textContent() ?? "", /Example for a Form/);
          await shots(ava, "07-document-page");
          const [download] = await Promise.all([
            ava.waitForEvent("download"),
            ava.click("#download-original"),
          ]);
          assert.equal(download.suggestedFilename(), "form.pdf");
          const saved = `${dir.path}/downloaded.pdf`;
          await download.saveAs(saved);
          assert.deepEqual(
            await Deno.readFile(saved),
            await Deno.readFile(FORM),
            "the original, byte for byte",
          );
          const anonymous = await (await newPage()).request.get(`${url}/api/documents/${formId}/original`);
          assert.equal(anonymous.status(), 401, "not without signing in");
          // Bea finds none of it: not by search, not by its address, not its original.
          assert.equal((await bea.request.get(`${url}/api/documents/${formId}/original`)).status(), 404);
          assert.equal((await bea.goto(`${url}/documents/${formId}`))?.status(), 404);
          await bea.goto(`${url}/search?q=${encodeURIComponent("birthday gender form")}`);
          assert.equal(await bea.locator(`#results li[data-document-id="${formId}"]`).count(), 0);
          assert.doesNotMatch(await bea.locator("main").textContent() ?? "", /form\.pdf/);
        },
      );

      await t.step(
        "audit: sentences in the reference's words, errors marked, paging through 500 entries",
        async () => {
          await ava.goto(`${url}/documents`);
          const csrf = await csrfOf(ava);
          const uploaded = await ava.request.post(`${url}/api/documents`, {
            headers: { "x-csrf-token": csrf },
            multipart: {
              file: {
                name: "markitdown-readme.md",
                mimeType: "text/markdown",
                buffer: Buffer.from(await Deno.readFile(README)),
              },
            },
          });
          assert.equal(uploaded.status(), 201, await uploaded.text());
          const documentId = String((await uploaded.json()).documents[0].id);
          assert.equal((await settled(ava, url, documentId)).status, "searchable");
          const created = await ava.request.post(`${url}/api/keys`, {
            headers: { "x-csrf-token": csrf },
            data: {
              name: "readme-reader",
              description: "The MarkItDown readme",
              can_read: { folders: [], documents: [documentId] },
            },
          });
          assert.equal(created.status(), 201, await created.text());
          const createdKey = await created.json();
          const key = createdKey.value as string;
          let toolExcerpts: string[] = [];
          const client = await mcpClient(url, key, "auditor@example.com");
          try {
            const found = await client.callTool({
              name: "search",
              arguments: { query: "convert files to Markdown" },
            });
            assert.equal(found.isError, false);
            const groups = JSON.parse((found.content as Array<{ text: string }>)[0]!.text) as Array<
              { hits: Array<{ excerpt: string }> }
            >;
            const results = groups.reduce((sum, doc) => sum + doc.hits.length, 0);
            toolExcerpts = groups.flatMap((doc) => doc.hits.map((hit) => hit.excerpt));
            await client.callTool({ name: "read_document", arguments: { document_id: documentId, page: 1 } });
            const missing = await client.callTool({
              name: "read_document",
              arguments: { document_id: "nope1234" },
            });
            assert.equal(missing.isError, true);
            // Under the key's limit of 50 calls a second.
            for (let batch = 0; batch < 20; batch++) {
              const started = Date.now();
              for (let i = 0; i < 25; i++) await client.callTool({ name: "list_documents", arguments: {} });
              await new Promise((resolve) => setTimeout(resolve, Math.max(0, 550 - (Date.now() - started))));
            }
            await ava.goto(`${url}/audit?action=mcp+search`);
            const search = ava.locator('tr[data-action="mcp search"]').first();
            assert.equal(
              (await search.locator(".sentence").textContent())?.trim(),
              `mcp search — 'convert files to Markdown', ${results} result${results === 1 ? "" : "s"}`,
            );
            assert.match(await search.textContent() ?? "", /for end user auditor@example\.com/);
            await ava.goto(`${url}/audit?action=console+search`);
            assert.match(
              await ava.locator('tr[data-action="console search"] .sentence').first().textContent() ?? "",
              /^console search — 'birthday gender form', \d+ results?$/,
            );
            assert.match(
              await ava.locator('tr[data-action="console search"]').first().textContent() ?? "",
              /Ava Bennett/,
            );
            await ava.goto(`${url}/audit?action=mcp+text+read`);
            const reads = ava.locator('tr[data-action="mcp text read"]');
            assert.equal(await reads.count(), 2);
            assert.equal(
              await reads.nth(1).locator(".sentence").textContent(),
              "mcp text read — markitdown-readme.md, page 1",
            );
            assert.equal(await reads.nth(0).getAttribute("class"), "error", "the failed read is marked");
            assert.equal(await reads.nth(0).locator(".badge.bad").textContent(), "Error");
            assert.equal(
              await reads.nth(0).locator(".error-reason").textContent(),
              "Not found, or not yours to see — the two are deliberately indistinguishable",
              "the failed read says why, in the words the agent got",
            );
            await shots(ava, "04-audit-filtered");
            // One date format: UTC on the page, the reader's local time (here UTC+05:30) on hover.
            await ava.goto(`${url}/audit`);
            const times = await ava.locator("main time").evaluateAll((all) =>
              all.map((t) => ({
                text: t.textContent,
                iso: t.getAttribute("datetime")!,
                title: t.getAttribute("title"),
              }))
            );
            assert.ok(times.length >= 50, `${times.length} times on the audit page`);
            for (const time of times) {
              assert.match(time.text ?? "", /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
              const local = new Date(Date.parse(time.iso) + 330 * 60_000).toISOString();
              assert.equal(time.title, `${local.slice(0, 16).replace("T", " ")} your time (UTC+05:30)`);
            }
            assert.doesNotMatch(
              await ava.locator("main").textContent() ?? "",
              /\d{1,2}\/\d{1,2}\/\d{4}|\d:\d\d(:\d\d)? [AP]M/,
              "no other date format",
            );
            // Bea's audit holds nothing of Ava's things (only what the administrator did to Bea's account).
            await bea.goto(`${url}/audit`);
            assert.doesNotMatch(
              await bea.locator("main").textContent() ?? "",
              /form\.pdf|readme|upload-me|Ava.s reports|mcp /,
            );
          } finally {
            await client.close();
          }
          // The key's usage: last used, calls in 24 h and 30 days, end users seen.
          await ava.goto(`${url}/keys`);
          const card = ava.locator('li.key[data-key-name="readme-reader"]');
          assert.equal(await card.locator("[data-calls-day]").textContent(), "503");
          assert.equal(await card.locator("[data-calls-month]").textContent(), "503");
          assert.equal(await card.locator("[data-end-users]").textContent(), "auditor@example.com (503)");
          assert.match(
            await card.locator("[data-usage]").textContent() ?? "",
            /^Last used \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
          );
          assert.match(
            await ava.locator("main").textContent() ?? "",
            /Each agent key is its own MCP server/,
            "what an agent key is, explained",
          );
          // Console search as the key sees: the very excerpts the agent's search got; nothing the key cannot read.
          await ava.goto(`${url}/documents`);
          await ava.fill('#search input[name="q"]', "convert files to Markdown");
          await ava.selectOption('#search select[name="as"]', createdKey.id);
          await ava.click('#search button[type="submit"]');
          await ava.waitForURL(/\/search\?q=convert/);
          // Each hit: its excerpt as the agent gets it (whole under "The whole excerpt…" when the page cuts it).
          const shown = await ava.locator("#results .excerpt-box").evaluateAll((boxes) =>
            boxes.map((box) =>
              (box.querySelector(".whole-excerpt pre") ?? box.querySelector(".excerpt"))!.textContent
            )
          );
          assert.ok(shown.length > 0);
          assert.deepEqual(
            shown,
            toolExcerpts.slice(0, shown.length),
            "the same excerpts as the search tool's",
          );
          await ava.goto(`${url}/search?q=${encodeURIComponent("birthday gender form")}&as=${createdKey.id}`);
          assert.equal(await ava.locator("#results li").count(), 0);
          assert.doesNotMatch(await ava.locator("main").textContent() ?? "", /form\.pdf/);
          await ava.goto(`${url}/keys`);
          // A key that reads nothing cannot be saved.
          await ava.fill('#key-create input[name="name"]', "reads-nothing");
          await ava.click('#key-create button[type="submit"]');
          assert.match(await alertText(ava), /^Choose at least one folder or file for this key to read/);
          assert.equal(await ava.locator('li.key[data-key-name="reads-nothing"]').count(), 0);
          await shots(ava, "08-keys");
          // Paging: "Older entries" keeps the filters in the URL and walks all 500 listings.
          await ava.goto(`${url}/audit?action=mcp+listing&end_user=auditor%40example.com`);
          await shots(ava, "05-audit");
          const seen = new Set<string>();
          for (let pages = 0; pages < 20; pages++) {
            for (
              const position of await ava.locator("tr[data-position]").evaluateAll((rows) =>
                rows.map((row) => row.getAttribute("data-position")!)
              )
            ) seen.add(position);
            const older = ava.locator('a[rel="next"]');
            if (await older.count() === 0) break;
            const href = (await older.getAttribute("href"))!;
            await Promise.all([ava.waitForURL(`${url}${href}`), older.click()]);
            assert.match(ava.url(), /action=mcp\+listing/);
            assert.match(ava.url(), /end_user=auditor%40example.com/);
          }
          assert.equal(seen.size, 500, `every listing, once: saw ${seen.size}`);
          assert.equal(
            await ava.locator(".sentence").first().textContent(),
            "mcp listing — whole scope, 1 document",
          );
        },
      );

      await t.step(
        "export: the buttons say what they download; audit verify passes; no document text",
        async () => {
          await ava.goto(`${url}/audit`);
          const jsonl = ava.locator('.exports a:has-text("JSONL")');
          assert.equal((await jsonl.textContent())?.trim(), "Export JSONL (.jsonl file)");
          assert.equal(
            (await ava.locator('.exports a:has-text("CSV")').textContent())?.trim(),
            "Export CSV (.zip: CSV + manifest)",
          );
          const [download] = await Promise.all([ava.waitForEvent("download"), jsonl.click()]);
          const path = `${dir.path}/ava-audit.jsonl`;
          await download.saveAs(path);
          const publicKey = await runCli(["audit", "public-key", "--data", dir.path]);
          assert.equal(publicKey.code, 0, publicKey.stderr);
          await Deno.writeTextFile(`${dir.path}/install.pem`, publicKey.stdout);
          const verified = await runCli(["audit", "verify", path, "--public-key", `${dir.path}/install.pem`]);
          assert.equal(verified.code, 0, verified.stdout + verified.stderr);
          const text = await Deno.readTextFile(path);
          assert.ok(
            text.includes("markitdown-readme.md") && text.includes("mcp text read"),
            "the trail is there",
          );
          assert.ok(!text.includes(README_SENTENCE), "no sentence of the document is in the export");
          assert.ok(!text.includes("lightweight Python utility"), "nor part of one");
          const read = text.split("\n").filter(Boolean).map((line) => JSON.parse(line))
            .find((record) => record.audit?.action === "mcp text read" && record.audit.details.page === 1);
          assert.match(read.audit.details.sha256, /^[0-9a-f]{64}$/, "the read names the document's sha256");
        },
      );
    } finally {
      for (const context of contexts) await context.close();
      await browser.close();
    }
  },
});
