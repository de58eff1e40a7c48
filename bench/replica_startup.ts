/**
 * A PostgreSQL replica's start-up when its read models are current, at the
 * replay data set's size (100,000 pages; 10,000 with --quick), beside the
 * embedded `serve` on the same data in the same run.
 *
 * The embedded data set (events.db and its projections, from replay.ts) is
 * moved into a throwaway PostgreSQL (fsync on) with `sergo migrate --to`,
 * as a user would; the replica's data directory gets the same projections
 * (the positions and hashes are the same, so they are current). Its first
 * start copies the log into its local copy (`log-cache.db`) — reported, not
 * budgeted; every later start is the figure: `deno task serve` with
 * `SERGO_DATABASE_URL` from spawn to a good `/healthz` and the "ready in"
 * serve prints, median of 3 (5 in the full run), alternated with the embedded
 * start on the same projections.
 *
 * @module
 */
import postgres from "postgres";
import { ensureReplayedData } from "./replay.ts";
import { startAndWaitHealthy, stop, taskEnv, taskFlags } from "./startup.ts";
import { percentile, printRow, ratioRow, round, type SummaryRow } from "./_table.ts";
import { startThrowawayCluster } from "../test/helpers/postgres.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Copies the named files of `source` that exist into `target`. */
async function copyFiles(source: string, target: string, names: string[]): Promise<void> {
  await Deno.mkdir(target, { recursive: true });
  for (const name of names) {
    await Deno.copyFile(`${source}/${name}`, `${target}/${name}`).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
}

/** What `serve` printed as its own start-up time. */
function readyMs(output: string): number | null {
  const match = output.match(/\(ready in (\d+) ms\)/);
  return match ? Number(match[1]) : null;
}

/** Runs the benchmark. */
export async function benchReplicaStartup(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const data = await ensureReplayedData(opts.quick);
  const runs = opts.quick ? 3 : 5;
  const work = await Deno.makeTempDir({ prefix: "sergo-bench-replica-" });
  const given = Deno.env.get("SERGO_BENCH_DATABASE_URL");
  const cluster = given ? null : await startThrowawayCluster({ fsync: true });
  try {
    let url = given!;
    if (cluster) {
      const admin = postgres(cluster.adminUrl, { max: 1, onnotice: () => {} });
      await admin`CREATE DATABASE bench_replica`;
      await admin.end();
      url = cluster.adminUrl.replace(/\/postgres$/, "/bench_replica");
    }
    const embedded = `${work}/embedded`;
    await copyFiles(data.dir, embedded, [
      "events.db",
      "events.db-wal",
      "projections.db",
      "projections.db-wal",
    ]);
    const sergoFlags = await taskFlags("sergo");
    const migrateStarted = performance.now();
    const migrated = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...sergoFlags, "main.ts", "migrate", "--to", url, "--data", embedded],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!migrated.success) {
      throw new Error(`sergo migrate failed: ${new TextDecoder().decode(migrated.stderr).trim()}`);
    }
    const migrateMs = performance.now() - migrateStarted;
    const replica = `${work}/replica`;
    await copyFiles(data.dir, replica, ["projections.db", "projections.db-wal"]);

    const env = await taskEnv("serve");
    const serveFlags = await taskFlags("serve");
    const serve = (dir: string) => ["run", ...serveFlags, "main.ts", "serve", "--data", dir, "--port", "0"];
    const replicaEnv = { ...env, SERGO_DATABASE_URL: url };

    const first = await startAndWaitHealthy(serve(replica), replicaEnv);
    const firstMs = first.healthyMs;
    const firstRebuilt = /rebuilding projections/i.test(first.output);
    await stop(first.child);

    const replicaMs: number[] = [];
    const replicaReady: number[] = [];
    const embeddedMs: number[] = [];
    const embeddedReady: number[] = [];
    let rebuilt = false;
    for (let run = 0; run < runs; run++) {
      const local = await startAndWaitHealthy(serve(embedded), env);
      embeddedMs.push(local.healthyMs);
      embeddedReady.push(readyMs(local.output) ?? NaN);
      await stop(local.child);
      const shared = await startAndWaitHealthy(serve(replica), replicaEnv);
      replicaMs.push(shared.healthyMs);
      replicaReady.push(readyMs(shared.output) ?? NaN);
      if (/rebuilding projections/i.test(shared.output)) rebuilt = true;
      await stop(shared.child);
    }
    const median = (values: number[]) => round(percentile(values, 0.5), 0);
    const result = {
      pages: data.pages,
      events: data.events,
      runs,
      migrate_ms: round(migrateMs, 0),
      first_start_healthz_ms: round(firstMs, 0),
      first_start_rebuilt_projections: firstRebuilt,
      replica_healthz_ms: { median: median(replicaMs), all: replicaMs.map((ms) => round(ms, 0)) },
      replica_ready_ms: { median: median(replicaReady), all: replicaReady },
      embedded_healthz_ms: { median: median(embeddedMs), all: embeddedMs.map((ms) => round(ms, 0)) },
      embedded_ready_ms: { median: median(embeddedReady), all: embeddedReady },
      replica_rebuilt_projections: rebuilt,
      fsync: given ? "as the server is set" : "on",
    };
    const rows: SummaryRow[] = [
      ratioRow({
        figure: `PostgreSQL replica start-up to good /healthz, read models current (${data.pages} pages)`,
        sergo:
          `${result.replica_healthz_ms.median} ms (serve: ready in ${result.replica_ready_ms.median} ms)`,
        baseline:
          `${result.embedded_healthz_ms.median} ms embedded (ready in ${result.embedded_ready_ms.median} ms)`,
        ratio: round(result.replica_healthz_ms.median / result.embedded_healthz_ms.median, 2),
        value: result.replica_healthz_ms.median,
        budget: { op: "<=", value: 1000, unit: "ms" },
        note: `${rebuilt ? "PROJECTIONS WERE REBUILT; " : ""}a new replica's first start (the log copied ` +
          `into log-cache.db, projections given) took ${result.first_start_healthz_ms} ms; ` +
          `migrate of ${data.events} events ${result.migrate_ms} ms`,
      }),
    ];
    for (const row of rows) printRow(row);
    return { ...result, rows };
  } finally {
    await cluster?.[Symbol.asyncDispose]();
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchReplicaStartup({ quick: Deno.args.includes("--quick") }), null, 2));
}
