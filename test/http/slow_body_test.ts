/**
 * A client that trickles its body, or stops sending it, is answered 408 in
 * bounded time, and the body's stream is cancelled: nothing of the request
 * is kept waiting for bytes that may never come.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { BlobStore } from "../../src/blob_store.ts";
import { streamUploads } from "../../src/api/uploads.ts";
import { Fixture } from "../mcp/_fixture.ts";
import { tempDir } from "../helpers/temp.ts";

/** A body that sends `first`, then one byte every `everyMs` (or nothing more), and never ends. */
function stalling(
  first: string,
  everyMs: number | null,
): { body: ReadableStream<Uint8Array>; cancelled: Promise<void> } {
  const { promise: cancelled, resolve } = Promise.withResolvers<void>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(first));
      if (everyMs !== null) timer = setInterval(() => controller.enqueue(new Uint8Array([0x20])), everyMs);
    },
    cancel() {
      clearInterval(timer);
      resolve();
    },
  });
  return { body, cancelled };
}

Deno.test("/mcp: a body that stops, or trickles a byte at a time, is answered 408 and cancelled", async () => {
  const fixture = await Fixture.open();
  const ava = await fixture.person("Ava Bennett");
  const { value: key } = await fixture.agentKey(ava, "notes", "", { folders: [], documents: [] });
  const endpoint = fixture.endpoint({ bodyTimeoutMs: 300 });
  for (const everyMs of [null, 50]) {
    const { body, cancelled } = stalling('{"jsonrpc":"2.0","id":1,', everyMs);
    const started = Date.now();
    const response = await endpoint(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      }),
    );
    assert.equal(response.status, 408);
    assert.equal(response.headers.get("connection"), "close");
    assert.deepEqual(await response.json(), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: "The request body did not arrive within 300 ms: send it in one go." },
    });
    await cancelled;
    assert.ok(Date.now() - started < 5_000);
  }
  assert.equal(fixture.auditEvents().length, 0);
  await fixture.dispose();
});

Deno.test("uploads: a body that pauses longer than the idle limit is refused 408, cancelled, and leaves no file", async () => {
  await using dir = await tempDir();
  const blobs = new BlobStore(join(dir.path, "blobs"));
  for (const type of ["application/octet-stream", "multipart/form-data; boundary=XyZ"]) {
    const first = type.startsWith("multipart")
      ? '--XyZ\r\ncontent-disposition: form-data; name="file"; filename="notes.txt"\r\n\r\nsome text'
      : "some text";
    const { body, cancelled } = stalling(first, null);
    const request = new Request("http://127.0.0.1/api/documents?name=notes.txt", {
      method: "POST",
      headers: { "content-type": type },
      body,
    });
    await assert.rejects(
      streamUploads(request, new URL(request.url), blobs, 1_000_000, 200),
      (error: Error & { status?: number }) => {
        assert.equal(error.message, "The upload stopped: nothing arrived for 200 ms");
        assert.equal(error.status, 408);
        return true;
      },
    );
    await cancelled;
    const left = [];
    for await (const entry of Deno.readDir(join(dir.path, "blobs", "tmp"))) left.push(entry.name);
    assert.deepEqual(left, [], type);
  }
});

Deno.test("/mcp over a socket: a body of a declared length that stops half-way is answered 408 in bounded time", async () => {
  const fixture = await Fixture.open();
  const ava = await fixture.person("Ava Bennett");
  const { value: key } = await fixture.agentKey(ava, "notes", "", { folders: [], documents: [] });
  const endpoint = fixture.endpoint({ bodyTimeoutMs: 300 });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, endpoint);
  const connection = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  try {
    const started = Date.now();
    const part = '{"jsonrpc":"2.0","id":1,';
    await connection.write(new TextEncoder().encode(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${part.length + 40}\r\n\r\n${part}`,
    ));
    // What the server sends, until its 408 has arrived whole (or the test's deadline).
    let text = "";
    const buffer = new Uint8Array(4096);
    const deadline = setTimeout(() => connection.close(), 10_000);
    try {
      while (!text.includes("send it in one go.")) {
        const n = await connection.read(buffer).catch(() => null);
        if (n === null) break;
        text += new TextDecoder().decode(buffer.subarray(0, n));
      }
    } finally {
      clearTimeout(deadline);
    }
    assert.ok(Date.now() - started < 9_000, `no 408 within 9 s: ${JSON.stringify(text.slice(0, 200))}`);
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.match(text, /The request body did not arrive within 300 ms: send it in one go\./);
    assert.equal(fixture.auditEvents().length, 0);
  } finally {
    try {
      connection.close();
    } catch {
      // closed by the server already
    }
    await server.shutdown();
    await fixture.dispose();
  }
});
