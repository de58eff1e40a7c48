import assert from "node:assert/strict";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { ensureFolderPath } from "../../src/domain/folders.ts";
import { createAgentKey, createPersonalKey, issueLoginToken } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { NONE_PRESET_REASON } from "../../src/domain/documents_decide.ts";
import { searchPassages } from "../../src/search/lexical.ts";
import { testServer } from "../http/_server.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const DECK = `${CORPUS_DIR}/pptx`;

async function setup() {
  const server = await testServer();
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const { value: avaKey } = await createPersonalKey(server.app, { personId: ava.person_id }, "test");
  const { value: benToken } = await issueLoginToken(server.app, { personId: ben.person_id }, "test");
  const as = (key: string) => (path: string, init: RequestInit = {}) =>
    server.fetch(path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const jsonBody = (body: unknown): RequestInit => ({
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  return { server, ava, ben, avaKey, ava$: as(avaKey), ben$: as(benToken), jsonBody };
}

Deno.test("API authentication: none, malformed, unknown, agent key — each a clear JSON error", async () => {
  const { server, ava } = await setup();
  await using _ = server;
  let r = await server.fetch("/api/me");
  assert.equal(r.status, 401);
  assert.equal((await r.json()).code, "no_auth");
  r = await server.fetch("/api/me", { headers: { authorization: "Bearer sgk_p_short" } });
  assert.equal(r.status, 401);
  assert.equal((await r.json()).code, "bad_key");
  const { value } = await createAgentKey(server.app, {
    personId: ava.person_id,
    name: "agent",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "t");
  r = await server.fetch("/api/me", { headers: { authorization: `Bearer ${value}` } });
  assert.equal(r.status, 403);
  assert.match((await r.json()).message, /Agent keys work with MCP only/);
});

Deno.test("folders: create by path and by parent, rename, move, refuse bad names, delete recursively", async () => {
  const { server, ava$, ben$, jsonBody } = await setup();
  await using _ = server;
  let r = await ava$("/api/folders", { method: "POST", ...jsonBody({ path: "Energy outlooks/Basic" }) });
  assert.equal(r.status, 201);
  const basic = await r.json();
  assert.equal(basic.path, "Energy outlooks/Basic");
  r = await ava$("/api/folders", { method: "POST", ...jsonBody({ name: "a/b", parent_id: null }) });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).message, 'Folder name "a/b" cannot contain "/"');
  r = await ava$("/api/folders", {
    method: "POST",
    ...jsonBody({ name: "Basic", parent_id: basic.parent_id }),
  });
  assert.equal(r.status, 409);
  r = await ava$("/api/folders", { method: "POST", ...jsonBody({ bogus: 1 }) });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).message, 'Unknown field "bogus"');
  r = await ava$("/api/folders", {
    method: "POST",
    body: "{",
    headers: { "content-type": "application/json" },
  });
  assert.equal((await r.json()).message, "The body is not valid JSON");
  r = await ava$(`/api/folders/${basic.id}`, { method: "PATCH", ...jsonBody({ name: "Plain" }) });
  assert.equal((await r.json()).path, "Energy outlooks/Plain");
  r = await ava$(`/api/folders/${basic.id}`, { method: "PATCH", ...jsonBody({ parent_id: null }) });
  assert.equal((await r.json()).path, "Plain");
  // Another person's folder looks exactly like a missing one.
  r = await ben$(`/api/folders/${basic.id}`, { method: "DELETE" });
  assert.equal(r.status, 404);
  const missing = await (await ben$(`/api/folders/nope`, { method: "DELETE" })).json();
  assert.deepEqual(Object.keys(missing), ["code", "message"]);
  r = await ava$("/api/folders");
  const tree = await r.json();
  assert.equal(tree.root, "Ava Bennett's documents");
  assert.deepEqual(tree.folders.map((f: { path: string }) => f.path).sort(), ["Energy outlooks", "Plain"]);
});

Deno.test("documents: multipart and raw uploads stream to blobs; type by content; a non-document is refused; over the limit is 413", async () => {
  const { server, ava$, ben$ } = await setup();
  await using _ = server;
  const deck = (await Array.fromAsync(Deno.readDir(DECK))).map((e) => e.name).filter((n) =>
    n.endsWith(".pptx")
  ).sort()[0]!;
  const bytes = await Deno.readFile(`${DECK}/${deck}`);
  const form = new FormData();
  form.set("folder", "");
  form.append("file", new Blob([bytes]), deck);
  await ava$("/api/folders", {
    method: "POST",
    body: JSON.stringify({ path: "Decks" }),
    headers: { "content-type": "application/json" },
  });
  form.set("folder", "Decks");
  form.set("preset", "none");
  let r = await ava$("/api/documents", { method: "POST", body: form });
  assert.equal(r.status, 201, await r.clone().text());
  const uploaded = (await r.json()).documents[0];
  assert.equal(uploaded.type, "pptx");
  assert.equal(uploaded.folder, "Ava Bennett's documents/Decks");
  assert.equal(uploaded.status, "not_indexed");
  assert.equal(uploaded.size, bytes.length);
  assert.ok(await server.app.blobs.has(uploaded.sha256));

  // Raw body; a PDF named .txt is a PDF.
  const pdf = await Deno.readFile(`${CORPUS_DIR}/pdf/hebrew-rtl-word365.pdf`);
  r = await ava$("/api/documents?name=notes.txt&preset=none", { method: "POST", body: pdf });
  assert.equal(r.status, 201);
  assert.equal((await r.json()).documents[0].type, "pdf");

  // Something that is not a document at all.
  r = await ava$("/api/documents?name=tool.exe", {
    method: "POST",
    body: new Uint8Array([0x4d, 0x5a, 0, 0, 1, 2, 3]),
  });
  assert.equal(r.status, 415);
  assert.match((await r.json()).message, /is not a file Sergo reads/);

  r = await ava$(`/api/documents/${uploaded.id}`);
  assert.equal((await r.json()).name, deck);
  r = await ben$(`/api/documents/${uploaded.id}`);
  assert.equal(r.status, 404);
  r = await ava$("/api/documents");
  assert.equal((await r.json()).total, 2);
  r = await ava$(`/api/documents/${uploaded.id}`, { method: "DELETE" });
  assert.equal(r.status, 204);
  r = await ava$("/api/documents");
  assert.equal((await r.json()).total, 1);
});

Deno.test("upload size limit: 413 with a clear message, nothing recorded", async () => {
  const server = await testServer({ env: {} });
  await using _ = server;
  server.services.config.maxUploadBytes = 1000;
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const { value } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
  const before = server.app.head().position;
  const r = await server.fetch("/api/documents?name=big.txt", {
    method: "POST",
    body: new Uint8Array(5000).fill(65),
    headers: { authorization: `Bearer ${value}` },
  });
  assert.equal(r.status, 413);
  assert.match((await r.json()).message, /larger than the upload limit/);
  assert.equal(server.app.head().position, before);
});

Deno.test("agent keys over the API: create shows the value once, list is masked, change, roll, delete", async () => {
  const { server, ava, ava$, ben$, jsonBody } = await setup();
  await using _ = server;
  const folder = await ensureFolderPath(
    server.app,
    { personId: ava.person_id, path: "Energy outlooks" },
    "t",
  );
  let r = await ava$("/api/keys", {
    method: "POST",
    ...jsonBody({ name: "energy-outlooks", description: "Decks", can_read: { folders: [folder.folder_id] } }),
  });
  assert.equal(r.status, 201);
  const created = await r.json();
  assert.match(created.value, /^sgk_s_/);
  assert.equal(created.key, `sgk_s_…${created.value.slice(-4)}`);
  r = await ava$("/api/keys");
  const listed = await r.json();
  assert.ok(!JSON.stringify(listed).includes(created.value));
  r = await ava$("/api/keys", { method: "POST", ...jsonBody({ name: "Bad Name" }) });
  assert.equal(r.status, 400);
  r = await ava$(`/api/keys/${created.id}`, { method: "PATCH", ...jsonBody({ description: "EIA decks" }) });
  assert.equal((await r.json()).description, "EIA decks");
  r = await ava$(`/api/keys/${created.id}/roll`, { method: "POST", ...jsonBody({ grace: "1h" }) });
  const rolled = await r.json();
  assert.notEqual(rolled.value, created.value);
  assert.equal(rolled.old_values.length, 1);
  r = await ava$(`/api/keys/${created.id}/roll`, { method: "POST", ...jsonBody({ grace: "2h" }) });
  assert.equal(r.status, 400);
  r = await ben$(`/api/keys/${created.id}`, { method: "DELETE" });
  assert.equal(r.status, 404);
  r = await ava$(`/api/keys/${created.id}`, { method: "DELETE" });
  assert.equal(r.status, 204);
});

Deno.test("a personal key made over the API works, is listed masked, and stops at once when deleted; sign-out ends the login token", async () => {
  const { server, ava$, ben$ } = await setup();
  await using _ = server;
  let r = await ava$("/api/personal-keys", { method: "POST" });
  assert.equal(r.status, 201);
  const made = await r.json();
  assert.match(made.value, /^sgk_p_/);
  const withMade = (path: string, init: RequestInit = {}) =>
    server.fetch(path, { ...init, headers: { authorization: `Bearer ${made.value}` } });
  assert.equal((await (await withMade("/api/me")).json()).email, "ava@example.com");
  r = await ava$("/api/personal-keys");
  const listed = await r.json();
  assert.equal(listed.keys.length, 2);
  assert.deepEqual(
    listed.keys.find((k: { id: string }) => k.id === made.id).key,
    `sgk_p_…${made.value.slice(-4)}`,
  );
  assert.ok(!JSON.stringify(listed).includes(made.value), "the value is shown once, at creation");
  r = await ava$(`/api/personal-keys/${made.id}`, { method: "DELETE" });
  assert.equal(r.status, 204);
  r = await withMade("/api/me");
  assert.equal(r.status, 401);
  assert.equal(
    (await r.json()).message,
    "Unknown key — it was deleted, or rolled and its old value has expired",
  );
  assert.equal((await (await ava$("/api/personal-keys")).json()).keys.length, 1);
  r = await ben$("/api/session", { method: "DELETE" });
  assert.equal(r.status, 204);
  r = await ben$("/api/me");
  assert.equal(r.status, 401);
  assert.equal((await r.json()).message, "This login token has expired or was revoked — sign in again");
});

Deno.test("unknown paths, OAuth discovery and /register answer a JSON 404; the OpenAPI document lists the routes", async () => {
  const server = await testServer();
  await using _ = server;
  for (
    const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource/mcp",
      "/register",
      "/nope",
    ]
  ) {
    const r = await server.fetch(path);
    assert.equal(r.status, 404, path);
    assert.match(r.headers.get("content-type") ?? "", /application\/json/);
    assert.equal((await r.json()).code, "not_found");
  }
  const doc = await (await server.fetch("/api/openapi.json")).json();
  assert.equal(doc.openapi, "3.1.0");
  assert.ok(doc.paths["/api/keys/{id}/roll"].post.requestBody);
  const health = await (await server.fetch("/healthz")).json();
  assert.equal(health.ok, true);
  assert.equal(typeof health.log.position, "number");
});

Deno.test("process again: none takes a document out of search with its reason; basic queues it; another person's is missing", async () => {
  const { server, ava, ava$, ben$, jsonBody } = await setup();
  await using _ = server;
  const bytes = await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`);
  let r = await ava$("/api/documents?name=readme.md", { method: "POST", body: bytes });
  const id = (await r.json()).documents[0].id;
  // Read by the real processing worker, as serve's would.
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(server.app, pool, { workerId: "test", concurrency: 1 });
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
  }
  const hits = () =>
    searchPassages(server.app.db, {
      personId: ava.person_id,
      folderIds: [],
      documentIds: [id],
      query: "MarkItDown",
      depth: 5,
    }).length;
  assert.ok(hits() >= 1);
  r = await ava$(`/api/documents/${id}/process`, { method: "POST", ...jsonBody({ preset: "none" }) });
  const none = await r.json();
  assert.equal(none.status, "not_indexed");
  assert.equal(none.reason, NONE_PRESET_REASON);
  assert.equal(hits(), 0);
  r = await ava$(`/api/documents/${id}/process`, { method: "POST", ...jsonBody({ preset: "fancy" }) });
  assert.equal(r.status, 400);
  r = await ben$(`/api/documents/${id}/process`, { method: "POST", ...jsonBody({ preset: "basic" }) });
  assert.equal(r.status, 404);
  r = await ava$(`/api/documents/${id}/process`, { method: "POST", ...jsonBody({ preset: "basic" }) });
  assert.equal((await r.json()).status, "processing");
});

Deno.test("search over the API: the search tool's answer over the caller's documents or as a key; audited as the person", async () => {
  const { server, ava, ava$, ben$ } = await setup();
  await using _ = server;
  const bytes = await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`);
  const r = await ava$("/api/documents?name=readme.md", { method: "POST", body: bytes });
  const id = (await r.json()).documents[0].id;
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(server.app, pool, { workerId: "test", concurrency: 1 });
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
  }
  const answer = await (await ava$("/api/search?q=convert%20files%20to%20Markdown")).json();
  assert.deepEqual(Object.keys(answer), ["query", "as_key", "documents", "message", "next_offset", "offset"]);
  assert.equal(answer.query, "convert files to Markdown");
  assert.equal(answer.as_key, null);
  assert.equal(answer.documents[0].document_id, id);
  assert.equal(answer.documents[0].document, "readme.md");
  assert.match(answer.documents[0].hits[0].excerpt, /Markdown/);
  // Ben has no documents: the tool's own sentence, and nothing of Ava's.
  const bens = await (await ben$("/api/search?q=convert%20files%20to%20Markdown")).json();
  assert.deepEqual(bens.documents, []);
  assert.equal(typeof bens.message, "string");
  // As a key that reads nothing of it: nothing found.
  const folder = await ensureFolderPath(server.app, { personId: ava.person_id, path: "Empty" }, "test");
  const { key } = await createAgentKey(server.app, {
    personId: ava.person_id,
    name: "empty-reader",
    description: "",
    canRead: { folders: [folder.folder_id], documents: [] },
  }, "test");
  const asKey = await (await ava$(`/api/search?q=Markdown&as=${key.key_id}`)).json();
  assert.deepEqual(asKey.as_key, { id: key.key_id, name: "empty-reader" });
  assert.deepEqual(asKey.documents, []);
  // Another person's key looks like a missing one; no query is one clear sentence.
  assert.equal((await ben$(`/api/search?q=Markdown&as=${key.key_id}`)).status, 404);
  const empty = await ava$("/api/search?q=");
  assert.equal(empty.status, 400);
  assert.match((await empty.json()).message, /^"q": /);
  // Audited as Ava, as the console's search is.
  server.app.settle();
  const audited = server.app.db.prepare(
    "SELECT COUNT(*) AS n FROM audit_entries WHERE person_id = ? AND action = 'console search'",
  ).get(ava.person_id) as { n: number };
  assert.equal(audited.n, 2);
});

Deno.test("a key that reads nothing: refused with one sentence from a login token (the console), made from a personal key (scripts fill it later)", async () => {
  const { server, ava$, ben$, jsonBody } = await setup();
  await using _ = server;
  const empty = { description: "", can_read: { folders: [], documents: [] } };
  const before = server.app.head().position;
  const refused = await ben$("/api/keys", { method: "POST", ...jsonBody({ name: "empty", ...empty }) });
  assert.equal(refused.status, 400);
  assert.deepEqual(await refused.json(), {
    code: "invalid",
    message:
      "Choose at least one folder or file for this key to read: a key that reads nothing finds nothing for its agent",
  });
  assert.equal(server.app.head().position, before, "nothing recorded");
  const made = await ava$("/api/keys", { method: "POST", ...jsonBody({ name: "empty", ...empty }) });
  assert.equal(made.status, 201);
  assert.deepEqual((await made.json()).can_read, { folders: [], documents: [] });
});
