/**
 * The PostgreSQL log beside the SQLite log, in the same run: appends/s from
 * one writer (one replica's store) and from four (four stores on one
 * database, as four replicas), each with 16 appends in flight, against the
 * SQLite store (the writer thread, as `serve` runs it) under the same load
 * from one writer; and how long another replica takes to see each event
 * (projection lag, p50/p99) while the four write; each of those with one
 * statement per group commit and with the client-side transaction it
 * replaced, in alternating rounds (medians). Then, through real `serve`
 * processes (bench/_pg_serving.ts): audited `list_documents` calls/s through
 * one replica on PostgreSQL beside one embedded `serve`, through two replicas
 * behind HAProxy with where the CPU went, and the shared rate limit's cost
 * per call. PostgreSQL runs in a throwaway cluster with fsync on (SQLite
 * commits with synchronous=FULL), or at `SERGO_BENCH_DATABASE_URL`.
 *
 * @module
 */
import { join } from "node:path";
import { openPostgresStore } from "../events/postgres/store.ts";
import { openSqliteStore } from "../events/sqlite_store.ts";
import type { EventStore } from "../events/store.ts";
import type { SergoEvent } from "../events/types.ts";
import { startThrowawayCluster } from "../test/helpers/postgres.ts";
import { percentile, printRow, ratioRow, round } from "./_table.ts";
import { benchServing, benchSharedRateLimit } from "./_pg_serving.ts";
import postgres from "postgres";

const IN_FLIGHT = 16;

function event(i: number): SergoEvent {
  return {
    type: "PersonAdded",
    data: { person_id: `p${i}`, name: `Person ${i}`, email: `p${i}@example.com` },
    metadata: { time: new Date().toISOString(), actor: "bench" },
  };
}

/** Appends for `ms` from every store at once, `IN_FLIGHT` appends in flight per store; returns appends/s. */
async function load(stores: EventStore[], ms: number): Promise<number> {
  const until = performance.now() + ms;
  let count = 0;
  const started = performance.now();
  await Promise.all(stores.flatMap((store, s) =>
    Array.from({ length: IN_FLIGHT }, async (_, a) => {
      for (let i = 0; performance.now() < until; i++) {
        await store.append(`bench-${s}-${a}`, [event(i)]);
        count++;
      }
    })
  ));
  return count / ((performance.now() - started) / 1000);
}

/** Runs the benchmark; `quick` measures one round of 3 s per figure instead of three of 5 s (medians). */
export async function benchPostgres(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const ms = opts.quick ? 3000 : 5000;
  const rounds = opts.quick ? 1 : 3;
  const given = Deno.env.get("SERGO_BENCH_DATABASE_URL");
  const cluster = given ? null : await startThrowawayCluster({ fsync: true });
  const dir = await Deno.makeTempDir({ prefix: "sergo-bench-pg-" });
  try {
    const database = async (name: string) => {
      if (given) return given;
      const admin = postgres(cluster!.adminUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`CREATE DATABASE ${name}`);
      await admin.end();
      return cluster!.adminUrl.replace(/\/postgres$/, `/${name}`);
    };

    /** One writer's store, and four writers' with another replica following, all appending one way. */
    const open = async (appendBy: "statement" | "transaction") => {
      const oneUrl = await database(`bench_one_${appendBy}`);
      const one = await openPostgresStore(oneUrl, { cachePath: join(dir, `one-${appendBy}.db`), appendBy });
      const fourUrl = await database(`bench_four_${appendBy}`);
      const writers = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          openPostgresStore(fourUrl, { cachePath: join(dir, `w${i}-${appendBy}.db`), appendBy })
        ),
      );
      const follower = await openPostgresStore(fourUrl, { cachePath: join(dir, `follower-${appendBy}.db`) });
      const lags: number[] = [];
      follower.subscribe((events) => {
        const now = Date.now();
        for (const e of events) lags.push(now - Date.parse(e.metadata.time));
      });
      return { one, writers, follower, lags, onePerS: [] as number[], fourPerS: [] as number[] };
    };
    const sqlite = openSqliteStore(join(dir, "events.db"), { writer: "thread" });
    const modes = { transaction: await open("transaction"), statement: await open("statement") };
    const sqliteRuns: number[] = [];
    // Rounds alternate the order, so a load that comes and goes on a shared machine hits both ways alike.
    for (let round = 0; round < rounds; round++) {
      sqliteRuns.push(await load([sqlite], ms));
      const order = round % 2 === 0
        ? [modes.transaction, modes.statement]
        : [modes.statement, modes.transaction];
      for (const mode of order) mode.onePerS.push(await load([mode.one], ms));
      for (const mode of order) mode.fourPerS.push(await load(mode.writers, ms));
    }
    await sqlite.close();
    const verdicts = [];
    for (const mode of Object.values(modes)) {
      await mode.one.close();
      await Promise.all(mode.writers.map((w) => w.close()));
      await mode.follower.sync();
      verdicts.push(await mode.follower.verify());
      await mode.follower.close();
    }
    const median = (values: number[]) => percentile(values, 0.5);
    const sqlitePerS = median(sqliteRuns);
    const before = {
      onePerS: median(modes.transaction.onePerS),
      fourPerS: median(modes.transaction.fourPerS),
      lags: modes.transaction.lags,
    };
    const onePerS = median(modes.statement.onePerS);
    const fourPerS = median(modes.statement.fourPerS);
    const lags = modes.statement.lags;
    const verdict = verdicts.find((v) => !v.ok) ?? verdicts[0]!;

    const serving = await benchServing({ quick: opts.quick, database });
    const rate = await benchSharedRateLimit({ quick: opts.quick, database });

    const result = {
      seconds_per_figure: ms / 1000,
      rounds,
      runs: {
        sqlite: sqliteRuns.map((v) => round(v, 0)),
        statement_1: modes.statement.onePerS.map((v) => round(v, 0)),
        transaction_1: modes.transaction.onePerS.map((v) => round(v, 0)),
        statement_4: modes.statement.fourPerS.map((v) => round(v, 0)),
        transaction_4: modes.transaction.fourPerS.map((v) => round(v, 0)),
      },
      in_flight_per_writer: IN_FLIGHT,
      sqlite_appends_per_s: round(sqlitePerS, 0),
      postgres_1_writer_appends_per_s: round(onePerS, 0),
      postgres_4_writers_appends_per_s: round(fourPerS, 0),
      ratio_1_writer: round(onePerS / sqlitePerS, 3),
      ratio_4_writers: round(fourPerS / sqlitePerS, 3),
      transaction_1_writer_appends_per_s: round(before.onePerS, 0),
      transaction_4_writers_appends_per_s: round(before.fourPerS, 0),
      statement_gain_1_writer: round(onePerS / before.onePerS, 2),
      statement_gain_4_writers: round(fourPerS / before.fourPerS, 2),
      transaction_lag_ms_p50: percentile(before.lags, 0.5),
      transaction_lag_ms_p99: percentile(before.lags, 0.99),
      lag_ms_p50: percentile(lags, 0.5),
      lag_ms_p99: percentile(lags, 0.99),
      lag_events: lags.length,
      chain_verifies: verdict.ok,
      fsync: given ? "as the server is set" : "on",
      serving,
      shared_rate_limit: rate,
    };
    const cpu = serving.cpu_seconds_two_replicas;
    const share = (group: string) => `${Math.round(((cpu[group] ?? 0) / cpu.machine_busy!) * 100)}%`;

    const rows = [
      ratioRow({
        figure: "PostgreSQL log appends/s, 1 writer ÷ SQLite log",
        sergo: `${result.postgres_1_writer_appends_per_s}/s`,
        baseline: `${result.sqlite_appends_per_s}/s`,
        ratio: result.ratio_1_writer,
        budget: null,
      }),
      ratioRow({
        figure: "PostgreSQL log appends/s, 4 writers ÷ SQLite log (1)",
        sergo: `${result.postgres_4_writers_appends_per_s}/s`,
        baseline: `${result.sqlite_appends_per_s}/s`,
        ratio: result.ratio_4_writers,
        budget: null,
        note:
          `another replica saw each event after p50 ${result.lag_ms_p50} ms, p99 ${result.lag_ms_p99} ms` +
          (verdict.ok ? "" : "; THE CHAIN DID NOT VERIFY"),
      }),
      ratioRow({
        figure: "PostgreSQL appends/s, 1 writer: one statement ÷ client-side transaction",
        sergo: `${result.postgres_1_writer_appends_per_s}/s`,
        baseline: `${result.transaction_1_writer_appends_per_s}/s`,
        ratio: result.statement_gain_1_writer,
        budget: null,
      }),
      ratioRow({
        figure: "PostgreSQL appends/s, 4 writers: one statement ÷ client-side transaction",
        sergo: `${result.postgres_4_writers_appends_per_s}/s`,
        baseline: `${result.transaction_4_writers_appends_per_s}/s`,
        ratio: result.statement_gain_4_writers,
        budget: null,
        note:
          `lag with the transaction: p50 ${result.transaction_lag_ms_p50} ms, p99 ${result.transaction_lag_ms_p99} ms` +
          (verdict.ok ? "" : "; THE CHAIN DID NOT VERIFY"),
      }),
      ratioRow({
        figure: "audited list_documents calls/s, 1 PostgreSQL replica ÷ 1 embedded serve (SQLite)",
        sergo: `${round(serving.postgres_one_replica.calls_per_s, 0)}/s`,
        baseline: `${round(serving.sqlite_one_serve.calls_per_s, 0)}/s`,
        ratio: serving.ratio_one_replica,
        budget: { op: ">=", value: 0.5 },
        note: `p50 ${serving.postgres_one_replica.p50_ms} ms vs ${serving.sqlite_one_serve.p50_ms} ms; ` +
          `CPU per call ${serving.cpu_ms_per_call.replica} ms replica + ${serving.cpu_ms_per_call.postgres} ms ` +
          `PostgreSQL vs ${serving.cpu_ms_per_call.embedded} ms embedded; median of ${serving.load.rounds} ` +
          `alternating rounds at load ${serving.load_average.min}–${serving.load_average.max}; ` +
          `shared rate limit and audit in PostgreSQL` +
          (serving.audited_one_per_answer ? "" : "; FEWER AUDIT EVENTS THAN ANSWERS"),
      }),
      ratioRow({
        figure: "audited list_documents calls/s, 2 PostgreSQL replicas behind HAProxy ÷ 1 embedded serve",
        sergo: `${round(serving.postgres_two_replicas_haproxy.calls_per_s, 0)}/s`,
        baseline: `${round(serving.sqlite_beside_two_replicas.calls_per_s, 0)}/s`,
        ratio: serving.ratio_two_replicas,
        budget: null,
        note: `${cpu.machine_busy} of ${cpu.core_seconds_available} core-seconds busy: replicas ${
          share("replica_1")
        } + ${share("replica_2")}, PostgreSQL ${share("postgres")}, HAProxy ${
          share("haproxy")
        }, wrk and others ${share("others")}`,
      }),
      ratioRow({
        figure: "shared rate limit, µs per call (one statement) ÷ in-process bucket",
        sergo: `${rate.shared_us_per_call} µs (${rate.shared_calls_per_s_16_in_flight}/s with 16 in flight)`,
        baseline: `${rate.in_process_us_per_call} µs`,
        ratio: round(rate.shared_us_per_call / rate.in_process_us_per_call, 0),
        budget: null,
        note: `a bare SELECT 1 round trip: ${rate.select_1_us} µs`,
      }),
    ];
    for (const row of rows) printRow(row);
    return { ...result, rows };
  } finally {
    await cluster?.[Symbol.asyncDispose]();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchPostgres({ quick: Deno.args.includes("--quick") })));
}
