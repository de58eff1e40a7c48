/**
 * The console's API page and its looks, in Debian's Chromium (playwright-core)
 * against the real `serve`: Swagger UI draws the OpenAPI document from files
 * Sergo serves itself, under the CSP the README states, with no request
 * leaving this server and no console error; and in both colour schemes the
 * body text is at least 4.5:1 against its background and the focus ring of
 * every control is at least 3:1 against the background around it. Measured
 * from computed styles. Screenshots go to test/artifacts/look/.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { loadPlaywright } from "./_playwright.ts";
import { type ConsoleServer, startConsoleServer } from "./_console_server.ts";
import { needs } from "../helpers/dependencies.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const ARTIFACTS = new URL("../artifacts/look/", import.meta.url);
/** A 28-slide deck with pictures on many slides: more pages to view than a row lists. */
const PICTURES_DECK = `${CORPUS_DIR}/pptx/how-we-refactor-groups-pictures.pptx`;
const NOTES = `${CORPUS_DIR}/text/markitdown-readme.md`;

/**
 * The CSP of every console page, the API page included, word for word as the README gives it: Swagger UI
 * needs nothing more (no inline script or style, no eval, nothing from elsewhere).
 */
const CONSOLE_CSP = "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/** WCAG's contrast ratio of two CSS colours as the browser computed them (rgb/rgba). */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = color.match(/[\d.]+/g)!.slice(0, 3).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** The focused element's ring and the background around it, from computed styles. */
function focusRing(page: Page) {
  return page.evaluate(async () => {
    let el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return null;
    // Swagger UI's controls ease into their focus looks: measure once the (finite) transitions are over.
    await Promise.all(
      document.getAnimations()
        .filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity)
        .map((animation) => animation.finished.catch(() => {})),
    );
    // A control drawn by its label (a file input): the ring is the label's.
    const box = el.getBoundingClientRect();
    if (box.width * box.height < 4 || getComputedStyle(el).opacity === "0") {
      el = el.closest<HTMLElement>(":focus-within:not(:focus)") ?? el;
    }
    const style = getComputedStyle(el);
    // The background the ring is drawn on: the parents' backgrounds, translucent ones laid over the
    // first opaque one below them (the page's, at the end).
    const layers: number[][] = [];
    for (let node = el.parentElement; node; node = node.parentElement) {
      const [r, g, b, a = 1] = (getComputedStyle(node).backgroundColor.match(/[\d.]+/g) ?? []).map(Number);
      if (a === 0 || r === undefined) continue;
      layers.push([r, g!, b!, a]);
      if (a === 1) break;
    }
    let [r, g, b] = [255, 255, 255];
    for (const [lr, lg, lb, la] of layers.reverse()) {
      [r, g, b] = [r + (lr! - r) * la!, g + (lg! - g) * la!, b + (lb! - b) * la!];
    }
    const background = `rgb(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)})`;
    return {
      what: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${
        el.className && typeof el.className === "string" ? `.${el.className.split(" ")[0]}` : ""
      } "${(el.textContent ?? "").trim().slice(0, 30)}" (focused: ${
        document.activeElement!.outerHTML.slice(0, 120)
      })`,
      outlineStyle: style.outlineStyle,
      outlineWidth: parseFloat(style.outlineWidth),
      outlineColor: style.outlineColor,
      background,
    };
  });
}

async function signIn(page: Page, server: ConsoleServer): Promise<void> {
  await page.goto(`${server.url}/sign-in`);
  await page.fill('input[name="email"]', server.email);
  await page.fill('input[name="password"]', server.password);
  await page.click('button:has-text("Sign in")');
  await page.waitForURL(`${server.url}/documents`);
}

Deno.test({
  name: "the API page draws every route with Swagger UI from this server; both colour schemes keep contrast",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const chromiumPath = await needs("chromium");
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    await using server = await startConsoleServer();
    const { url } = server;
    const { chromium } = await loadPlaywright();
    const browser = await chromium.launch({
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
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const outside: string[] = [];
      const errors: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(`${url}/`) && !request.url().startsWith("data:")) {
          outside.push(request.url());
        }
      });
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") errors.push(message.text());
      });
      page.on("pageerror", (error) => errors.push(error.message));
      await signIn(page, server);

      await t.step(
        "the API page: linked from the navigation, every route drawn, nothing from elsewhere",
        async () => {
          await page.click('nav a:has-text("API")');
          await page.waitForURL(`${url}/api-docs`);
          await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
          const drawn = await page.locator(".opblock").evaluateAll((blocks) =>
            blocks.map((block) => {
              const method = block.querySelector(".opblock-summary-method")?.textContent?.trim() ?? "";
              const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "";
              return `${method} ${path}`;
            })
          );
          const document = await (await page.request.get(`${url}/api/openapi.json`)).json();
          const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
            .flatMap(([path, operations]) =>
              Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`)
            );
          assert.deepEqual(
            [...drawn].sort(),
            [...documented].sort(),
            "the page draws every documented route",
          );
          for (
            const route of ["GET /api/search", "GET /api/audit/export", "GET /api/documents/{id}/original"]
          ) {
            assert.ok(drawn.includes(route), `${route} is on the page`);
          }
          // The search route with its parameters and answer shape.
          const search = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/api/search"])');
          await search.locator(".opblock-summary").click();
          await search.locator(".parameters").waitFor();
          const parameters = await search.locator(".parameters .parameter__name").allTextContents();
          assert.deepEqual(parameters.map((p) => p.replace(/[\s*]+$/, "")), ["q", "as", "offset"]);
          const answer = await search.locator(".responses-wrapper").textContent() ?? "";
          for (const field of ["as_key", "documents", "next_offset", "excerpt"]) {
            assert.ok(answer.includes(field), `the answer shape names ${field}`);
          }
          const exportRoute = page.locator(
            '.opblock-get:has(.opblock-summary-path[data-path="/api/audit/export"])',
          );
          await exportRoute.locator(".opblock-summary").click();
          assert.match(await exportRoute.textContent() ?? "", /never document text/);
          await page.screenshot({ path: new URL("api-page.png", ARTIFACTS).pathname, fullPage: false });
          // "Try it out" runs as the signed-in person; a change carries the CSRF token the page adds.
          const tryOut = async (method: string, path: string) => {
            const block = page.locator(`.opblock-${method}:has(.opblock-summary-path[data-path="${path}"])`);
            await block.locator(".opblock-summary").click();
            await block.locator("button.try-out__btn").click();
            await block.locator("button.execute").click();
            const status = block.locator(".live-responses-table tr.response .response-col_status").first();
            await status.waitFor({ timeout: 10_000 });
            return (await status.textContent())?.trim();
          };
          assert.equal(await tryOut("get", "/api/me"), "200");
          assert.equal(await tryOut("post", "/api/personal-keys"), "201", "a change with the CSRF token");
          assert.deepEqual(outside, [], "no request leaves this server");
          assert.deepEqual(errors, [], "no console error or warning");
        },
      );

      await t.step(
        "the API page's CSP is the console's own, as the README states; only two vendor files are served",
        async () => {
          const api = await page.request.get(`${url}/api-docs`);
          assert.equal(api.headers()["content-security-policy"], CONSOLE_CSP);
          const documents = await page.request.get(`${url}/documents`);
          assert.equal(documents.headers()["content-security-policy"], CONSOLE_CSP);
          const bundle = await page.request.get(`${url}/console/vendor/swagger-ui-bundle.js`);
          assert.equal(bundle.status(), 200);
          assert.match(bundle.headers()["content-type"]!, /^text\/javascript/);
          assert.equal((await page.request.get(`${url}/console/vendor/package.json`)).status(), 404);
          assert.equal((await page.request.get(`${url}/console/vendor/..%2Fpackage.json`)).status(), 404);
        },
      );

      await t.step(
        'a row updated live draws its pages to view as the server does, "+N more" included',
        async () => {
          await page.goto(`${url}/documents`);
          await page.setInputFiles("#upload-files", PICTURES_DECK);
          const row = page.locator('tr:has(a:has-text("how-we-refactor-groups-pictures.pptx"))');
          await row.waitFor({ timeout: 30_000 });
          assert.equal(
            await row.getAttribute("data-status"),
            "processing",
            "the row is there before the end",
          );
          await row.locator('[data-cell="status"] [data-status="searchable"]').waitFor({ timeout: 120_000 });
          const cell = () =>
            row.locator('[data-cell="to-view"]').evaluate((td) => ({
              text: td.textContent,
              links: [...td.querySelectorAll("a")].map((a) => a.getAttribute("href")),
            }));
          const live = await cell();
          assert.match(live.text ?? "", /\+\d+ more$/, `the live row has its chip: ${live.text}`);
          await page.reload();
          assert.deepEqual(await cell(), live, "after a reload the server draws the same");
        },
      );

      await t.step(
        "a dropped folder: its files go into a matching folder tree, which the sidebar shows",
        async () => {
          await page.goto(`${url}/documents`);
          const notes = [...await Deno.readFile(NOTES)];
          // A drop of a folder as Chromium hands it over: directory entries (FileSystemDirectoryEntry cannot be
          // made by a script, so these plain objects answer the same calls), holding real files.
          await page.evaluate((bytes) => {
            const file = new File([new Uint8Array(bytes)], "readme.md", { type: "text/markdown" });
            const fileEntry = (f: File) => ({
              isFile: true,
              isDirectory: false,
              name: f.name,
              file: (ok: (f: File) => void) => ok(f),
            });
            const dirEntry = (name: string, children: unknown[]) => ({
              isFile: false,
              isDirectory: true,
              name,
              createReader: () => {
                let given = false;
                return {
                  readEntries: (ok: (e: unknown[]) => void) => ok(given ? [] : (given = true, children)),
                };
              },
            });
            const root = dirEntry("Dropped", [dirEntry("Inside", [fileEntry(file)])]);
            const drop = new Event("drop", { bubbles: true, cancelable: true });
            Object.defineProperty(drop, "dataTransfer", {
              value: { items: [{ webkitGetAsEntry: () => root }], files: [] },
            });
            document.getElementById("upload")!.dispatchEvent(drop);
          }, notes);
          const item = page.locator(
            '.upload-item[data-name="Dropped/Inside/readme.md"][data-status="searchable"]',
          );
          await item.waitFor({ timeout: 60_000 });
          await page.locator('#folder-tree a:text-is("Inside")').waitFor({ timeout: 10_000 });
          const folders = (await (await page.request.get(`${url}/api/folders`)).json()).folders
            .map((f: { path: string }) => f.path).sort();
          assert.deepEqual(folders, ["Dropped", "Dropped/Inside"]);
        },
      );

      for (const scheme of ["light", "dark"] as const) {
        await t.step(
          `${scheme} scheme: body text ≥ 4.5:1, every focus ring ≥ 3:1 against its background`,
          async () => {
            await page.emulateMedia({ colorScheme: scheme });
            for (const path of ["/documents", "/keys", "/audit", "/api-docs"]) {
              await page.goto(`${url}${path}`);
              const body = await page.evaluate(() => {
                const style = getComputedStyle(document.body);
                return { color: style.color, background: style.backgroundColor };
              });
              if (scheme === "dark") {
                assert.ok(
                  contrast(body.background, "rgb(0, 0, 0)") < 2,
                  `${path}: a dark background, ${body.background}`,
                );
              }
              const text = contrast(body.color, body.background);
              assert.ok(
                text >= 4.5,
                `${path}: body text ${body.color} on ${body.background} is ${text.toFixed(2)}:1`,
              );
              // Tab through the page's first controls: each shows a ring that stands out from its background.
              await page.locator("body").focus();
              let rings = 0;
              for (let i = 0; i < 25; i++) {
                await page.keyboard.press("Tab");
                const ring = await focusRing(page);
                if (!ring) continue;
                rings++;
                assert.notEqual(ring.outlineStyle, "none", `${path}: ${ring.what} shows a focus ring`);
                assert.ok(ring.outlineWidth >= 2, `${path}: ${ring.what}'s ring is ${ring.outlineWidth}px`);
                const ratio = contrast(ring.outlineColor, ring.background);
                assert.ok(
                  ratio >= 3,
                  `${path}: ${ring.what}'s ring ${ring.outlineColor} on ${ring.background} is ${
                    ratio.toFixed(2)
                  }:1`,
                );
              }
              assert.ok(rings >= 10, `${path}: ${rings} controls took the focus`);
            }
            for (const path of ["/documents", "/api-docs"]) {
              await page.goto(`${url}${path}`);
              await page.waitForTimeout(path === "/api-docs" ? 1500 : 0);
              await page.screenshot({ path: new URL(`${path.slice(1)}-${scheme}.png`, ARTIFACTS).pathname });
            }
          },
        );
      }
      await context.close();
    } finally {
      await browser.close();
    }
  },
});
