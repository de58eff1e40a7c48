/**
 * Search under concurrency, both sides in the same run on the same cores:
 * `search` calls per second through `Deno.serve` with 50 connections (a
 * client in another process) beside the search tool run in process one
 * call after another, over five corpus PDFs (about 500 pages) read by the
 * real processing worker, 60 queries of corpus words; with the CPU each
 * costs per search — the tool alone, the endpoint with 50 calls in flight
 * and no socket (the audit and the JSON added), and the server through the
 * socket (HTTP added) — so where the difference goes can be told from CPU
 * time, which load moves less than calls per second.
 *
 * Run alone: `deno run -A bench/search_serve.ts [--quick]`.
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { createMcpEndpoint } from "../src/mcp/endpoint.ts";
import { Fixture } from "../test/mcp/_fixture.ts";
import { openApp } from "../src/app.ts";
import { ReadCache } from "../src/mcp/read_cache.ts";
import { mcpSettings } from "../src/mcp/settings.ts";
import { TOOLS } from "../src/mcp/tool_call.ts";
import { authenticateMcp } from "../src/auth/mcp_auth.ts";
import { ratioRow } from "./_table.ts";

async function client(): Promise<void> {
  const [, url, key, bodiesJson, seconds, conns] = Deno.args;
  const bodies = JSON.parse(bodiesJson!) as string[];
  const end = performance.now() + Number(seconds) * 1000;
  let calls = 0;
  await Promise.all(Array.from({ length: Number(conns) }, async (_, w) => {
    let i = w;
    while (performance.now() < end) {
      const r = await fetch(url!, {
        method: "POST",
        body: bodies[i++ % bodies.length],
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          accept: "application/json",
        },
      });
      await r.text();
      calls++;
    }
  }));
  console.log(JSON.stringify({ calls }));
}

/** Runs the comparison; returns its figures and summary row. */
export async function benchSearchServe(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const fixture = await Fixture.open();
  const person = await fixture.person("Ava Bennett");
  const folder = await fixture.folder(person, "Papers");
  for (
    const f of [
      "pdf/irs-internal-revenue-manual-2-3-59-400p.pdf",
      "pdf/tracemonkey-pldi-paper.pdf",
      "pdf/dense-passage-retrieval-paper.pdf",
      "pdf/cancer-council-breast-cancer-guide.pdf",
      "pdf/federal-register-2020-17221.pdf",
    ]
  ) await fixture.document(person, folder, f);
  const { value } = await fixture.agentKey(person, "papers", "Papers.", { folders: [folder], documents: [] });
  await fixture.close();
  const app = await openApp(fixture.dir, { writer: "thread" });
  const pages =
    (app.db.prepare("SELECT sum(page_count) AS n FROM cat_documents").get() as { n: number } | undefined)?.n;
  const settings = mcpSettings({ rateLimitPerSecond: 1e6, rateLimitBurst: 1e6 });
  const endpoint = createMcpEndpoint({ db: app.db, store: app.store, settings });
  const words = [
    "revenue",
    "manual",
    "trace",
    "compiler",
    "retrieval",
    "passage",
    "dense",
    "cancer",
    "breast",
    "treatment",
    "register",
    "federal",
    "tax",
    "loop",
    "javascript",
    "question",
    "answer",
    "doctor",
    "surgery",
    "rule",
  ];
  const queries = Array.from(
    { length: 60 },
    (_, i) => Array.from({ length: 2 + (i % 4) }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" "),
  );
  const bodies = queries.map((query, i) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "search", arguments: { query } },
    })
  );
  const cache = new ReadCache(app.db);
  const probe = new Request("http://x/mcp", {
    method: "POST",
    headers: { authorization: `Bearer ${value}` },
  });
  const auth = authenticateMcp(cache, probe, new Date());
  if (!auth.ok) throw new Error("auth");
  const tool = TOOLS.get("search")!;
  const ctx = () => ({
    db: app.db,
    key: auth.key,
    scope: cache.scope(auth.key),
    settings,
    remember: <T>(id: string, c: () => T) => cache.forKey(auth.key, `tool:${id}`, c),
  });
  const N = opts.quick ? 150 : 300;
  // 1. the tool alone, sequential
  for (let i = 0; i < 30; i++) await tool.run(ctx(), { query: queries[i % 60]! });
  let c0 = cpuUsage();
  let t0 = performance.now();
  for (let i = 0; i < N; i++) await tool.run(ctx(), { query: queries[i % 60]! });
  let c = cpuUsage(c0);
  const toolWall = (performance.now() - t0) / N;
  const toolCpu = (c.user + c.system) / N / 1000;
  // 2. the endpoint, no socket, 50 in flight
  c0 = cpuUsage();
  t0 = performance.now();
  let left = N;
  await Promise.all(Array.from({ length: 50 }, async (_, w) => {
    let i = w;
    while (left-- > 0) {
      const r = await endpoint(
        new Request("http://x/mcp", {
          method: "POST",
          body: bodies[i++ % 60],
          headers: { authorization: `Bearer ${value}`, "content-type": "application/json" },
        }),
      );
      await r.text();
    }
  }));
  c = cpuUsage(c0);
  const epWall = (performance.now() - t0) / N;
  const epCpu = (c.user + c.system) / N / 1000;
  // 3. through Deno.serve, client in another process, 50 connections
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, endpoint);
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  c0 = cpuUsage();
  const seconds = opts.quick ? 5 : 10;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL(import.meta.url).pathname,
      "client",
      url,
      value,
      JSON.stringify(bodies),
      String(seconds),
      "50",
    ],
    stdout: "piped",
  }).output();
  c = cpuUsage(c0);
  const served = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!).calls as number;
  await server.shutdown();
  const answer = JSON.parse(
    await (await endpoint(
      new Request("http://x/mcp", {
        method: "POST",
        body: bodies[3],
        headers: { authorization: `Bearer ${value}`, "content-type": "application/json" },
      }),
    )).text(),
  );
  const figures = {
    pages,
    answer_bytes: JSON.stringify(answer).length,
    tool_alone: {
      cpu_ms: +toolCpu.toFixed(2),
      wall_ms: +toolWall.toFixed(2),
      per_s: Math.round(1000 / toolWall),
    },
    endpoint_50_in_flight: {
      cpu_ms: +epCpu.toFixed(2),
      wall_ms_per_call: +epWall.toFixed(2),
      per_s: Math.round(1000 / epWall),
    },
    through_serve_50_connections: {
      per_s: Math.round(served / seconds),
      server_cpu_ms: +((c.user + c.system) / served / 1000).toFixed(2),
    },
    load: Deno.loadavg(),
  };
  await app.close();
  await Deno.remove(fixture.dir, { recursive: true });
  const ratio = Math.round((figures.through_serve_50_connections.per_s / figures.tool_alone.per_s) * 1000) /
    1000;
  return {
    ...figures,
    rows: [ratioRow({
      figure: `search calls/s through serve, 50 connections ÷ the tool in process (${pages} pages)`,
      sergo:
        `${figures.through_serve_50_connections.per_s}/s (server ${figures.through_serve_50_connections.server_cpu_ms} ms CPU a search)`,
      baseline:
        `${figures.tool_alone.per_s}/s (${figures.tool_alone.cpu_ms} ms CPU a search; endpoint without socket ${figures.endpoint_50_in_flight.cpu_ms} ms)`,
      ratio,
      budget: { op: ">=", value: 0.5 },
      note: `load ${figures.load.map((n) => n.toFixed(1)).join(" ")}`,
    })],
  };
}

if (import.meta.main) {
  if (Deno.args[0] === "client") {
    await client();
    Deno.exit(0);
  }
  console.log(JSON.stringify(await benchSearchServe({ quick: Deno.args.includes("--quick") }), null, 2));
}
