/**
 * PostgreSQL goes away under a running `serve`: MCP calls are answered 503
 * (never unaudited) while it is down, and the same server answers again, each
 * call audited, once it is back, without a restart. So are the console's
 * sign-in (its shared throttle cannot count the attempt), a console change, an
 * API change and an OAuth client registration: 503 in one sentence (a page for
 * the console), never the generic 500, and the same sign-in works once
 * PostgreSQL is back.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { createSergoDatabase, startThrowawayCluster } from "../helpers/postgres.ts";
import { runCli, tempDir } from "../helpers/temp.ts";
import { DATABASE_UNREACHABLE, LIMIT_UNCHECKED } from "../../src/http/unavailable.ts";

const PASSWORD = "correct horse battery staple";

/** The console's sign-in form posted with the password; the page's CSRF cookie first. */
async function signIn(url: string): Promise<{ status: number; type: string; text: string; cookie: string }> {
  const page = await fetch(`${url}/sign-in`);
  await page.body?.cancel();
  const csrf = /sergo_csrf=([A-Za-z0-9]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(csrf, "the sign-in page sets the CSRF cookie");
  const response = await fetch(`${url}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `sergo_csrf=${csrf}` },
    body: new URLSearchParams({ email: "ava@example.com", password: PASSWORD, csrf }).toString(),
  });
  const session = /sergo_session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
  return {
    status: response.status,
    type: response.headers.get("content-type") ?? "",
    text: await response.text(),
    cookie: session ? `sergo_session=${session}; sergo_csrf=${csrf}` : "",
  };
}

/** `POST /oauth/register` of one loopback client. */
async function register(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Outage app", redirect_uris: ["http://127.0.0.1:33418/callback"] }),
  });
  return { status: response.status, body: await response.json() };
}

async function listDocuments(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_documents", arguments: {} },
    }),
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("PostgreSQL stopped under serve: calls, sign-ins and changes get 503 in one sentence, none answered unaudited, and serve recovers by itself", async () => {
  await using cluster = await startThrowawayCluster();
  const url = await createSergoDatabase(cluster);
  await using dir = await tempDir();
  const env = { SERGO_DATABASE_URL: url };
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, "--data", dir.path], { env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim().split("\n").pop()!;
  };
  await cli("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
  await cli("folder", "add", "--person", "ava@example.com", "Reports");
  const key = await cli(
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "reports",
    "--description",
    "Reports",
    "--read",
    "Reports",
  );
  const set = await runCli(["person", "password", "--data", dir.path, "--email", "ava@example.com"], {
    env,
    stdin: `${PASSWORD}\n`,
  });
  assert.equal(set.code, 0, set.stderr);
  const server = await startServer(
    loadConfig(
      ["--data", dir.path, "--port", "0"],
      (name) => name === "SERGO_DATABASE_URL" ? url : undefined,
    ),
    { quiet: true },
  );
  let answered = 0;
  try {
    assert.equal(await listDocuments(server.url, key), 200);
    answered++;
    const before = await signIn(server.url);
    assert.equal(before.status, 303, before.text);
    assert.ok(before.cookie, "a session cookie");
    await cluster.stop();
    const whileDown = [];
    for (let i = 0; i < 5; i++) whileDown.push(await listDocuments(server.url, key));
    assert.deepEqual(whileDown, [503, 503, 503, 503, 503]);

    // The sign-in cannot be counted: the sign-in page again, 503, with the MCP endpoint's sentence.
    const refused = await signIn(server.url);
    assert.equal(refused.status, 503, refused.text.slice(0, 500));
    assert.match(refused.type, /^text\/html/);
    assert.ok(refused.text.includes(LIMIT_UNCHECKED), refused.text.slice(0, 2000));
    assert.equal(refused.cookie, "", "no session while the sign-in could not be counted");
    // A console change (signing out appends the token's revocation): a page saying so.
    const signOut = await fetch(`${server.url}/sign-out`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: before.cookie },
      body: new URLSearchParams({ csrf: /sergo_csrf=([A-Za-z0-9]+)/.exec(before.cookie)![1]! }).toString(),
    });
    const signOutText = await signOut.text();
    assert.equal(signOut.status, 503, signOutText.slice(0, 500));
    assert.match(signOut.headers.get("content-type") ?? "", /^text\/html/);
    assert.ok(signOutText.includes(DATABASE_UNREACHABLE), signOutText.slice(0, 2000));
    // An API change: JSON, the same sentence.
    const folder = await fetch(`${server.url}/api/folders`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: before.cookie,
        "x-csrf-token": /sergo_csrf=([A-Za-z0-9]+)/.exec(before.cookie)![1]!,
      },
      body: JSON.stringify({ name: "Minutes" }),
    });
    assert.equal(folder.status, 503);
    assert.deepEqual(await folder.json(), { code: "unavailable", message: DATABASE_UNREACHABLE });
    // Reads come from this replica's projections and go on working.
    const folders = await fetch(`${server.url}/api/folders`, { headers: { cookie: before.cookie } });
    assert.equal(folders.status, 200);
    assert.deepEqual((await folders.json()).folders.map((f: { name: string }) => f.name), ["Reports"]);
    // An OAuth client registration: its limit, shared in PostgreSQL, cannot be checked.
    assert.deepEqual(await register(server.url), {
      status: 503,
      body: { error: "temporarily_unavailable", error_description: LIMIT_UNCHECKED },
    });
    await cluster.start();
    const started = Date.now();
    for (;;) {
      const status = await listDocuments(server.url, key);
      if (status === 200) {
        answered++;
        break;
      }
      assert.equal(status, 503);
      assert.ok(Date.now() - started < 15_000, "serve did not recover within 15 s of PostgreSQL's return");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await listDocuments(server.url, key), 200);
    answered++;
    // The same sign-in, and a registration, work again.
    const after = await signIn(server.url);
    assert.equal(after.status, 303, after.text.slice(0, 500));
    assert.ok(after.cookie, "a session cookie once PostgreSQL is back");
    assert.equal((await register(server.url)).status, 201);
  } finally {
    await server.stop();
  }
  const sql = postgres(url, { max: 1 });
  try {
    const [row] = await sql`SELECT count(*)::int AS n FROM sergo_events WHERE type = 'McpCalled'`;
    assert.equal(
      row!.n,
      answered,
      "every call answered 200 has exactly one audit event, and no other call has one",
    );
  } finally {
    await sql.end();
  }
});
