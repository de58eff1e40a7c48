/**
 * Hostile requests against a real `serve` process: none of them may freeze
 * it, keep its memory, or keep it from stopping.
 *
 * @module
 */
import assert from "node:assert/strict";
import { runCli, TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

/** A `serve` process over a data directory with one person and one agent key. */
async function startServe(dataDir: string): Promise<
  { child: Deno.ChildProcess; url: string; key: string; output: () => Promise<string> }
> {
  const d = ["--data", dataDir];
  assert.equal(
    (await runCli(["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com", ...d])).code,
    0,
  );
  assert.equal((await runCli(["folder", "add", "--person", "ava@example.com", "Notes", ...d])).code, 0);
  const added = await runCli([
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "notes",
    "--read",
    "Notes",
    ...d,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const key = added.stdout.trim().split("\n").pop()!;
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
  while (!/at (http:\/\/\S+)/.test(out)) {
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
    if (done) throw new Error(`serve stopped before it listened: ${out}`);
    out += value;
  }
  const url = /at (http:\/\/\S+)/.exec(out)![1]!;
  const output = async () => {
    for (;;) {
      const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
      if (done) return out;
      out += value;
    }
  };
  return { child, url, key, output };
}

/** Sends SIGTERM; kills the process when it has not stopped in time, and says so. */
async function stopWithin(child: Deno.ChildProcess, ms: number): Promise<Deno.CommandStatus> {
  child.kill("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(resolve, ms, null));
  const status = await Promise.race([child.status, late]);
  clearTimeout(timer);
  if (status) return status;
  child.kill("SIGKILL");
  await child.status;
  throw new Error(`serve did not stop within ${ms / 1000} s of SIGTERM`);
}

/** The resident memory of a process, in MB. */
async function rssMb(pid: number): Promise<number> {
  // `ps` rather than /proc, which Deno opens only with every permission.
  const output = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
  return Number(new TextDecoder().decode(output.stdout).trim()) / 1024;
}

function mcp(url: string, key: string, body: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      authorization: `Bearer ${key}`,
    },
    body,
    signal: AbortSignal.timeout(20_000),
  });
}

Deno.test("deep tool calls freeze nothing; 800 requests of 500 KB with params not an object are answered and their memory given back", async () => {
  await using dir = await tempDir();
  const { child, url, key, output } = await startServe(dir.path);
  try {
    // Objects nested 3,000 deep and arrays 3,600 deep, two of each at once, beside a plain call.
    const deep = (levels: number, open: string, close: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","x":${
        open.repeat(levels)
      }1${close.repeat(levels)}}}}`;
    const plain =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}';
    const statuses = await Promise.all(
      [
        deep(3_000, '{"a":', "}"),
        deep(3_000, '{"a":', "}"),
        deep(3_600, "[", "]"),
        deep(3_600, "[", "]"),
        plain,
      ]
        .map(async (body) => {
          const response = await mcp(url, key, body);
          await response.body?.cancel();
          return response.status;
        }),
    );
    assert.deepEqual(statuses, [400, 400, 400, 400, 200]);
    const again = await mcp(url, key, plain);
    assert.equal(again.status, 200);
    await again.body?.cancel();
    const health = await (await fetch(`${url}/healthz`)).json();
    assert.equal(health.ok, true);
    assert.equal(health.writer, "ok");

    const filler = "x".repeat(500_000);
    const body = `{"jsonrpc":"2.0","id":1,"method":"ping","params":5,"filler":"${filler}"}`;
    const wave = async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, () => mcp(url, key, body)));
      for (const answer of answers) {
        assert.equal(answer.status, 400);
        assert.equal((await answer.json()).error.code, -32600);
      }
    };
    // Two waves to reach the heap's working size, then eighteen more: 360 MB of requests that a
    // server keeping them (as it did, waiting for ever) would hold on top. V8 sizes its heap to the
    // garbage, so RSS rises by tens of MB and falls back; it does not grow with the requests.
    for (let i = 0; i < 2; i++) await wave();
    const before = await rssMb(child.pid);
    let peak = before;
    for (let i = 0; i < 18; i++) {
      await wave();
      peak = Math.max(peak, await rssMb(child.pid));
    }
    console.log(
      `server RSS after 2 waves ${before.toFixed(0)} MB, at most ${peak.toFixed(0)} MB over 18 more`,
    );
    assert.ok(peak - before < 250, `RSS went from ${before.toFixed(0)} MB to ${peak.toFixed(0)} MB`);
    const ping = await mcp(url, key, '{"jsonrpc":"2.0","id":2,"method":"ping"}');
    assert.equal(await ping.text(), '{"jsonrpc":"2.0","id":2,"result":{}}');
  } finally {
    await stopWithin(child, 20_000);
    await output();
  }
});

Deno.test("SIGTERM stops the server in bounded time while a request's body never finishes", async () => {
  await using dir = await tempDir();
  const { child, url, output } = await startServe(dir.path);
  const { port } = new URL(url);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  // Headers, then half the declared body, then nothing.
  await conn.write(new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc":`,
  ));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = Date.now();
  const status = await stopWithin(child, 20_000);
  const seconds = (Date.now() - started) / 1000;
  const out = await output();
  conn.close();
  assert.equal(status.code, 0);
  assert.match(out, /Stopped cleanly\./);
  // The stop waits 10 s for requests in flight, then closes without them.
  assert.ok(seconds < 20, `stopping took ${seconds} s`);
});
