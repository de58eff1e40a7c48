/**
 * The PostgreSQL figures measured through real `serve` processes, for
 * bench/postgres.ts: audited `list_documents` calls/s (wrk) through one
 * replica on PostgreSQL beside one embedded `serve` on SQLite, and through two
 * replicas behind HAProxy with where the machine's CPU went; the cost of the
 * shared rate limit per call beside the in-process one. (A replica's start-up
 * with current read models is measured by bench/replica_startup.ts.)
 *
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import { type Replicas, startReplicas } from "./cluster.ts";
import { cpuDuring } from "./_cpu.ts";
import { type LoadFigures, wrk } from "./protocol.ts";
import { startAndWaitHealthy, stop, taskEnv, taskFlags } from "./startup.ts";
import { round } from "./_table.ts";
import { openSharedRateLimiter } from "../src/mcp/shared_rate_limit.ts";
import { RateLimiter } from "../src/mcp/rate_limit.ts";
import { CORPUS_DIR } from "../test/helpers/corpus.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** No rate limit in the way: the load is one key's. */
const UNLIMITED = { SERGO_RATE_LIMIT: "1000000", SERGO_RATE_BURST: "1000000" };

const LIST_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_documents", arguments: {} },
});

async function sergo(dataDir: string, args: string[], env: Record<string, string>): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...await taskFlags("sergo"), "main.ts", ...args, "--data", dataDir],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`sergo ${args.slice(0, 2).join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout);
}

/** A person, a folder with two decks (read by the CLI), and a key on it; returns the key's value. */
async function install(dataDir: string, env: Record<string, string>): Promise<string> {
  await sergo(dataDir, ["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com"], env);
  await sergo(dataDir, ["folder", "add", "--person", "ava@example.com", "Decks"], env);
  await sergo(dataDir, [
    "upload",
    "--person",
    "ava@example.com",
    "--folder",
    "Decks",
    "--preset",
    "basic",
    `${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`,
    `${CORPUS_DIR}/pptx/apache-performance-tuning-notes.pptx`,
  ], env);
  const out = await sergo(
    dataDir,
    ["key", "add", "--person", "ava@example.com", "--name", "bench", "--read", "Decks"],
    env,
  );
  return out.trim().split("\n").at(-1)!.trim();
}

/** How many of `types` the log holds: the shared one (a URL) or an embedded data directory's `events.db`. */
async function countEvents(log: string, types: string[]): Promise<number> {
  if (log.startsWith("postgres")) {
    const sql = postgres(log, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<
        { n: string }[]
      >`SELECT count(*) AS n FROM sergo_events WHERE type = ANY(${types})`;
      return Number(row!.n);
    } finally {
      await sql.end();
    }
  }
  const db = new DatabaseSync(join(log, "events.db"), { readOnly: true });
  try {
    const row = db.prepare(
      `SELECT count(*) AS n FROM events WHERE type IN (${types.map(() => "?").join(",")})`,
    )
      .get(...types) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

/**
 * Waits (at most 3 minutes) until the install's two decks have their PDF copies: the serve that starts first
 * makes them, with LibreOffice, in its first seconds; measured then, that side would be timed under that load.
 */
async function copiesMade(log: string): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until && await countEvents(log, ["PdfCopyMade", "PdfCopyFailed"]) < 2) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Audited McpCalled events in the shared log. */
async function auditedInDatabase(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM sergo_events WHERE type = 'McpCalled'`;
    return Number(row!.n);
  } finally {
    await sql.end();
  }
}

/**
 * Which process a CPU tick belongs to: a replica (by its data directory), HAProxy, the cluster's PostgreSQL,
 * or the embedded serve. (wrk has ended when the ticks are read, so its time is in "others".)
 */
function classifier(cluster: Replicas, pgPort: string, embeddedDir: string) {
  const work = cluster.replicas[0]!.dataDir.replace(/\/[^/]+$/, "");
  return (process: { cmdline: string }, parent: string | null): string | null => {
    for (const replica of cluster.replicas) {
      if (process.cmdline.includes(replica.dataDir)) return `replica_${replica.index}`;
    }
    if (process.cmdline.includes(embeddedDir)) return "embedded";
    if (process.cmdline.includes("haproxy") && process.cmdline.includes(work)) return "haproxy";
    if (process.cmdline.includes(`-p ${pgPort} `)) return "postgres";
    if (parent === "postgres") return "postgres";
    return null;
  };
}

/** CPU seconds by group, summed over runs. */
function addCpu(sum: Record<string, number>, cpu: Record<string, number>): void {
  for (const [group, seconds] of Object.entries(cpu)) sum[group] = round2((sum[group] ?? 0) + seconds);
}

/** Figures of the serving part. */
export interface ServingFigures {
  sqlite_one_serve: LoadFigures;
  /** The embedded runs that alternated with the two replicas' (the baseline of that ratio). */
  sqlite_beside_two_replicas: LoadFigures;
  postgres_one_replica: LoadFigures;
  postgres_two_replicas_haproxy: LoadFigures;
  ratio_one_replica: number;
  ratio_two_replicas: number;
  cpu_seconds_two_replicas: Record<string, number>;
  /** CPU seconds by group over the one-replica runs and, apart, over the embedded runs alternating with them. */
  cpu_seconds_one_replica: Record<string, number>;
  cpu_seconds_embedded: Record<string, number>;
  /** CPU ms per answered call: embedded serve; one replica plus the PostgreSQL processes. */
  cpu_ms_per_call: { embedded: number; replica: number; postgres: number };
  /** The 1-minute load average after each run (all kinds), min, median and max. */
  load_average: { min: number; median: number; max: number; runs: number[] };
  audited_one_per_answer: boolean;
  load: { seconds: number; connections: number; rounds: number; calls_per_s: Record<string, number[]> };
}

/** Audited list_documents through serve: SQLite, one PostgreSQL replica, two behind HAProxy. */
export async function benchServing(
  opts: { quick: boolean; database: (name: string) => Promise<string> },
): Promise<ServingFigures> {
  const load = opts.quick ? { seconds: 3, connections: 20 } : { seconds: 5, connections: 50 };
  // The budgeted ratio gets more rounds: on a shared machine its median needs them.
  const rounds = opts.quick ? 1 : 5;
  const twoRounds = opts.quick ? 1 : 3;
  const dir = await Deno.makeTempDir({ prefix: "sergo-bench-serve-" });
  let embedded: Awaited<ReturnType<typeof startAndWaitHealthy>> | null = null;
  try {
    // Embedded: one serve on SQLite, as people run it; it stays up, measured in turn with the replicas.
    const sqliteDir = join(dir, "sqlite");
    const sqliteKey = await install(sqliteDir, {});
    const serveEnv = { ...(await taskEnv("serve")), ...UNLIMITED };
    embedded = await startAndWaitHealthy(
      ["run", ...await taskFlags("serve"), "main.ts", "serve", "--data", sqliteDir, "--port", "0"],
      serveEnv,
    );
    const embeddedUrl = `${embedded.url}/mcp`;
    const embeddedRun = () => wrk(embeddedUrl, LIST_BODY, { Authorization: `Bearer ${sqliteKey}` }, load);

    // PostgreSQL: the same install through the CLI, then one replica (straight to it), then two behind HAProxy,
    // each in rounds alternating with the embedded serve (a shared machine's load comes and goes).
    const url = await opts.database("bench_serve");
    const pgPort = new URL(url).port;
    const pgKey = await install(join(dir, "cli"), { SERGO_DATABASE_URL: url });
    const headers = { Authorization: `Bearer ${pgKey}` };
    const sqliteRuns: LoadFigures[] = [];
    const oneRuns: LoadFigures[] = [];
    const twoRuns: LoadFigures[] = [];
    const cpu: Record<string, number> = {};
    const cpuOne: Record<string, number> = {};
    const cpuEmbedded: Record<string, number> = {};
    const loads: number[] = [];
    let answered = 0;
    const auditedBefore = await auditedInDatabase(url);
    {
      const cluster = await startReplicas({ databaseUrl: url, count: 1, env: UNLIMITED });
      // Both in their steady state: the decks' PDF copies made (each side's serve makes its own).
      await copiesMade(sqliteDir);
      await copiesMade(url);
      const classify = classifier(cluster, pgPort, sqliteDir);
      const measureEmbedded = async () => {
        const measured = await cpuDuring(classify, embeddedRun);
        sqliteRuns.push(measured.result);
        addCpu(cpuEmbedded, measured.cpu);
        loads.push(Deno.loadavg()[0]!);
      };
      const measureOne = async () => {
        const measured = await cpuDuring(
          classify,
          () => wrk(`${cluster.replicas[0]!.url}/mcp`, LIST_BODY, headers, load),
        );
        oneRuns.push(measured.result);
        addCpu(cpuOne, measured.cpu);
        loads.push(Deno.loadavg()[0]!);
      };
      try {
        // Alternating which goes first, so a load that comes and goes weighs on both alike.
        for (let round = 0; round < rounds; round++) {
          for (
            const measure of round % 2 === 0 ? [measureEmbedded, measureOne] : [measureOne, measureEmbedded]
          ) {
            await measure();
          }
        }
      } finally {
        await cluster.stop();
      }
    }
    {
      const cluster = await startReplicas({ databaseUrl: url, count: 2, env: UNLIMITED });
      try {
        for (let round = 0; round < twoRounds; round++) {
          sqliteRuns.push(await embeddedRun());
          const measured = await cpuDuring(
            classifier(cluster, pgPort, sqliteDir),
            () => wrk(`${cluster.url}/mcp`, LIST_BODY, headers, load),
          );
          twoRuns.push(measured.result);
          addCpu(cpu, measured.cpu);
          loads.push(Deno.loadavg()[0]!);
        }
      } finally {
        await cluster.stop();
      }
    }
    for (const run of [...oneRuns, ...twoRuns]) answered += run.requests - run.errors;
    const auditedOk = (await auditedInDatabase(url)) - auditedBefore >= answered;
    // The baseline of each ratio is the embedded runs alternating with it.
    const sqlite = medianRun(sqliteRuns.slice(0, rounds));
    const sqliteBesideTwo = medianRun(sqliteRuns.slice(rounds));
    const one = medianRun(oneRuns);
    const two = medianRun(twoRuns);
    const calls = (runs: LoadFigures[]) => runs.reduce((sum, run) => sum + run.requests - run.errors, 0);
    const perCall = (seconds: number | undefined, runs: LoadFigures[]) =>
      round(((seconds ?? 0) / Math.max(1, calls(runs))) * 1000, 3);
    const sortedLoads = [...loads].sort((a, b) => a - b);
    return {
      sqlite_one_serve: sqlite,
      sqlite_beside_two_replicas: sqliteBesideTwo,
      postgres_one_replica: one,
      postgres_two_replicas_haproxy: two,
      ratio_one_replica: round(one.calls_per_s / sqlite.calls_per_s, 3),
      ratio_two_replicas: round(two.calls_per_s / sqliteBesideTwo.calls_per_s, 3),
      cpu_seconds_two_replicas: cpu,
      cpu_seconds_one_replica: cpuOne,
      cpu_seconds_embedded: cpuEmbedded,
      cpu_ms_per_call: {
        embedded: perCall(cpuEmbedded.embedded, sqliteRuns.slice(0, rounds)),
        replica: perCall(cpuOne.replica_1, oneRuns),
        postgres: perCall(cpuOne.postgres, oneRuns),
      },
      load_average: {
        min: round(sortedLoads[0] ?? 0, 2),
        median: round(sortedLoads[Math.floor((sortedLoads.length - 1) / 2)] ?? 0, 2),
        max: round(sortedLoads.at(-1) ?? 0, 2),
        runs: loads.map((value) => round(value, 2)),
      },
      audited_one_per_answer: auditedOk,
      load: {
        ...load,
        rounds,
        calls_per_s: {
          sqlite: sqliteRuns.slice(0, rounds).map((r) => r.calls_per_s),
          sqlite_beside_two_replicas: sqliteRuns.slice(rounds).map((r) => r.calls_per_s),
          one_replica: oneRuns.map((r) => r.calls_per_s),
          two_replicas: twoRuns.map((r) => r.calls_per_s),
        },
      },
    };
  } finally {
    if (embedded) await stop(embedded.child);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The run whose calls/s is the median. */
function medianRun(runs: LoadFigures[]): LoadFigures {
  const sorted = [...runs].sort((a, b) => a.calls_per_s - b.calls_per_s);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The shared rate limit's cost per call: one statement in PostgreSQL, beside the in-process bucket. */
export async function benchSharedRateLimit(
  opts: { quick: boolean; database: (name: string) => Promise<string> },
): Promise<{
  shared_us_per_call: number;
  shared_calls_per_s_16_in_flight: number;
  select_1_us: number;
  in_process_us_per_call: number;
}> {
  const calls = opts.quick ? 1000 : 5000;
  const url = await opts.database("bench_rate");
  const limiter = await openSharedRateLimiter(url, { perSecond: 1_000_000, burst: 1_000_000 });
  const bare = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await limiter.take("warm-up");
    // The floor: a round trip that does nothing.
    let started = performance.now();
    for (let i = 0; i < calls; i++) await bare`SELECT 1`;
    const selectUs = ((performance.now() - started) / calls) * 1000;
    started = performance.now();
    for (let i = 0; i < calls; i++) await limiter.take("key-1");
    const sequential = (performance.now() - started) / calls;
    started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next++ < calls) await limiter.take("key-1");
    }));
    const parallelPerS = calls / ((performance.now() - started) / 1000);
    const local = new RateLimiter(1_000_000, 1_000_000);
    started = performance.now();
    for (let i = 0; i < calls * 100; i++) local.take("key-1", Date.now());
    const localUs = ((performance.now() - started) / (calls * 100)) * 1000;
    return {
      shared_us_per_call: round(sequential * 1000, 0),
      shared_calls_per_s_16_in_flight: round(parallelPerS, 0),
      select_1_us: round(selectUs, 0),
      in_process_us_per_call: round(localUs, 3),
    };
  } finally {
    await limiter.close();
    await bare.end();
  }
}
