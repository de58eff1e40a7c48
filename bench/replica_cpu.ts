/**
 * Replicas on one PostgreSQL, measured by what does not depend on the
 * machine's other load: audited `list_documents` calls per CPU second (the
 * replicas' own CPU, from each process, and PostgreSQL's, from /proc), event
 * rows read back from PostgreSQL per call (and how each replica got the
 * other replicas' rows: pulled by a query of its own, or carried by its own
 * group commits' answers), and what PostgreSQL's sessions wait on
 * (`pg_stat_activity`, sampled every 20 ms), for 1, 2 and 3 replicas, with
 * one hot key and with 50 keys.
 *
 * Each replica is a process of its own with the server's stack (the app on
 * `SERGO_DATABASE_URL`'s store, the shared rate limiter, the MCP endpoint)
 * calling its endpoint directly with 25 calls in flight (no socket, no
 * balancer: what is measured is what the replicas and the database spend,
 * not HTTP). Calls per second are shown but depend on the load; calls per
 * CPU second much less.
 *
 * Run alone: `deno run -A bench/replica_cpu.ts [--quick] [--keys=1,50] [--replicas=1,2,3] [--apart]`
 * (`--apart`: the replicas each on a database of its own, the machine's share of the difference).
 *
 * @module
 */
import { cpuUsage } from "node:process";
import postgres from "postgres";
import { openApp } from "../src/app.ts";
import { ensureFolderPath } from "../src/domain/folders.ts";
import { createAgentKey } from "../src/domain/keys.ts";
import { addPerson } from "../src/domain/people.ts";
import { createMcpEndpoint } from "../src/mcp/endpoint.ts";
import { openSharedRateLimiter } from "../src/mcp/shared_rate_limit.ts";
import type { PostgresEventStore } from "../events/postgres/store.ts";
import { createSergoDatabase, startThrowawayCluster } from "../test/helpers/postgres.ts";
import type { SummaryRow } from "./_table.ts";

const LIST = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_documents", arguments: {} },
});

/** One replica's run: `deno run -A bench/replica_cpu.ts replica URL KEYS SECONDS IN_FLIGHT`. */
async function replica(url: string, keys: string[], seconds: number, inFlight: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-replica-cpu-" });
  const app = await openApp(dir, { databaseUrl: url });
  const limiter = await openSharedRateLimiter(url, { perSecond: 1e6, burst: 1e6 });
  const endpoint = createMcpEndpoint({
    db: app.db,
    store: app.store,
    limiter,
    settings: { rateLimitPerSecond: 1e6, rateLimitBurst: 1e6 },
  });
  const call = async (key: string) => {
    const response = await endpoint(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        body: LIST,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      }),
    );
    await response.text();
    if (response.status !== 200) throw new Error(`A replica's call was answered ${response.status}.`);
  };
  for (let i = 0; i < 200; i++) await call(keys[i % keys.length]!);
  // Warm: say so, and start when told (every replica at once, after all have warmed up).
  console.log("ready");
  const told = Deno.stdin.readable.getReader();
  await told.read();
  const store = app.store as PostgresEventStore;
  const followedBefore = store.followed;
  const commitsBefore = store.transactions;
  const takesBefore = limiter.statements;
  const before = cpuUsage();
  const threadsBefore = threadTicks();
  const started = performance.now();
  const end = started + seconds * 1000;
  let calls = 0;
  await Promise.all(Array.from({ length: inFlight }, async (_, worker) => {
    let i = worker;
    while (performance.now() < end) {
      await call(keys[i++ % keys.length]!);
      calls++;
    }
  }));
  const used = cpuUsage(before);
  const threads = threadTicks();
  const followed = store.followed;
  console.log(JSON.stringify({
    calls,
    wall_s: (performance.now() - started) / 1000,
    cpu_s: (used.user + used.system) / 1e6,
    main_cpu_s: (threads.main - threadsBefore.main) / 100,
    v8_cpu_s: (threads.v8 - threadsBefore.v8) / 100,
    pulled: followed.pulledRows - followedBefore.pulledRows,
    carried: followed.carriedRows - followedBefore.carriedRows,
    pulls: followed.pulls - followedBefore.pulls,
    sleeps: threads.sleeps - threadsBefore.sleeps,
    commits: store.transactions - commitsBefore,
    takes: limiter.statements - takesBefore,
  }));
  // Connections stay open until told (stdin closed), so PostgreSQL's CPU can be read with its sessions alive.
  while (!(await told.read()).done);
  await limiter.close();
  await app.close();
  await Deno.remove(dir, { recursive: true });
}

/**
 * This process's CPU ticks (1/100 s) so far: its main thread (JavaScript,
 * SQLite, the driver) and V8's worker threads (the collector's concurrent
 * marking and the optimising compiler).
 */
function threadTicks(): { main: number; v8: number; sleeps: number } {
  const ticks = { main: 0, v8: 0, sleeps: 0 };
  const status = Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/status`);
  ticks.sleeps = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  for (const task of Deno.readDirSync("/proc/self/task")) {
    try {
      const stat = Deno.readTextFileSync(`/proc/self/task/${task.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const used = Number(fields[11]) + Number(fields[12]);
      if (task.name === String(Deno.pid)) ticks.main += used;
      else if (stat.includes("(V8 ")) ticks.v8 += used;
    } catch {
      // ended meanwhile
    }
  }
  return ticks;
}

/** CPU ticks of this cluster's server (found by its port) and of its sessions and helpers (its children). */
function postgresTicks(port: string): number {
  const processes: { pid: string; ppid: string; ticks: number; server: boolean }[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (!stat.includes("(postgres)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      processes.push({
        pid: entry.name,
        ppid: fields[1]!,
        ticks: Number(fields[11]) + Number(fields[12]),
        server: cmdline.includes("-p") && cmdline[cmdline.indexOf("-p") + 1] === port,
      });
    } catch {
      // ended meanwhile
    }
  }
  const server = processes.find((p) => p.server);
  if (!server) return 0;
  return processes.filter((p) => p === server || p.ppid === server.pid).reduce((sum, p) => sum + p.ticks, 0);
}

/** One configuration's figures. */
export interface ReplicaRun {
  replicas: number;
  keys: number;
  calls_per_s: number;
  replica_cpu_ms_per_call: number;
  /** Of it, the replicas' main threads' (JavaScript, SQLite, the driver) and V8's worker threads' (collector, compiler). */
  replica_main_thread_ms_per_call: number;
  replica_v8_threads_ms_per_call: number;
  postgres_cpu_ms_per_call: number;
  calls_per_replica_cpu_s: number;
  event_rows_read_per_call: number;
  /** Other replicas' rows each replica pulled by a query of its own, per call. */
  rows_pulled_per_call: number;
  /** Other replicas' rows that came with a replica's own group commit's answer, per call. */
  rows_carried_per_call: number;
  /** Group commits per call (each replica's own), and the replicas' pulls per call (queries of their own). */
  commits_per_call: number;
  pulls_per_call: number;
  /** How often the replicas' main threads went to sleep (waited for the network or a timer), per call. */
  sleeps_per_call: number;
  /** Sessions waiting on each thing, on average per sample. */
  waits: Record<string, number>;
  load_average: number;
}

async function run(replicas: number, keyCount: number, seconds: number): Promise<ReplicaRun> {
  await using cluster = await startThrowawayCluster({ fsync: true });
  const url = await createSergoDatabase(cluster);
  const dir = await Deno.makeTempDir({ prefix: "sergo-replica-cpu-" });
  const keys: string[] = [];
  try {
    const app = await openApp(dir, { databaseUrl: url });
    try {
      const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
      const folder = await ensureFolderPath(app, { personId: ava.person_id, path: "Decks" }, "bench");
      for (let i = 0; i < keyCount; i++) {
        keys.push(
          (await createAgentKey(app, {
            personId: ava.person_id,
            name: `decks-${i}`,
            description: "Decks.",
            canRead: { folders: [folder.folder_id], documents: [] },
          }, "bench")).value,
        );
      }
    } finally {
      await app.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const sampler = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rowsRead = async () =>
      Number(
        (await sampler<{ n: string }[]>`
          SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n
          FROM pg_stat_user_tables WHERE relname = 'sergo_events'`)[0]!.n,
      );
    const children = Array.from({ length: replicas }, () =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          // SERGO_BENCH_CPU_PROF=dir: each replica writes V8's CPU profile there (warm-up included).
          ...(Deno.env.get("SERGO_BENCH_CPU_PROF")
            ? [`--cpu-prof`, `--cpu-prof-dir=${Deno.env.get("SERGO_BENCH_CPU_PROF")}`]
            : []),
          new URL(import.meta.url).pathname,
          "replica",
          url,
          JSON.stringify(keys),
          String(seconds),
          "25",
        ],
        stdin: "piped",
        stdout: "piped",
        stderr: "inherit",
      }).spawn());
    // Each replica's lines: "ready" once warm, then its figures.
    const lines = children.map((child) => child.stdout.pipeThrough(new TextDecoderStream()).getReader());
    const texts = children.map(() => "");
    const readLine = async (i: number): Promise<string> => {
      for (;;) {
        const at = texts[i]!.indexOf("\n");
        if (at >= 0) {
          const line = texts[i]!.slice(0, at);
          texts[i] = texts[i]!.slice(at + 1);
          return line;
        }
        const next = await lines[i]!.read();
        if (next.done) throw new Error(`Replica ${i + 1} ended before it was ready.`);
        texts[i] += next.value;
      }
    };
    await Promise.all(children.map(async (_, i) => {
      while ((await readLine(i)) !== "ready");
    }));
    const readBefore = await rowsRead();
    const port = new URL(url).port;
    const ticksBefore = postgresTicks(port);
    const waits = new Map<string, number>();
    let samples = 0;
    let sampling = true;
    const writers = children.map((child) => child.stdin.getWriter());
    for (const writer of writers) await writer.write(new TextEncoder().encode("go\n"));
    const sampled = (async () => {
      while (sampling) {
        const rows = await sampler<{ wait: string | null; event: string | null; query: string }[]>`
          SELECT wait_event_type AS wait, wait_event AS event, left(query, 40) AS query FROM pg_stat_activity
          WHERE datname = 'sergo' AND state = 'active' AND pid <> pg_backend_pid()`;
        samples++;
        for (const row of rows) {
          const what = `${row.wait ?? "CPU"}:${row.event ?? "-"} ${row.query.replace(/\s+/g, " ").trim()}`;
          waits.set(what, (waits.get(what) ?? 0) + 1);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const figures = await Promise.all(children.map((_, i) => readLine(i)));
    sampling = false;
    await sampled;
    // Read while the replicas' sessions are still open (a session's ticks leave /proc with it).
    const postgresCpu = (postgresTicks(port) - ticksBefore) / 100;
    for (const writer of writers) await writer.close();
    const statuses = await Promise.all(children.map((child) => child.status));
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the statistics collector's delay
    const read = (await rowsRead()) - readBefore;
    const results = figures.map((line, i) => {
      if (!statuses[i]!.success) throw new Error(`Replica ${i + 1} failed.`);
      return JSON.parse(line) as {
        calls: number;
        cpu_s: number;
        main_cpu_s: number;
        v8_cpu_s: number;
        pulled: number;
        carried: number;
        pulls: number;
        commits: number;
        sleeps: number;
      };
    });
    const calls = results.reduce((sum, r) => sum + r.calls, 0);
    const cpu = results.reduce((sum, r) => sum + r.cpu_s, 0);
    const perCall = (n: number) => Math.round((n / calls) * 100) / 100;
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    return {
      replicas,
      keys: keyCount,
      calls_per_s: Math.round(calls / seconds),
      replica_cpu_ms_per_call: r3((cpu * 1000) / calls),
      replica_main_thread_ms_per_call: r3((results.reduce((sum, r) => sum + r.main_cpu_s, 0) * 1000) / calls),
      replica_v8_threads_ms_per_call: r3((results.reduce((sum, r) => sum + r.v8_cpu_s, 0) * 1000) / calls),
      postgres_cpu_ms_per_call: r3((postgresCpu * 1000) / calls),
      calls_per_replica_cpu_s: Math.round(calls / cpu),
      event_rows_read_per_call: perCall(read),
      rows_pulled_per_call: perCall(results.reduce((sum, r) => sum + r.pulled, 0)),
      rows_carried_per_call: perCall(results.reduce((sum, r) => sum + r.carried, 0)),
      commits_per_call: Math.round(results.reduce((sum, r) => sum + r.commits, 0) / calls * 1e4) / 1e4,
      pulls_per_call: r3(results.reduce((sum, r) => sum + r.pulls, 0) / calls),
      sleeps_per_call: r3(results.reduce((sum, r) => sum + r.sleeps, 0) / calls),
      waits: Object.fromEntries(
        [...waits].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([what, n]) => [what, r3(n / samples)]),
      ),
      load_average: Deno.loadavg()[0]!,
    };
  } finally {
    await sampler.end();
  }
}

/**
 * The control (`--apart`): single replicas on databases of their own at
 * once, which follow nothing and wait on no other's lock, taken together as
 * one run. What they lose against one replica alone is the machine's, not
 * the log's.
 */
function apart(runs: ReplicaRun[], seconds: number): ReplicaRun {
  const calls = runs.map((r) => r.calls_per_s * seconds);
  const total = calls.reduce((a, b) => a + b, 0);
  const mean = (f: (r: ReplicaRun) => number) =>
    Math.round((runs.reduce((sum, r, i) => sum + f(r) * calls[i]!, 0) / total) * 1e4) / 1e4;
  const cpuMs = mean((r) => r.replica_cpu_ms_per_call);
  return {
    ...runs[0]!,
    replicas: runs.length,
    calls_per_s: Math.round(total / seconds),
    replica_cpu_ms_per_call: cpuMs,
    replica_main_thread_ms_per_call: mean((r) => r.replica_main_thread_ms_per_call),
    replica_v8_threads_ms_per_call: mean((r) => r.replica_v8_threads_ms_per_call),
    postgres_cpu_ms_per_call: mean((r) => r.postgres_cpu_ms_per_call),
    calls_per_replica_cpu_s: Math.round(1000 / cpuMs),
    sleeps_per_call: mean((r) => r.sleeps_per_call),
    waits: {},
    load_average: Deno.loadavg()[0]!,
  };
}

/** Runs 1, 2 and 3 replicas with one key and with 50; returns the figures and summary rows. */
export async function benchReplicaCpu(
  opts: { quick: boolean; keys?: number[]; replicas?: number[]; apart?: boolean },
): Promise<Record<string, unknown>> {
  const seconds = opts.quick ? 4 : 10;
  const runs: ReplicaRun[] = [];
  for (const keys of opts.keys ?? [1, 50]) {
    for (const replicas of opts.replicas ?? [1, 2, 3]) {
      const figures = opts.apart && replicas > 1
        ? apart(await Promise.all(Array.from({ length: replicas }, () => run(1, keys, seconds))), seconds)
        : await run(replicas, keys, seconds);
      console.log(JSON.stringify(figures));
      runs.push(figures);
    }
  }
  const rows: SummaryRow[] = [];
  for (const keys of opts.keys ?? [1, 50]) {
    const one = runs.find((r) => r.keys === keys && r.replicas === 1);
    if (!one) continue;
    for (const r of runs.filter((r) => r.keys === keys && r.replicas > 1)) {
      rows.push({
        figure: `${r.replicas} replicas ÷ 1, audited calls per replica CPU second, ${
          keys === 1 ? "one hot key" : `${keys} keys`
        }`,
        sergo: `${r.calls_per_replica_cpu_s}/s (${r.replica_cpu_ms_per_call} ms a call)`,
        baseline: `${one.calls_per_replica_cpu_s}/s (${one.replica_cpu_ms_per_call} ms a call)`,
        ratio: Math.round((r.calls_per_replica_cpu_s / one.calls_per_replica_cpu_s) * 1000) / 1000,
        budget: "reported",
        pass: null,
        note:
          `main thread ${r.replica_main_thread_ms_per_call} ms and V8's threads ${r.replica_v8_threads_ms_per_call} ms a call (1 replica: ${one.replica_main_thread_ms_per_call} and ${one.replica_v8_threads_ms_per_call}); event rows read back per call ${r.event_rows_read_per_call} (1 replica: ${one.event_rows_read_per_call}), other replicas' rows pulled ${r.rows_pulled_per_call} and carried ${r.rows_carried_per_call} per call; load ${
            r.load_average.toFixed(1)
          }`,
      });
    }
  }
  return { runs, rows };
}

if (import.meta.main) {
  if (Deno.args[0] === "replica") {
    const [, url, keys, seconds, inFlight] = Deno.args;
    await replica(url!, JSON.parse(keys!), Number(seconds), Number(inFlight));
    Deno.exit(0);
  }
  // `--keys=1 --replicas=1,2`: only those runs (to repeat one comparison more often in the same time).
  const list = (name: string) => {
    const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
    return arg ? arg.slice(name.length + 3).split(",").map(Number) : undefined;
  };
  const result = await benchReplicaCpu({
    quick: Deno.args.includes("--quick"),
    keys: list("keys"),
    replicas: list("replicas"),
    apart: Deno.args.includes("--apart"),
  });
  console.log(JSON.stringify(result.rows, null, 2));
}
