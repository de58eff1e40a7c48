/**
 * Sizes a client sends the REST API and the CLI, pinned from both sides: files
 * in one upload (100), a file name (255 characters), a JSON body (1,000,000
 * bytes), an API search (500 characters; the console's search page searches
 * the first 500), a person's name (200) and email (320). Past each: one
 * sentence, nothing recorded.
 */
import assert from "node:assert/strict";
import { startServer } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { createPersonalKey, issueLoginToken } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { MAX_FILE_NAME, MAX_PERSON_NAME } from "../../src/domain/rules.ts";
import { MAX_FILES_PER_UPLOAD } from "../../src/api/uploads.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { runCli, tempDir } from "../helpers/temp.ts";
import { testServer } from "./_server.ts";

async function setup() {
  const server = await testServer();
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const { value } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
  const ava$ = (path: string, init: RequestInit = {}) =>
    server.fetch(path, { ...init, headers: { authorization: `Bearer ${value}`, ...(init.headers ?? {}) } });
  return { server, personId: ava.person_id, ava$ };
}

const readme = await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`);

function form(files: number): FormData {
  const body = new FormData();
  body.set("preset", "none");
  for (let i = 0; i < files; i++) body.append("file", new File([readme], `readme-${i}.md`));
  return body;
}

Deno.test("one upload of 100 files records all 100; 101 files are refused with one sentence and record nothing", async () => {
  assert.equal(MAX_FILES_PER_UPLOAD, 100);
  const { server, personId, ava$ } = await setup();
  const count = () =>
    (server.app.db.prepare("SELECT count(*) AS n FROM cat_documents WHERE person_id = ?").get(personId) as {
      n: number;
    }).n;
  await using _ = server;
  const hundred = await ava$("/api/documents", { method: "POST", body: form(100) });
  assert.equal(hundred.status, 201);
  assert.equal((await hundred.json()).documents.length, 100);
  assert.equal(count(), 100);
  const before = server.app.head().position;
  const more = await ava$("/api/documents", { method: "POST", body: form(101) });
  assert.equal(more.status, 400);
  assert.deepEqual(await more.json(), { code: "invalid", message: "At most 100 files in one upload" });
  assert.equal(server.app.head().position, before, "nothing recorded");
  assert.equal(count(), 100);
});

Deno.test("a file name of 255 characters is kept whole; 256 is refused with one sentence and records nothing", async () => {
  assert.equal(MAX_FILE_NAME, 255);
  const { server, ava$ } = await setup();
  await using _ = server;
  const name = (length: number) => "n".repeat(length - 3) + ".md";
  const kept = await ava$(`/api/documents?name=${name(255)}&preset=none`, { method: "POST", body: readme });
  assert.equal(kept.status, 201);
  assert.equal((await kept.json()).documents[0].name, name(255));
  const before = server.app.head().position;
  const long = await ava$(`/api/documents?name=${name(256)}&preset=none`, { method: "POST", body: readme });
  assert.equal(long.status, 400);
  assert.deepEqual(await long.json(), {
    code: "invalid",
    message: "File name is too long: at most 255 characters, got 256",
  });
  assert.equal(server.app.head().position, before);
});

Deno.test("a JSON body of 1,000,000 bytes is read; one byte more is a 413 with one sentence and records nothing", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  // A folder's JSON padded with spaces to exactly `bytes` bytes.
  const body = (name: string, bytes: number) => {
    const json = JSON.stringify({ name });
    return json.slice(0, -1) + " ".repeat(bytes - json.length) + "}";
  };
  const post = (text: string) =>
    ava$("/api/folders", { method: "POST", headers: { "content-type": "application/json" }, body: text });
  assert.equal(body("Energy", 1_000_000).length, 1_000_000);
  const read = await post(body("Energy", 1_000_000));
  assert.equal(read.status, 201);
  assert.equal((await read.json()).name, "Energy");
  const before = server.app.head().position;
  const large = await post(body("Climate", 1_000_001));
  assert.equal(large.status, 413);
  assert.deepEqual(await large.json(), {
    code: "too_large",
    message: "The body is too large: at most 1000000 bytes",
  });
  assert.equal(server.app.head().position, before);
});

Deno.test("an API search of 500 characters is searched and recorded whole; 501 is refused with one sentence and records nothing", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const query = (length: number) => "heat pumps ".repeat(50).slice(0, length - 1) + "x";
  const searched = await ava$(`/api/search?q=${encodeURIComponent(query(500))}`);
  assert.equal(searched.status, 200);
  assert.equal((await searched.json()).query, query(500));
  const recorded = server.app.store.readFrom(0, 1000).filter((e) => e.type === "ConsoleSearched").at(-1)!;
  assert.equal(recorded.type === "ConsoleSearched" && recorded.data.query, query(500));
  const before = server.app.head().position;
  const long = await ava$(`/api/search?q=${encodeURIComponent(query(501))}`);
  assert.equal(long.status, 400);
  assert.deepEqual(await long.json(), {
    code: "invalid",
    message: '"q": Too big: expected string to have <=500 characters',
  });
  assert.equal(server.app.head().position, before);
});

Deno.test("the console's search page searches the first 500 characters of a longer query, and records those", async () => {
  await using dir = await tempDir();
  const running = await startServer(loadConfig(["--data", dir.path, "--port", "0"], () => undefined), {
    quiet: true,
  });
  try {
    const ava = await addPerson(running.app, { name: "Ava Bennett", email: "ava@example.com" });
    const { value } = await issueLoginToken(running.app, { personId: ava.person_id }, "t");
    const query = "heat pumps ".repeat(60).trim();
    assert.equal(query.length, 659);
    const page = await fetch(`${running.url}/search?q=${encodeURIComponent(query)}`, {
      headers: { cookie: `sergo_session=${value}` },
    });
    assert.equal(page.status, 200);
    await page.body?.cancel();
    const recorded = running.app.store.readFrom(0, 1000).filter((e) => e.type === "ConsoleSearched");
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.type === "ConsoleSearched" && recorded[0]!.data.query, query.slice(0, 500));
  } finally {
    await running.stop();
  }
});

Deno.test("main.ts person add takes a name of 200 characters and an email of 320; 201 and 321 exit 2 with one sentence and add nobody", async () => {
  assert.equal(MAX_PERSON_NAME, 200);
  await using dir = await tempDir();
  const add = (name: string, email: string) =>
    runCli(["person", "add", "--name", name, "--email", email, "--data", dir.path]);
  const fits = await add("A".repeat(200), "ava@example.com");
  assert.equal(fits.code, 0, fits.stderr);
  const long = await add("B".repeat(201), "ben@example.com");
  assert.deepEqual([long.code, long.stderr.trim()], [2, "Name is too long: at most 200 characters, got 201"]);
  // Ava is there (a second Ava is refused); Ben is not (he can be added now).
  const again = await add("Ava", "ava@example.com");
  assert.deepEqual([again.code, again.stderr.trim()], [
    2,
    'A person with email "ava@example.com" already exists',
  ]);
  assert.equal((await add("Ben", "ben@example.com")).code, 0);
  // An email address of 320 characters is taken; 321 is not an email address.
  const address = (length: number) => "c".repeat(length - "@example.com".length) + "@example.com";
  assert.equal((await add("Cy", address(320))).code, 0);
  const longer = await add("Di", address(321));
  assert.deepEqual([longer.code, longer.stderr.trim()], [2, `"${address(321)}" is not an email address`]);
});
