/**
 * Protocol overhead: `tools/list` and audited `list_documents` calls/s on
 * 127.0.0.1 under load (wrk), each beside a bare `Deno.serve` JSON-RPC echo
 * of the same response size started here, with p50/p99; audited calls also
 * beside the same echo made durable by a group commit on this disk
 * (`_durable_echo.ts`). Afterwards the log must hold exactly one `McpCalled`
 * event per answered call. On Linux the audited run also reports the server's
 * CPU per call on each thread (`cpu_us_per_call`).
 *
 * Run alone: `deno run -A bench/protocol.ts [--quick]`.
 *
 * @module
 */
import { createMcpEndpoint } from "../src/mcp/endpoint.ts";
import { Fixture } from "../test/mcp/_fixture.ts";
import { openApp, type SergoApp } from "../src/app.ts";
import { durableEcho } from "./_durable_echo.ts";

/** One load run's figures. */
export interface LoadFigures {
  calls_per_s: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  errors: number;
}

function ms(value: string, unit: string): number {
  const n = Number(value);
  return unit === "us" ? n / 1000 : unit === "s" ? n * 1000 : n;
}

export async function wrk(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { seconds: number; connections: number },
): Promise<LoadFigures> {
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  const lines = [
    'wrk.method = "POST"',
    `wrk.body = ${JSON.stringify(body)}`,
    ...Object.entries({
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    })
      .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
  ];
  await Deno.writeTextFile(script, lines.join("\n"));
  try {
    const output = await new Deno.Command("wrk", {
      args: ["-t2", `-c${opts.connections}`, `-d${opts.seconds}s`, "--latency", "-s", script, url],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
    const rate = /Requests\/sec:\s+([\d.]+)/.exec(text);
    const p50 = /\s50%\s+([\d.]+)(us|ms|s)/.exec(text);
    const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(text);
    const total = /(\d+) requests in/.exec(text);
    const errors = /Non-2xx or 3xx responses: (\d+)/.exec(text);
    if (!rate || !p50 || !p99 || !total) throw new Error(`Cannot read wrk's output: ${text}`);
    return {
      calls_per_s: Math.round(Number(rate[1])),
      p50_ms: Math.round(ms(p50[1]!, p50[2]!) * 1000) / 1000,
      p99_ms: Math.round(ms(p99[1]!, p99[2]!) * 1000) / 1000,
      requests: Number(total[1]),
      errors: errors ? Number(errors[1]) : 0,
    };
  } finally {
    await Deno.remove(script);
  }
}

async function wrkInstalled(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU time of this process so far by thread, in ns: the main thread, Deno's worker threads, the rest; and how
 * long the main thread has waited for a CPU while it could run (on the run queue, behind other threads).
 */
type ThreadCpu = { main: number; workers: number; other: number; mainWaiting: number };

/**
 * Each thread's CPU time so far, from Linux's `/proc/self/task/<tid>/schedstat`
 * (null elsewhere). Over a whole wrk run it says which thread an audited call
 * costs what on: the event loop, the log's writer thread, or the runtime's own
 * (V8's garbage collector and compiler threads, the HTTP stack).
 */
function threadCpu(): ThreadCpu | null {
  try {
    const cpu: ThreadCpu = { main: 0, workers: 0, other: 0, mainWaiting: 0 };
    for (const entry of Deno.readDirSync("/proc/self/task")) {
      const [running, waiting] = Deno.readTextFileSync(`/proc/self/task/${entry.name}/schedstat`).split(" ");
      const ns = Number(running);
      if (entry.name === String(Deno.pid)) {
        cpu.main += ns;
        cpu.mainWaiting += Number(waiting);
      } else if (Deno.readTextFileSync(`/proc/self/task/${entry.name}/comm`).startsWith("worker")) {
        cpu.workers += ns;
      } else cpu.other += ns;
    }
    return cpu;
  } catch {
    return null; // a thread ended while being read, or no /proc
  }
}

/** CPU µs per call on each thread between two readings, and the share of the run the main thread was on a CPU. */
function cpuPerCall(
  before: ThreadCpu | null,
  after: ThreadCpu | null,
  calls: number,
  seconds: number,
): Record<string, number> | null {
  if (!before || !after || calls === 0) return null;
  const us = (key: keyof ThreadCpu) => Math.round((after[key] - before[key]) / calls / 100) / 10;
  const share = (key: keyof ThreadCpu) =>
    Math.round((after[key] - before[key]) / (seconds * 1e9) * 100) / 100;
  return {
    main: us("main"),
    log_writer: us("workers"),
    other: us("other"),
    main_busy_share: share("main"),
    // The part of the run the event loop could have run but waited for a CPU (wrk, the other threads, the host).
    main_waiting_share: share("mainWaiting"),
  };
}

/** A bare Deno.serve JSON-RPC echo answering with `result` as given, for comparison. */
function bareEcho(resultJson: string): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = await request.json();
    return new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${resultJson}}`, {
      headers: { "content-type": "application/json" },
    });
  });
}

/** Runs the protocol benchmarks and returns their figures. */
export async function benchProtocol(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  if (!(await wrkInstalled())) {
    throw new Error("The protocol benchmark needs wrk: install it with `apt-get install wrk`");
  }
  const load = opts.quick ? { seconds: 3, connections: 20 } : { seconds: 10, connections: 50 };
  const fixture = await Fixture.open();
  let app: SergoApp | null = null;
  try {
    const person = await fixture.person("Ava Bennett");
    const outlooks = await fixture.folder(person, "Energy outlooks");
    const basic = await fixture.folder(person, "Basic", outlooks);
    await fixture.document(person, basic, "pptx/markitdown-test-deck-chart-table.pptx");
    await fixture.document(person, basic, "pptx/apache-performance-tuning-notes.pptx");
    const { value } = await fixture.agentKey(person, "energy-outlooks", "Energy outlook decks.", {
      folders: [outlooks],
      documents: [],
    });
    // Measured on the server's own stack: the app over the same data directory, with
    // commits on the writer thread and every projection kept up to date.
    await fixture.close();
    app = await openApp(fixture.dir, { writer: "thread" });
    const endpoint = createMcpEndpoint({
      db: app.db,
      store: app.store,
      settings: { rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 },
    });
    let answeredCalls = 0;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
      const response = await endpoint(request);
      if (response.status === 200) answeredCalls++;
      return response;
    });
    const url = `http://127.0.0.1:${server.addr.port}/mcp`;
    const headers = { Authorization: `Bearer ${value}` };
    const listBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const callBody = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_documents", arguments: {} },
    });
    const sample = async (body: string) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      });
      return JSON.stringify((await response.json()).result);
    };
    const toolsResult = await sample(listBody);
    const listResult = await sample(callBody);

    const toolsCpuBefore = threadCpu();
    const sergoTools = await wrk(url, listBody, headers, load);
    const toolsCpu = cpuPerCall(toolsCpuBefore, threadCpu(), sergoTools.requests, load.seconds);
    const countAudit = () =>
      (app!.store.readFrom(0, 10_000_000).filter((e) => e.type === "McpCalled")).length;
    const eventsBefore = countAudit();
    answeredCalls = 0;
    const cpuBefore = threadCpu();
    const commitsBefore = app.store.transactions;
    const sergoList = await wrk(url, callBody, headers, load);
    const cpu = cpuPerCall(cpuBefore, threadCpu(), sergoList.requests, load.seconds);
    const commits = app.store.transactions - commitsBefore;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const auditEvents = countAudit() - eventsBefore;
    const answered = answeredCalls;
    await server.shutdown();

    const bareTools = bareEcho(toolsResult);
    const bareToolsFigures = await wrk(`http://127.0.0.1:${bareTools.addr.port}/`, listBody, {}, load);
    await bareTools.shutdown();
    const bareList = bareEcho(listResult);
    const bareListFigures = await wrk(`http://127.0.0.1:${bareList.addr.port}/`, callBody, {}, load);
    await bareList.shutdown();
    // The same echo, each request made durable first by a group commit on this disk (and nothing else).
    const durable = await durableEcho(listResult, fixture.dir);
    const durableFigures = await wrk(`http://127.0.0.1:${durable.server.addr.port}/`, callBody, {}, load);
    const durableCommits = durable.commits();
    await durable.close();

    const ratio = (a: LoadFigures, b: LoadFigures) =>
      Math.round((a.calls_per_s / b.calls_per_s) * 1000) / 1000;
    return {
      load: { ...load, threads: 2, tool: "wrk" },
      tools_list: {
        sergo: sergoTools,
        bare: bareToolsFigures,
        ratio: ratio(sergoTools, bareToolsFigures),
        budget: 0.5,
        // By thread, as for list_documents below: what the log's writer and the audit view's threads take.
        cpu_us_per_call: toolsCpu,
      },
      list_documents: {
        sergo: sergoList,
        bare: bareListFigures,
        ratio: ratio(sergoList, bareListFigures),
        budget: 0.3,
        durable_bare: {
          ...durableFigures,
          requests_per_commit: Math.round(durableFigures.requests / durableCommits),
        },
        ratio_to_durable: ratio(sergoList, durableFigures),
        answered_calls: answered,
        audit_events: auditEvents,
        one_event_per_answered_call: answered === auditEvents,
        calls_per_group_commit: Math.round((sergoList.requests / Math.max(1, commits)) * 10) / 10,
        // The server's CPU per audited call by thread (main: the event loop; log_writer: the Deno workers, the
        // log's writer thread and the audit view's; other: V8's and the HTTP stack's threads), how much of the
        // run the event loop was busy, and how much it waited for a CPU.
        cpu_us_per_call: cpu,
      },
    };
  } finally {
    if (app) await app.close();
    else await fixture.close().catch(() => {});
    await Deno.remove(fixture.dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchProtocol({ quick: Deno.args.includes("--quick") }), null, 2));
}
