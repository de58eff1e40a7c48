import assert from "node:assert/strict";
import { createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { MAX_UPLOADS_PER_PERSON } from "../../src/api/uploads.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { testServer } from "../http/_server.ts";

async function setup() {
  const server = await testServer();
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(server.app, { name: "Ben Okafor", email: "ben@example.com" });
  const { value: avaKey } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
  const { value: benKey } = await createPersonalKey(server.app, { personId: ben.person_id }, "t");
  const as = (key: string) => (path: string, init: RequestInit = {}) =>
    server.fetch(path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  return { server, ava$: as(avaKey), ben$: as(benKey) };
}

const text = await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`);

Deno.test("a multipart upload without a boundary is a 400 with a sentence, and records nothing", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const before = server.app.head().position;
  for (const type of ["multipart/form-data", "multipart/form-data; charset=utf-8"]) {
    const r = await ava$("/api/documents", { method: "POST", body: text, headers: { "content-type": type } });
    assert.equal(r.status, 400, type);
    assert.deepEqual(await r.json(), {
      code: "invalid",
      message:
        'A multipart upload needs a boundary in its Content-Type header, as in "multipart/form-data; boundary=…"',
    });
  }
  assert.equal(server.app.head().position, before);
});

Deno.test("one person may have 4 uploads arriving at once: the next gets 429 with a sentence, others are not held up", async () => {
  const { server, ava$, ben$ } = await setup();
  await using _ = server;
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  const slow = Array.from({ length: MAX_UPLOADS_PER_PERSON }, (_, i) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        streams.push(controller);
        controller.enqueue(text.subarray(0, 100));
      },
    });
    return ava$(`/api/documents?name=slow-${i}.md&preset=none`, { method: "POST", body });
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const refused = await ava$("/api/documents?name=one-more.md&preset=none", { method: "POST", body: text });
  assert.equal(refused.status, 429);
  assert.deepEqual(await refused.json(), {
    code: "too_many_uploads",
    message: "You have 4 uploads arriving already: wait for one to finish, then send this one again",
  });
  const ben = await ben$("/api/documents?name=ben.md&preset=none", { method: "POST", body: text });
  assert.equal(ben.status, 201, "another person's upload goes ahead");
  for (const controller of streams) {
    controller.enqueue(text.subarray(100));
    controller.close();
  }
  for (const response of await Promise.all(slow)) assert.equal(response.status, 201);
  const again = await ava$("/api/documents?name=one-more.md&preset=none", { method: "POST", body: text });
  assert.equal(again.status, 201, "a slot is free again once an upload is done");
});

Deno.test("file and folder names refuse bidirectional controls and other control characters, naming the character", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const before = server.app.head().position;
  const upload = (name: string) =>
    ava$(`/api/documents?name=${encodeURIComponent(name)}&preset=none`, { method: "POST", body: text });
  let r = await upload("invoice\u202Efdp.exe");
  assert.equal(r.status, 400);
  assert.equal(
    (await r.json()).message,
    "File name cannot contain the bidirectional control character U+202E: it makes a name read differently from what it is",
  );
  for (
    const mark of [
      "\u2066",
      "\u2067",
      "\u2068",
      "\u2069",
      "\u202A",
      "\u202B",
      "\u202C",
      "\u202D",
      "\u200F",
      "\u061C",
    ]
  ) {
    r = await upload(`notes${mark}.md`);
    assert.equal(r.status, 400, `U+${mark.codePointAt(0)!.toString(16)}`);
    await r.body?.cancel();
  }
  r = await upload("notes\u0007.md");
  assert.equal((await r.json()).message, "File name cannot contain control characters (found U+0007)");
  r = await ava$("/api/folders", {
    method: "POST",
    body: JSON.stringify({ path: "Reports/\u202Eslaunna" }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(r.status, 400);
  assert.equal(
    (await r.json()).message,
    "Folder name cannot contain the bidirectional control character U+202E: it makes a name read differently from what it is",
  );
  assert.equal(server.app.head().position, before, "nothing was recorded");
  // Right-to-left names themselves are fine.
  r = await upload("דוח שנתי.md");
  assert.equal(r.status, 201);
});

Deno.test("an empty file in a multipart upload is recorded by its name (processing then says it is empty), not dropped or taken for no file; an empty file input is no file", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const upload = (parts: Array<[string, Uint8Array]>) => {
    const form = new FormData();
    for (const [name, bytes] of parts) form.append("file", new File([bytes as BlobPart], name));
    return ava$("/api/documents", { method: "POST", body: form });
  };
  const names = async (response: Response) => {
    assert.equal(response.status, 201);
    // In the form's order.
    return (await response.json()).documents.map((d: { name: string }) => d.name);
  };
  assert.deepEqual(await names(await upload([["notes.txt", new Uint8Array()]])), ["notes.txt"]);
  assert.deepEqual(await names(await upload([["blank.pdf", new Uint8Array()], ["readme.md", text]])), [
    "blank.pdf",
    "readme.md",
  ]);
  // A browser's file input left empty sends a part without a file name: that is no file at all.
  const before = server.app.head().position;
  const none = await upload([["", new Uint8Array()]]);
  assert.equal(none.status, 400);
  assert.equal((await none.json()).message, "The upload holds no file: add one or more files");
  assert.equal(server.app.head().position, before, "nothing recorded");
  assert.deepEqual(await names(await upload([["", new Uint8Array()], ["again.md", text]])), ["again.md"]);
});

Deno.test("with duplicates=refuse the same bytes in the same folder are a 409 naming the twin, recorded once; elsewhere, or without it, they are kept", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const upload = (name: string, fields: Record<string, string>) => {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.set(key, value);
    form.append("file", new File([text as BlobPart], name));
    return ava$("/api/documents", { method: "POST", body: form });
  };
  for (const path of ["Notes", "Elsewhere"]) {
    const made = await ava$("/api/folders", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path }),
    });
    assert.equal(made.status, 201);
    await made.body?.cancel();
  }
  const first = await upload("readme.md", { folder: "Notes", duplicates: "refuse" });
  assert.equal(first.status, 201, await first.clone().text());
  await first.body?.cancel();
  const twin = await upload("copy.md", { folder: "Notes", duplicates: "refuse" });
  assert.equal(twin.status, 409);
  assert.deepEqual(await twin.json(), {
    code: "conflict",
    message:
      '"copy.md" is already in this folder as "readme.md" (the same bytes): choose "Upload anyway" to keep both',
  });
  const kept = await upload("anyway.md", { folder: "Notes", duplicates: "keep" });
  assert.equal(kept.status, 201);
  await kept.body?.cancel();
  const elsewhere = await upload("other.md", { folder: "Elsewhere", duplicates: "refuse" });
  assert.equal(elsewhere.status, 201);
  await elsewhere.body?.cancel();
  const listed = await (await ava$("/api/documents?limit=100")).json();
  assert.deepEqual(listed.items.map((d: { name: string }) => d.name).sort(), [
    "anyway.md",
    "other.md",
    "readme.md",
  ]);
});

Deno.test("a JSON API body sent as another content type is a 415 with a sentence, and records nothing", async () => {
  const { server, ava$ } = await setup();
  await using _ = server;
  const before = server.app.head().position;
  for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
    const response = await ava$("/api/folders", {
      method: "POST",
      headers: { "content-type": type },
      body: JSON.stringify({ path: "Energy outlooks" }),
    });
    assert.equal(response.status, 415, type);
    assert.deepEqual(await response.json(), {
      code: "unsupported",
      message: "Send the body as JSON (Content-Type: application/json)",
    });
  }
  assert.equal(server.app.head().position, before);
  const json = await ava$("/api/folders", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path: "Energy outlooks" }),
  });
  assert.equal(json.status, 201);
  await json.body?.cancel();
});
