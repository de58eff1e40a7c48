/**
 * The OpenAPI document names every route the server answers, and answers
 * every route it names. The routes are found by walking the real server
 * (`serve` on a free port, signed in): every console page it links to (links,
 * forms, the forms' API calls), the URLs its scripts call, the OAuth
 * metadata's endpoints and the 401's resource metadata, the paths the README
 * gives, and each path literal of the dispatching code that the server turns
 * out to answer. A route found that way and missing from the document fails
 * the test; so does a documented route the server does not answer.
 */
import assert from "node:assert/strict";
import { createAgentKey, createPersonalKey, issueLoginToken } from "../../src/domain/keys.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { makeAdministrator } from "../../src/domain/people.ts";
import { getPersonByEmail } from "../../projections/catalogue.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { startConsoleServer } from "../e2e/_console_server.ts";

const ROOT = new URL("../../", import.meta.url);
/** The code that decides which paths the server answers. */
const DISPATCHERS = [
  "src/http/server.ts",
  "src/api/mod.ts",
  "src/api/account.ts",
  "src/api/folders.ts",
  "src/api/documents.ts",
  "src/api/search.ts",
  "src/api/keys.ts",
  "src/audit/routes.ts",
  "src/console/console.ts",
  "src/auth/oauth/mod.ts",
  "src/auth/oauth/metadata.ts",
  "src/mcp/transports/sse.ts",
];
/** A value no id has: a path with it reaches its route, which then finds nothing. */
const NO_ID = "zz404zz";

/** Path literals in a text: quoted strings and template strings that start with "/". */
function pathLiterals(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/["'`](\/(?![\/*])(?:[A-Za-z0-9._~\-\/:]|\$\{[^}]*\})*)/g)) {
    found.add(match[1]!.replace(/\$\{[^}]*\}/g, NO_ID).replace(/:(\w+)/g, NO_ID));
  }
  return [...found];
}

Deno.test({
  name: "the OpenAPI document holds every route the running server answers, and each route it holds answers",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using server = await startConsoleServer();
    const { url, running } = server;
    const app = running.app;
    const person = getPersonByEmail(app.db, server.email)!;
    const actor = `person-${person.person_id}`;
    await makeAdministrator(app, person.person_id); // so the walk reaches /people too
    const folder = await createFolder(
      app,
      { personId: person.person_id, parentId: null, name: "Reports" },
      actor,
    );
    await createAgentKey(app, {
      personId: person.person_id,
      name: "walker",
      description: "",
      canRead: { folders: [folder.folder_id], documents: [] },
    }, actor);
    const personal = (await createPersonalKey(app, { personId: person.person_id }, actor)).value;
    const login = (await issueLoginToken(app, { personId: person.person_id }, actor)).value;
    const cookie = `sergo_session=${login}`;
    const bearer = { authorization: `Bearer ${personal}` };
    const get = (path: string, headers: HeadersInit = { cookie }) =>
      fetch(`${url}${path}`, { headers, redirect: "manual" });
    const uploaded = await fetch(`${url}/api/documents?name=readme.md&folder=Reports`, {
      method: "POST",
      headers: bearer,
      body: await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`),
    });
    assert.equal(uploaded.status, 201, await uploaded.text());

    const document = await (await get("/api/openapi.json", {})).json();
    const documented: Array<{ method: string; path: string; pattern: URLPattern }> = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>)) {
      for (const method of Object.keys(operations)) {
        documented.push({
          method: method.toUpperCase(),
          path,
          pattern: new URLPattern({ pathname: path.replace(/\{(\w+)\}/g, ":$1") }),
        });
      }
    }
    const isDocumented = (method: string | null, path: string) =>
      documented.some((r) => (method === null || r.method === method) && r.pattern.test({ pathname: path }));

    // The answer of a path nothing answers, and whether a request got something else.
    const nothing = await (await get("/no-such-route-anywhere")).text();
    const answered = async (method: string, path: string): Promise<boolean> => {
      const headers: Record<string, string> = /^\/api(\/|$)/.test(path) ? bearer : { cookie };
      const response = await fetch(`${url}${path}`, {
        method,
        headers: method === "GET" ? headers : { ...headers, "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: "{}" }),
        redirect: "manual",
      });
      const body = await response.text();
      return response.status !== 405 && !(response.status === 404 && body === nothing);
    };

    // 1. Walk the console as a signed-in person: pages, their links, forms, API forms and scripts.
    const found = new Map<string, string>(); // "METHOD path" (or "* path") → where it was found
    const note = (method: string | null, raw: string, where: string) => {
      const target = new URL(raw, url);
      if (target.origin !== url) return;
      found.set(`${method ?? "*"} ${decodeURIComponent(target.pathname)}`, where);
    };
    const queue = ["/"];
    const seen = new Set<string>();
    const scripts = new Set<string>();
    while (queue.length > 0 && seen.size < 60) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const response = await get(path);
      note("GET", path, "the console");
      const location = response.headers.get("location");
      if (location) {
        await response.body?.cancel();
        queue.push(new URL(location, url).pathname);
        continue;
      }
      if (!response.headers.get("content-type")?.startsWith("text/html")) {
        await response.body?.cancel();
        continue;
      }
      const html = await response.text();
      for (const [, attribute, value] of html.matchAll(/\b(href|src|action|data-api)="([^"]+)"/g)) {
        const target = new URL(value!.replaceAll("&amp;", "&"), `${url}${path}`);
        if (target.origin !== url) continue;
        // The console's own scripts (a viewer's bundle from npm calls no route of its own).
        if (attribute === "src" && target.pathname.startsWith("/console/assets/")) {
          scripts.add(target.pathname);
        }
        if (attribute === "href" || attribute === "src") {
          note("GET", target.pathname, `a link on ${path}`);
          const isPage = !/^\/(api|console)\//.test(target.pathname) && !target.pathname.endsWith(".json");
          if (isPage) queue.push(target.pathname);
        }
      }
      for (const [form] of html.matchAll(/<form\b[^>]*>/g)) {
        const action = /\baction="([^"]*)"/.exec(form)?.[1];
        const method = (/\bmethod="([^"]*)"/.exec(form)?.[1] ?? "get").toUpperCase();
        const api = /\bdata-api="([^"]*)"/.exec(form)?.[1];
        const apiMethod = /\bdata-method="([^"]*)"/.exec(form)?.[1];
        if (action) note(method, action, `a form on ${path}`);
        if (action && method === "GET") queue.push(new URL(action, `${url}${path}`).pathname);
        if (api) note(apiMethod ?? null, api, `an API form on ${path}`);
      }
    }
    assert.ok(seen.size >= 10, `walked ${seen.size} pages: ${[...seen].join(", ")}`);
    for (const script of scripts) {
      const text = await (await get(script)).text();
      for (const [, method, path] of text.matchAll(/api\("(GET|POST|PATCH|DELETE)", `([^`]+)`/g)) {
        note(method!, path!.replace(/\$\{[^}]*\}/g, NO_ID), script);
      }
      for (const path of pathLiterals(text)) note(null, path, script);
    }

    // 2. What the server itself points to: OAuth metadata and the MCP 401's resource metadata.
    const metadata = await (await get("/.well-known/oauth-authorization-server", {})).json();
    for (
      const field of [
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
        "revocation_endpoint",
      ]
    ) {
      note(null, metadata[field], "the OAuth metadata");
    }
    const unauthorized = await fetch(`${url}/mcp`, { method: "POST", body: "{}" });
    await unauthorized.body?.cancel();
    const resource = /resource_metadata="([^"]+)"/.exec(unauthorized.headers.get("www-authenticate") ?? "");
    assert.ok(resource, "the 401 names its resource metadata");
    note("GET", resource[1]!, "the MCP 401");
    note("POST", "/mcp", "the MCP endpoint");

    // 3. Paths the README and the docs give, and path literals of the dispatching code, that the server answers.
    const candidates = new Map<string, string>();
    const pages = [
      "README.md",
      ...[...Deno.readDirSync(new URL("docs/", ROOT))].filter((e) => e.name.endsWith(".md"))
        .map((e) => `docs/${e.name}`),
    ];
    for (const page of pages) {
      const text = await Deno.readTextFile(new URL(page, ROOT));
      for (const [, path] of text.matchAll(/`(?:GET |POST |PATCH |DELETE )?(\/[A-Za-z0-9._~\-\/{}:]+)/g)) {
        candidates.set(path!.replace(/\{\w+\}|:\w+/g, NO_ID), page);
      }
    }
    for (const file of DISPATCHERS) {
      for (const path of pathLiterals(await Deno.readTextFile(new URL(file, ROOT)))) {
        candidates.set(path, file);
      }
    }
    let probed = 0;
    for (const [path, where] of candidates) {
      if (path.endsWith("/") && path !== "/") continue; // a prefix, such as /console/assets/
      for (const method of ["GET", "POST"]) {
        if (path === "/sign-out" || path === "/api/session") continue; // would end the walk's session
        probed++;
        if (await answered(method, path)) found.set(`${method} ${path}`, where);
      }
    }
    assert.ok(probed > 50, `probed ${probed} candidate routes`);

    const missing = [...found].filter(([route]) => {
      const [method, path] = route.split(" ") as [string, string];
      return !isDocumented(method === "*" ? null : method, path);
    }).map(([route, where]) => `${route} (found in ${where})`);
    assert.deepEqual(missing, [], "every route the server answers is in the OpenAPI document");
    for (const route of ["GET /api/search", "GET /api/audit/export", "GET /api/documents/{id}/original"]) {
      assert.ok(documented.some((r) => `${r.method} ${r.path}` === route), `${route} is documented`);
    }

    // 4. And the other way: every documented route answers (an id of nothing reaches its route's "not found").
    const silent: string[] = [];
    for (const r of documented) {
      if (r.path === "/api/session" || r.path === "/sign-out") continue; // checked by the console tests
      const path = r.path.replace(/\{name\}/, r.path.includes("vendor") ? "swagger-ui.css" : "console.css")
        .replace(/\{page\}/, "1").replace(/\{\w+\}/g, NO_ID);
      if (!await answered(r.method, path)) silent.push(`${r.method} ${r.path}`);
    }
    assert.deepEqual(silent, [], "every documented route is answered");
  },
});
