/**
 * An SSE client that opens `/sse`, reads the endpoint event and then never
 * reads again, while it posts `view_page` calls to its session: against a real
 * `serve` process, the answers waiting for it are bounded, the server's memory
 * stays flat, the session ends (later posts refused before anything runs),
 * and another session of the same key is answered all along.
 *
 * @module
 */
import assert from "node:assert/strict";
import { runCli, TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const PDF = `${CORPUS_DIR}/pdf/picture-classification-figures.pdf`;

/** A `serve` process over a data directory with one processed PDF and one agent key reading it. */
async function startServe(dataDir: string): Promise<{ child: Deno.ChildProcess; url: string; key: string }> {
  const d = ["--data", dataDir];
  const cli = async (args: string[]) => {
    const result = await runCli([...args, ...d]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };
  await cli(["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com"]);
  await cli(["upload", "--person", "ava@example.com", "--folder", "Papers", PDF]);
  const added = await cli([
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "papers",
    "--read",
    "Papers",
  ]);
  const key = added.trim().split("\n").pop()!;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      ...d,
      "--port",
      "0",
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1", SERGO_RATE_LIMIT: "100000", SERGO_RATE_BURST: "100000" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + 60_000;
  while (!/at (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`serve did not listen within 60 s: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve stopped before it listened: ${out}`);
    out += value;
  }
  // The rest of its output is not read by the test; let it flow.
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { child, url: /at (http:\/\/\S+)/.exec(out)![1]!, key };
}

/** The resident memory of a process, in MB (`ps`: /proc needs every permission). */
async function rssMb(pid: number): Promise<number> {
  const output = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  return Number(new TextDecoder().decode(output.stdout).trim()) / 1024;
}

/** Opens a stream and reads its first event, the endpoint; returns the reader and the endpoint URL. */
async function openStream(url: string, key: string) {
  const response = await fetch(`${url}/sse`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
    signal: AbortSignal.timeout(120_000),
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const text = await readUntil(
    reader,
    (seen) => /data: (\S+)\n\n/.exec(seen)?.[1] ?? null,
    "the endpoint event",
  );
  return { reader, endpoint: new URL(text, url).href };
}

/** Reads a stream until `found` answers something; fails with a sentence after 30 s or at the stream's end. */
async function readUntil<T>(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  found: (seen: string) => T | null,
  what: string,
): Promise<T> {
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + 30_000;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`No ${what} on the stream within 30 s`)),
        deadline - Date.now(),
      );
    });
    const { value, done } = await Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
    if (done) throw new Error(`The stream ended before ${what}`);
    seen += decoder.decode(value, { stream: true });
    const result = found(seen);
    if (result !== null) return result;
  }
}

function viewPage(id: number, documentId: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "view_page", arguments: { document_id: documentId, page: 1 + (id % 2) } },
  });
}

function post(endpoint: string, key: string, body: string): Promise<Response> {
  return fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body,
    signal: AbortSignal.timeout(60_000),
  });
}

Deno.test({
  name:
    "an SSE stream that is never read holds a bounded amount: its session ends, memory stays flat, others are answered",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const { child, url, key } = await startServe(dir.path);
    try {
      const reading = await openStream(url, key);
      // The document's id, through the session that is read.
      const listed = await post(
        reading.endpoint,
        key,
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}',
      );
      assert.equal(listed.status, 202);
      await listed.body?.cancel();
      const documentId = await readUntil(
        reading.reader,
        (seen) => /\\"document_id\\":\s*\\"([A-Za-z0-9_-]+)\\"/.exec(seen)?.[1] ?? null,
        "the list_documents answer",
      );
      // Warm-up: the pages rendered once, and the heap at its working size.
      for (let i = 0; i < 6; i++) {
        const warm = await post(reading.endpoint, key, viewPage(100 + i, documentId));
        assert.equal(warm.status, 202);
        await warm.body?.cancel();
        await readUntil(
          reading.reader,
          (seen) => seen.includes(`"id":${100 + i}`) ? true : null,
          "a view_page answer",
        );
      }
      const before = await rssMb(child.pid);

      // The stalled client: reads the endpoint event, then nothing.
      const stalled = await openStream(url, key);
      const counts = new Map<number, number>();
      let peak = before;
      const posts = 600;
      for (let sent = 0; sent < posts; sent += 4) {
        const statuses = await Promise.all([0, 1, 2, 3].map(async (j) => {
          const response = await post(stalled.endpoint, key, viewPage(1000 + sent + j, documentId));
          await response.body?.cancel();
          return response.status;
        }));
        for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
        if (sent % 40 === 0) peak = Math.max(peak, await rssMb(child.pid));
      }
      peak = Math.max(peak, await rssMb(child.pid));
      const accepted = counts.get(202) ?? 0;
      console.log(
        `stalled session: ${accepted} of ${posts} posts accepted (${
          JSON.stringify(Object.fromEntries(counts))
        }); ` +
          `server RSS ${before.toFixed(0)} MB before, at most ${peak.toFixed(0)} MB`,
      );
      assert.ok(accepted < posts / 4, `${accepted} of ${posts} posts to a stream nobody reads were accepted`);
      assert.ok((counts.get(503) ?? 0) >= 1, "the post whose answer did not fit is told the session closed");
      assert.equal(
        counts.get(404) ?? 0,
        posts - accepted - (counts.get(503) ?? 0),
        "the rest find no session",
      );
      assert.ok(peak - before < 120, `server RSS went from ${before.toFixed(0)} MB to ${peak.toFixed(0)} MB`);

      // The session the client reads is answered all along.
      const still = await post(reading.endpoint, key, viewPage(9999, documentId));
      assert.equal(still.status, 202);
      await still.body?.cancel();
      await readUntil(reading.reader, (seen) => seen.includes('"id":9999') ? true : null, "the last answer");

      // The stalled stream was ended by the server: what it still holds is bounded, then it ends.
      let held = 0;
      const ended = await (async () => {
        try {
          for (;;) {
            const { value, done } = await stalled.reader.read();
            if (done) return true;
            held += value.byteLength;
          }
        } catch {
          return true; // cut by the server
        }
      })();
      assert.ok(ended);
      console.log(`the stalled stream delivered ${(held / 1024 / 1024).toFixed(1)} MB before it ended`);
      // Its place is free again: a new session opens and is answered.
      const again = await openStream(url, key);
      const answered = await post(again.endpoint, key, viewPage(7, documentId));
      assert.equal(answered.status, 202);
      await answered.body?.cancel();
      await readUntil(
        again.reader,
        (seen) => seen.includes('"id":7') ? true : null,
        "an answer on a new session",
      );
      await again.reader.cancel();
      await reading.reader.cancel();
    } finally {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await child.status;
      clearTimeout(timer);
    }
  },
});
