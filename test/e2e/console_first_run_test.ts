/**
 * A newcomer's first hour, in a real browser (Debian's Chromium driven by
 * playwright-core) against `main.ts serve` in a subprocess over an empty data
 * directory: the first visit, setup, the empty Documents page's three steps,
 * a scan uploaded with Basic and read with Standard where it was uploaded, an
 * agent key (its name checked against every rule at once), and an app
 * connected with the snippet the console shows, which finds the scan's words.
 * Then what the person sees next: the key's page (snippets with a placeholder),
 * search (the agent's excerpt, marked, counted), the documents table and the
 * audit. Screenshots at 1280×800 and 390×844 go to test/artifacts/first-run/.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, Page } from "playwright-core";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { loadPlaywright } from "./_playwright.ts";
import { needs } from "../helpers/dependencies.ts";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const ARTIFACTS = new URL("../artifacts/first-run/", import.meta.url);
const SCAN = `${CORPUS_DIR}/pdf/scanned-text-page-image-only.pdf`;
const NOTES = `${CORPUS_DIR}/text/markitdown-readme.md`;
/** Words of the scan's first page, which only a transcription finds. */
const SCAN_QUERY = "Docling document conversion to JSON and Markdown";
const VIEWPORTS = { wide: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** `main.ts serve` on a free port of 127.0.0.1 over `dir`, with its output up to the setup line. */
async function serve(dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, MAIN, "serve", "--data", dir, "--port", "0", "--host", "127.0.0.1"],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = setTimeout(() => child.kill("SIGTERM"), 60_000);
  try {
    while (!out.includes("/setup?token=") || !out.endsWith("\n")) {
      const { value, done } = await reader.read();
      if (done) {
        throw new Error(
          `serve ended before printing its setup address: ${out}${
            new TextDecoder().decode((await child.output()).stderr)
          }`,
        );
      }
      out += value;
    }
  } finally {
    clearTimeout(deadline);
  }
  return {
    url: /Sergo is serving \S+ at (http:\/\/\S+)/.exec(out)![1]!,
    setup: /(http:\/\/\S+\/setup\?token=[0-9A-Za-z]+)/.exec(out)![1]!,
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

function text(page: Page, selector: string): Promise<string> {
  return page.locator(selector).first().textContent().then((t) => t?.trim() ?? "");
}

Deno.test({
  name:
    "first run: setup, the three steps, a scan read with Standard from the upload, a key, an app connected",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const chromiumPath = await needs("chromium");
    await needs("tesseract");
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await using dir = await tempDir("sergo-first-run-");
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
    try {
      const context = await browser.newContext({ viewport: VIEWPORTS.wide });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      let keyValue = "";
      let keyId = "";

      await t.step("the first visit says how to begin, and offers no Go back", async () => {
        await page.goto(`${url}/`);
        assert.equal(await text(page, "h1"), "Sergo is not set up yet");
        assert.equal(await page.locator('main a:has-text("Go back")').count(), 0);
        await shots(page, "01-not-set-up");
      });

      await t.step("setup, then an empty Documents page with three steps", async () => {
        await page.goto(server.setup);
        await page.fill('input[name="name"]', "Ava Bennett");
        await page.fill('input[name="email"]', "ava@example.com");
        await page.fill('input[name="password"]', "ava's own quiet river");
        await page.fill('input[name="password2"]', "ava's own quiet river");
        await page.click('main button[type="submit"]');
        await page.waitForURL(`${url}/documents`);
        const steps = await page.locator("#first-steps ol.steps > li").allTextContents();
        assert.equal(steps.length, 3);
        assert.match(steps[0]!, /^Upload/);
        assert.match(steps[1]!, /^Make an agent key/);
        assert.match(steps[2]!, /^Connect an app/);
        assert.equal(await page.locator('#first-steps a[href="/keys"]').count(), 1);
        assert.match(
          await page.locator('#upload-preset option[value="standard"]').textContent() ?? "",
          /^Standard — reads scanned pages \(Tesseract, or a vision model when configured\)$/,
        );
        await shots(page, "02-empty-documents");
      });

      await t.step(
        "a scan uploaded with Basic is offered Standard right there, and becomes searchable",
        async () => {
          assert.equal(await page.locator("#upload-preset").inputValue(), "basic");
          await page.setInputFiles("#upload-files", [SCAN, NOTES]);
          const scan = page.locator('.upload-item[data-name="scanned-text-page-image-only.pdf"]');
          await scan.locator("button.process-standard").waitFor({ timeout: 120_000 });
          assert.equal(await scan.getAttribute("data-status"), "not_indexed");
          assert.match(
            await scan.locator(".upload-scan").textContent() ?? "",
            /looks like a scan: no page has a text layer/,
          );
          await page.locator('.upload-item[data-name="markitdown-readme.md"][data-status="searchable"]')
            .waitFor({
              timeout: 120_000,
            });
          assert.equal(
            await page.locator('.upload-item[data-name="markitdown-readme.md"] button.process-standard')
              .count(),
            0,
            "a text file is not offered Standard",
          );
          await shots(page, "03-scan-offered-standard");
          await scan.locator("button.process-standard").click();
          await page.locator(
            '.upload-item[data-name="scanned-text-page-image-only.pdf"][data-status="searchable"]',
          )
            .waitFor({ timeout: 240_000 });
          assert.match(await scan.locator(".upload-state").textContent() ?? "", /^Searchable — 4 pages\.$/);
          assert.equal(await scan.locator("button.process-standard").count(), 0);
          await page.reload();
          assert.equal(await page.locator("#first-steps").count(), 0, "the steps give way to the documents");
          await shots(page, "04-documents");
        },
      );

      await t.step(
        "the documents table: names on one line with their title, Pages to view explained",
        async () => {
          const link = page.locator('td.name a:has-text("scanned-text-page-image-only.pdf")');
          assert.equal(await link.getAttribute("title"), "scanned-text-page-image-only.pdf");
          const style = await link.evaluate((a) => {
            const s = getComputedStyle(a);
            return {
              whiteSpace: s.whiteSpace,
              overflow: s.textOverflow,
              height: a.getBoundingClientRect().height,
            };
          });
          assert.equal(style.whiteSpace, "nowrap");
          assert.equal(style.overflow, "ellipsis");
          assert.ok(style.height < 30, `one line high, not ${style.height}px`);
          assert.match(
            await text(page, "#to-view-help"),
            /^Pages to view: pages whose text may miss a figure/,
          );
          // Every row is in the root: the folder is not repeated on each row.
          assert.equal(await page.locator("tr.folder-row").count(), 0);
          assert.doesNotMatch(await text(page, "td.name .sub"), /Ava Bennett's documents/);
          // The whole row fits: the Actions menu is not cut off at the table's edge.
          const fits = await page.locator(".table-wrap").evaluate((wrap) => {
            const edge = wrap.getBoundingClientRect().right;
            return [...wrap.querySelectorAll("tr[data-document-id] details.menu summary")].every((s) =>
              s.getBoundingClientRect().right <= edge + 1
            );
          });
          assert.ok(fits, "every row's Actions menu is inside the table at 1280 px");
          const order = await page.locator("tbody tr[data-document-id] td.name a").allTextContents();
          assert.deepEqual(order, ["markitdown-readme.md", "scanned-text-page-image-only.pdf"]);
        },
      );

      await t.step(
        "a key: a bad name hears every rule at once; the new key replaces the empty list",
        async () => {
          await page.goto(`${url}/keys`);
          assert.equal(await text(page, "#no-keys"), "No agent keys yet.");
          await page.fill('#key-create input[name="name"]', "Research Papers");
          assert.equal(
            await text(page, "#new-name-check"),
            '“Research Papers” breaks 2 rules: it must start with a lowercase letter a-z; it may use only a-z, 0-9 and - (not "R", " ", "P").',
          );
          await shots(page, "05-key-name-rules");
          await page.fill('#key-create input[name="name"]', "scans");
          await page.fill('#key-create textarea[name="description"]', "Scanned papers.");
          for (const box of await page.locator('#key-create input[name="documents"]').all()) {
            await box.check();
          }
          await page.click('#key-create button[type="submit"]');
          await page.locator("#secret:not([hidden])").waitFor();
          keyValue = await text(page, '#secret [data-slot="value"]');
          assert.match(keyValue, /^sgk_/);
          assert.equal(await page.locator("#no-keys").count(), 0, "no more “No agent keys yet.”");
          const listed = page.locator('li.key[data-key-name="scans"] a').first();
          keyId = (await listed.getAttribute("href"))!.replace("/keys/", "");
          // This server is on loopback http: the cloud apps are told so beside their snippets.
          for (const id of ["connector", "chatgpt", "copilot-studio"]) {
            assert.match(
              await text(page, `#secret [data-warning="${id}"]`),
              /on this machine only.*--cert.*SERGO_PUBLIC_URL.*tunnel/s,
            );
          }
          assert.equal(await page.locator('#secret [data-warning="json"]').count(), 0);
          // seri and Codex keep the key out of their files.
          for (const id of ["seri", "codex"]) {
            assert.ok(!(await text(page, `#secret pre[data-slot="${id}"]`)).includes(keyValue), id);
            assert.equal(
              await text(page, `#secret pre[data-slot="${id}-secret"]`),
              `export SERGO_KEY=${keyValue}`,
            );
          }
          assert.match(
            await text(page, '#secret pre[data-slot="python"]'),
            /httpx2\.Timeout\(30\.0, read=300\.0\)/,
          );
          await shots(page, "06-key-made");
          await page.click('#secret details[data-snippet="connector"] > summary');
          assert.ok(await page.locator('#secret [data-warning="connector"]').isVisible());
          await shots(page, "06b-connector-warning");
        },
      );

      await t.step(
        "an app connects with the snippet the console shows, and finds the scan's words",
        async () => {
          const config = JSON.parse(await text(page, '#secret pre[data-slot="json"]'));
          const server = config.mcpServers.scans;
          const client = new Client({ name: "first-run", version: "1.0.0" });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(server.url), {
              requestInit: { headers: server.headers },
            }),
          );
          try {
            const found = await client.callTool({ name: "search", arguments: { query: SCAN_QUERY } });
            const answer = (found.content as Array<{ text: string }>)[0]!.text;
            assert.match(answer, /scanned-text-page-image-only\.pdf/);
            assert.match(answer, /Docling/);
          } finally {
            await client.close();
          }
          // The stdio snippet names absolute paths and the data directory.
          const stdio = JSON.parse(await text(page, '#secret pre[data-slot="stdio"]')).mcpServers.scans;
          assert.ok(stdio.command.startsWith("/"));
          assert.equal(stdio.args[stdio.args.indexOf("--data") + 1], dir.path);
        },
      );

      await t.step("the key's page shows the snippets again, with a placeholder for the key", async () => {
        await page.goto(`${url}/keys/${keyId}`);
        const connect = page.locator("#connect");
        assert.equal(await text(page, "#connect h2"), "Connect an app");
        const snippets = await connect.locator("pre").allTextContents();
        assert.ok(snippets.length >= 14, `${snippets.length} snippets`);
        assert.ok(snippets.some((s) => s.includes("Bearer <agent key>")));
        assert.ok(snippets.every((s) => !s.includes(keyValue)), "the key's value is not on its page");
        await shots(page, "07-key-page");
      });

      await t.step("search shows the agent's excerpt with the words marked, and a count", async () => {
        await page.goto(`${url}/search?q=${encodeURIComponent(SCAN_QUERY)}`);
        assert.match(
          await text(page, "#result-count"),
          /^\d+ excerpts? in 2 documents|^\d+ excerpts? in 1 document/,
        );
        const marks = await page.locator(".excerpt mark").allTextContents();
        assert.ok(marks.some((m) => /^docling$/i.test(m)), marks.join(", "));
        const heights = await page.locator(".excerpt").evaluateAll((all) =>
          all.map((p) => p.getBoundingClientRect().height)
        );
        assert.ok(Math.max(...heights) < 260, `excerpts at most a few lines high: ${heights.join(", ")}`);
        await shots(page, "08-search");
      });

      await t.step("the audit shows people's and agents' actions, system work behind a filter", async () => {
        await page.goto(`${url}/audit`);
        const actions = await page.locator("tr[data-action]").evaluateAll((rows) =>
          rows.map((r) => r.getAttribute("data-action"))
        );
        assert.ok(actions.includes("mcp search"), actions.join(", "));
        assert.ok(!actions.some((a) => /lease renewed|processed|pdf copy/.test(a ?? "")), actions.join(", "));
        assert.match(await text(page, ".exports .hint"), /sergo audit verify FILE --public-key KEY\.pem/);
        const created = page.locator('tr[data-action="key created"] dl.details').first();
        assert.doesNotMatch(await created.textContent() ?? "", /[{}"]/, "readable, not JSON");
        await shots(page, "09-audit");
        await page.check('input[name="system"]');
        await page.click('#audit-filters button[type="submit"]');
        await page.waitForURL(/system=1/);
        const all = await page.locator("tr[data-action]").count();
        assert.ok(all > actions.length, `${all} entries with system work, ${actions.length} without`);
      });

      await t.step("a text file's page does not offer pictures it says it cannot have", async () => {
        await page.goto(`${url}/documents`);
        await page.click('td.name a:has-text("markitdown-readme.md")');
        const hint = await text(page, "#pages-title + .hint");
        assert.doesNotMatch(hint, /Text files have no page pictures/);
        assert.match(hint, /Make a PDF copy/);
        await shots(page, "10-text-file");
      });
      await context.close();
    } finally {
      await browser.close();
    }
  },
});
