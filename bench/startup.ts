/**
 * Start-up and memory benchmark, on the replay data set (projections built):
 * the time from starting `serve` as `deno task serve` does to a good
 * `GET /healthz`, beside a bare `Deno.serve` started the same way; then the
 * server's peak RSS (`VmHWM`) while `wrk` sends it searches through
 * `POST /mcp` `tools/call` `search` with an agent key made by the CLI.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { ensureReplayedData, replaySizes } from "./replay.ts";
import { BENCH_FOLDERS, BENCH_PERSON } from "./_replay_data.ts";
import { loadCorpus } from "./_corpus_text.ts";
import { percentile, printRow, ratioRow, round, type SummaryRow } from "./_table.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const DATA_ROOT = new URL("./data/", import.meta.url).pathname;
const PROTOCOL_VERSION = "2025-06-18";

/** The `deno run` flags of a task in deno.json, such as `serve`, and the environment it sets (`NAME=value` words). */
export async function taskFlags(task: string): Promise<string[]> {
  return (await taskWords(task)).filter((word) => word.startsWith("--"));
}

export async function taskEnv(task: string): Promise<Record<string, string>> {
  const words = await taskWords(task);
  const env: Record<string, string> = {};
  for (const word of words.slice(0, words.indexOf("deno"))) {
    const match = word.match(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

async function taskWords(task: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { tasks: Record<string, string> };
  return (config.tasks[task] ?? "").split(/\s+/).filter(Boolean);
}

/** A server process started by the bench. */
interface Started {
  child: Deno.ChildProcess;
  url: string;
  /** ms from spawn to the first good `/healthz`. */
  healthyMs: number;
  /** What it printed before it was ready. */
  output: string;
}

/** Spawns a server, waits for its URL on stdout, then polls `/healthz` until it answers 200. */
export async function startAndWaitHealthy(
  args: string[],
  env: Record<string, string> = {},
): Promise<Started> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`No URL printed within 120 s; it printed: ${output.slice(-500)}`)),
      120_000,
    );
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) {
        output += decoder.decode(chunk, { stream: true });
        const match = output.match(/https?:\/\/[\w.\[\]:-]+:\d+/);
        if (match) {
          clearTimeout(timer);
          resolve(match[0]);
        }
      }
    };
    collect(child.stdout).catch(() => {});
    collect(child.stderr).catch(() => {});
    child.status.then((status) => {
      clearTimeout(timer);
      reject(
        new Error(`The server exited with code ${status.code} before it was ready: ${output.slice(-800)}`),
      );
    });
  });
  for (;;) {
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // Not accepting yet.
    }
    if (performance.now() - started > 120_000) {
      throw new Error(`"${url}/healthz" did not answer 200 within 120 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { child, url, healthyMs: performance.now() - started, output };
}

export async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // Gone already.
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 15_000);
  await child.status;
  clearTimeout(timer);
}

/**
 * Peak and current resident memory of a process, in MB, from /proc (read
 * through `cat`: Deno lets only `--allow-all` read /proc itself).
 */
export async function memoryOf(pid: number): Promise<{ hwm_mb: number; rss_mb: number } | null> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
    stderr: "null",
  })
    .output().catch(() => null);
  if (!output?.success) return null;
  const status = new TextDecoder().decode(output.stdout);
  const kb = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? NaN);
  return { hwm_mb: round(kb("VmHWM") / 1024, 1), rss_mb: round(kb("VmRSS") / 1024, 1) };
}

/** The deno process serving: the child itself (`deno run` does not fork). */
function serverPid(child: Deno.ChildProcess): number {
  return child.pid;
}

/** Copies the replayed data set into a fresh directory the server may write to. */
async function freshDataDir(source: string, name: string): Promise<string> {
  const dir = `${DATA_ROOT}${name}`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  for (const file of ["events.db", "events.db-wal", "projections.db", "projections.db-wal"]) {
    await Deno.copyFile(`${source}/${file}`, `${dir}/${file}`).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
  return dir;
}

/** The log's head, and the searches (with how many were errors) audited past `after`. */
function loggedCalls(
  dir: string,
  after: number,
): { head: number; searches: number; errors: number; listings: number } {
  const db = new DatabaseSync(`${dir}/events.db`, { readOnly: true });
  try {
    const head = (db.prepare("SELECT coalesce(max(position), 0) AS n FROM events").get() as { n: number }).n;
    const row = db.prepare(
      `SELECT count(*) AS searches, coalesce(sum(json_extract(data, '$.is_error')), 0) AS errors FROM events
       WHERE position > ? AND type = 'McpCalled' AND json_extract(data, '$.tool') = 'search'`,
    ).get(after) as { searches: number; errors: number };
    const listings = (db.prepare(
      `SELECT count(*) AS n FROM events
       WHERE position > ? AND type = 'McpCalled' AND json_extract(data, '$.tool') = 'list_documents'`,
    ).get(after) as { n: number }).n;
    return { head, searches: row.searches, errors: row.errors, listings };
  } finally {
    db.close();
  }
}

/** Runs a CLI command on a data directory and returns its stdout. */
async function cli(dataDir: string, args: string[]): Promise<string> {
  const flags = await taskFlags("sergo");
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "main.ts", ...args, "--data", dataDir],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (output.code !== 0) {
    throw new Error(
      `"sergo ${args.slice(0, 2).join(" ")}" failed (${output.code}): ${
        new TextDecoder().decode(output.stderr).trim()
      }`,
    );
  }
  return text;
}

/** A `tools/call list_documents` with no arguments: the first 50 documents of the key's scope. */
const LIST_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_documents", arguments: {} },
});

const BARE_SERVER =
  `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => console.log("listening at http://127.0.0.1:" + a.port) },
  (request) => new URL(request.url).pathname === "/healthz" ? Response.json({ ok: true }) : new Response("not found", { status: 404 }));
`;

/** The JSON-RPC bodies of `tools/call search` for each query. */
function searchBodies(queries: string[]): string[] {
  return queries.map((query, i) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "search", arguments: { query } },
    })
  );
}

/** wrk's script: POSTs one of the bodies in turn. */
function wrkScript(key: string, bodies: string[]): string {
  const lua = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  return `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Authorization"] = "Bearer ${key}"
wrk.headers["MCP-Protocol-Version"] = "${PROTOCOL_VERSION}"
local bodies = { ${bodies.map(lua).join(",\n")} }
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, bodies[(n % #bodies) + 1])
end
done = function(summary, latency, requests)
  io.write("WRK_JSON {")
  io.write(string.format('"requests":%d,"seconds":%.3f,"p50_ms":%.2f,"p99_ms":%.2f', summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
  io.write(string.format(',"errors":%d', summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
  io.write("}\\n")
end
`;
}

/** Queries of 2–6 words from the corpus, so searches hit real text. */
async function benchQueries(count: number): Promise<string[]> {
  const words: string[] = [];
  for (const file of await loadCorpus()) {
    for (const page of file.pages.slice(0, 3)) words.push(...(page.match(/\p{L}{5,}/gu) ?? []).slice(0, 20));
  }
  return Array.from(
    { length: count },
    (_, i) =>
      Array.from({ length: 2 + (i % 5) }, (_, k) => words[(i * 37 + k * 101) % words.length]!.toLowerCase())
        .join(" "),
  );
}

/** One search through `/mcp`, to check the key and the call work before the load. */
async function searchOnce(url: string, key: string, query: string): Promise<{ ok: boolean; detail: string }> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
      "mcp-protocol-version": PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "search", arguments: { query } },
    }),
  });
  const text = await response.text();
  const ok = response.status === 200 && text.includes('"result"') && !text.includes('"isError":true');
  return { ok, detail: `${response.status} ${text.slice(0, 300)}` };
}

/** Runs wrk against `/mcp` (or `/healthz` when `key` is null); returns its figures. */
async function load(
  url: string,
  key: string | null,
  seconds: number,
  bodies: string[],
  connections = 16,
): Promise<Record<string, unknown>> {
  const script = `${DATA_ROOT}wrk_search.lua`;
  await Deno.writeTextFile(script, key === null ? "" : wrkScript(key, bodies));
  const target = key === null ? `${url}/healthz` : `${url}/mcp`;
  const output = await new Deno.Command("wrk", {
    args: [
      "-t2",
      `-c${connections}`,
      `-d${seconds}s`,
      "--latency",
      ...(key === null ? [] : ["-s", script]),
      target,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  const json = text.match(/WRK_JSON (\{.*\})/)?.[1];
  const figures: Record<string, unknown> = json ? JSON.parse(json) : {};
  const requests = Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN);
  const non2xx = Number(text.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  return { target, calls_per_s: round(requests, 1), non_2xx: non2xx, ...figures };
}

/** Runs the start-up and memory benchmark, prints its rows and returns its figures. */
export async function benchStartup(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const data = await ensureReplayedData(opts.quick);
  const { pages } = replaySizes(opts.quick);
  const dir = await freshDataDir(data.dir, `startup-${pages}`);
  const keyOutput = await cli(dir, [
    "key",
    "add",
    "--person",
    BENCH_PERSON.email,
    "--name",
    "bench-search",
    "--description",
    "The benchmark's searches",
    ...BENCH_FOLDERS.flatMap((folder) => ["--read", folder]),
  ]);
  const key = keyOutput.trim().split("\n").at(-1)!.trim();
  const serveFlags = await taskFlags("serve");
  const runs = opts.quick ? 3 : 5;

  // Start-up: the bare server first, then Sergo, alternated; the medians are compared.
  const bareScript = `${DATA_ROOT}bare_healthz_server.ts`;
  await Deno.writeTextFile(bareScript, BARE_SERVER);
  const bareMs: number[] = [];
  const sergoMs: number[] = [];
  let rebuilt = false;
  // The task's own environment, and no rate limit: the load is one key's.
  const env = { ...(await taskEnv("serve")), SERGO_RATE_LIMIT: "1000000", SERGO_RATE_BURST: "1000000" };
  const serveArgs = ["run", ...serveFlags, "main.ts", "serve", "--data", dir, "--port", "0"];
  for (let run = 0; run < runs; run++) {
    const bare = await startAndWaitHealthy(["run", "--allow-net", bareScript]);
    bareMs.push(bare.healthyMs);
    await stop(bare.child);
    const sergo = await startAndWaitHealthy(serveArgs, env);
    sergoMs.push(sergo.healthyMs);
    if (/rebuilding projections/i.test(sergo.output)) rebuilt = true;
    await stop(sergo.child);
  }
  const startMs = percentile(sergoMs, 0.5);
  const bareStartMs = percentile(bareMs, 0.5);

  // Memory: searches under load through /mcp.
  const server = await startAndWaitHealthy(serveArgs, env);
  const pid = serverPid(server.child);
  const queries = await benchQueries(300);
  let memory: Record<string, unknown>;
  let loadFigures: Record<string, unknown>;
  let through = "POST /mcp tools/call search";
  let serveListing: Record<string, unknown> | null = null;
  const before = loggedCalls(dir, 0).head;
  try {
    const idle = await memoryOf(pid);
    const probe = await searchOnce(server.url, key, queries[0]!);
    if (probe.ok) {
      loadFigures = await load(server.url, key, opts.quick ? 6 : 15, searchBodies(queries));
    } else {
      through = `GET /healthz (a search through /mcp failed: ${probe.detail})`;
      loadFigures = await load(server.url, null, opts.quick ? 6 : 15, []);
    }
    const peak = await memoryOf(pid);
    // Audited listings through serve itself (its workers running), after the memory figure.
    if (probe.ok) {
      const listedFrom = loggedCalls(dir, 0).head;
      const listing = await load(server.url, key, opts.quick ? 3 : 10, [LIST_BODY], 50);
      serveListing = { ...listing, audited: loggedCalls(dir, listedFrom).listings };
    }
    memory = {
      idle_rss_mb: idle?.rss_mb ?? null,
      peak_rss_mb: peak?.hwm_mb ?? null,
      rss_after_mb: peak?.rss_mb ?? null,
    };
  } finally {
    await stop(server.child);
  }
  const calls = loggedCalls(dir, before);
  loadFigures = { ...loadFigures, audited_searches: calls.searches, audited_errors: calls.errors };

  const result = {
    pages: data.pages,
    events: data.events,
    startup_runs: runs,
    sergo_healthz_ms: { median: round(startMs, 0), all: sergoMs.map((ms) => round(ms, 0)) },
    bare_deno_serve_healthz_ms: { median: round(bareStartMs, 0), all: bareMs.map((ms) => round(ms, 0)) },
    projections_rebuilt_at_start: rebuilt,
    memory_load: { through, ...loadFigures },
    serve_list_documents: serveListing,
    ...memory,
    server_env: env,
  };
  const peakMb = memory.peak_rss_mb as number | null;
  const rows: SummaryRow[] = [
    ratioRow({
      figure: `start-up to good /healthz (${data.pages} pages)`,
      sergo: `${round(startMs, 0)} ms`,
      baseline: `${round(bareStartMs, 0)} ms (bare Deno.serve)`,
      ratio: round(startMs / bareStartMs, 2),
      value: round(startMs, 0),
      budget: { op: "<=", value: 1000, unit: "ms" },
      note: rebuilt ? "projections were rebuilt at start" : undefined,
    }),
    ratioRow({
      figure: `peak RSS serving searches (${data.pages} pages)`,
      sergo: peakMb === null ? "—" : `${peakMb} MB`,
      baseline: "",
      ratio: null,
      value: peakMb,
      budget: { op: "<=", value: 300, unit: "MB" },
      note:
        `${through}: ${loadFigures.calls_per_s} calls/s, p50 ${loadFigures.p50_ms} ms, p99 ${loadFigures.p99_ms} ms, ` +
        `non-2xx ${loadFigures.non_2xx}, ${loadFigures.audited_searches} searches audited, ${loadFigures.audited_errors} of them errors`,
    }),
  ];
  if (serveListing) {
    rows.push(ratioRow({
      figure: `audited list_documents through serve (${data.pages} pages, 50-item answers, 50 connections)`,
      sergo: `${serveListing.calls_per_s}/s (p50 ${serveListing.p50_ms} ms, p99 ${serveListing.p99_ms} ms)`,
      baseline: "",
      ratio: null,
      budget: null,
      note: `shown, not budgeted (the budgeted figure is protocol.ts's); non-2xx ${serveListing.non_2xx}; ` +
        `${serveListing.audited} calls audited, ${serveListing.requests} answers counted by wrk (it stops ` +
        `counting with up to 50 calls in flight)`,
    }));
  }
  for (const row of rows) printRow(row);
  return { ...result, rows };
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchStartup({ quick: Deno.args.includes("--quick") }), null, 2));
}
