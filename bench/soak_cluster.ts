/**
 * The cluster soak: two real `serve` replicas on a throwaway PostgreSQL behind
 * HAProxy (bench/cluster.ts), with normal traffic through the balancer —
 * audited MCP searches, an upload and a deletion every two seconds — run
 * twice: clean, then with hostile clients mixed in and one PostgreSQL restart
 * (`pg_ctl stop -m immediate`, 5 s, start) in the middle. The hostile clients:
 * an SSE client that reads its endpoint event and then never reads again while
 * it posts calls to its session, bodies past the size limit, a body that
 * trickles in a byte at a time, and bad OAuth requests (an implicit-grant
 * authorize to an unregistered client, a token request with a made-up code, a
 * registration with a `javascript:` redirect).
 *
 * Each run reports each replica's RSS over time (warm-up: the first fifth of
 * the run, at most a minute; budget: the end ≤ 1.2 × the warm-up's peak),
 * the searches answered and how many of them are audited exactly once (budget:
 * all; none audited twice), the replicas that exited (budget: none), 5xx
 * answers other than the outage's 503 (budget: none), and whether `sergo log
 * verify` passes. The clean run is the baseline of the same invocation.
 *
 * Length: 10 minutes a run, 60 s with `--quick`; `SOAK_CLUSTER_SECONDS` sets it.
 *
 * ```sh
 * SOAK_CLUSTER_SECONDS=60 deno run -A bench/soak_cluster.ts
 * deno task bench --only soak_cluster --quick
 * ```
 *
 * @module
 */
import postgres from "postgres";
import { createSergoDatabase, startThrowawayCluster } from "../test/helpers/postgres.ts";
import { type Replicas, startReplicas } from "./cluster.ts";
import { ratioRow, round, type SummaryRow } from "./_table.ts";
import { memoryOf } from "./startup.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Searches a second the normal load aims at, across its callers. */
const TARGET_CALLS_PER_S = 30;
const CALLERS = 4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one run measured. */
interface RunResult {
  seconds: number;
  hostile: boolean;
  searches: {
    sent: number;
    answered: number;
    unavailable: number;
    audited_once: number;
    audited_twice: number;
  };
  /** What the searches answered 503 said (a replica's sentence, or HAProxy's page when both were down). */
  unavailable_samples: string[];
  other_5xx: string[];
  replicas_exited: number[];
  log_verify: string;
  rss_mb: { index: number; warmup_peak: number; end: number; ratio: number; samples: [number, number][] }[];
  hostile_counts: Record<string, Record<string, number>>;
  uploads: { accepted: number; unavailable: number };
  restart_s: number | null;
}

async function cli(dataDir: string, databaseUrl: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, ...args, "--data", dataDir],
    env: { SERGO_DATABASE_URL: databaseUrl, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`sergo ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return stdout.trim().split("\n").pop()!;
}

/** Counts one answer's status under a hostile client's name. */
function tally(counts: Record<string, Record<string, number>>, name: string, status: number | string): void {
  const of = counts[name] ??= {};
  of[String(status)] = (of[String(status)] ?? 0) + 1;
}

/** A POST whose body arrives a byte every 200 ms, on a raw connection, for `ms`; resolves with the status line. */
async function tricklingPost(host: string, port: number, key: string, ms: number): Promise<string> {
  const connection = await Deno.connect({ hostname: host, port });
  const encoder = new TextEncoder();
  try {
    await connection.write(encoder.encode(
      `POST /mcp HTTP/1.1\r\nHost: ${host}:${port}\r\nauthorization: Bearer ${key}\r\n` +
        `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
        `content-length: 100000\r\nconnection: close\r\n\r\n{`,
    ));
    const until = Date.now() + ms;
    const answer = (async () => {
      const buffer = new Uint8Array(256);
      const n = await connection.read(buffer).catch(() => null);
      return n ? new TextDecoder().decode(buffer.subarray(0, n)).split("\r\n")[0]! : "closed";
    })();
    let done = false;
    answer.then(() => done = true);
    while (!done && Date.now() < until) {
      await connection.write(encoder.encode(" ")).catch(() => done = true);
      await sleep(200);
    }
    return await Promise.race([answer, sleep(2000).then(() => "no answer")]);
  } finally {
    try {
      connection.close();
    } catch { /* closed by the server */ }
  }
}

/** One run of the soak; see the module documentation. */
async function runOnce(seconds: number, hostile: boolean): Promise<RunResult> {
  await using database = await startThrowawayCluster();
  const databaseUrl = await createSergoDatabase(database);
  const cliDir = await Deno.makeTempDir({ prefix: "sergo-soak-cluster-cli-" });
  let cluster: Replicas | null = null;
  try {
    await cli(cliDir, databaseUrl, ["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com"]);
    await cli(cliDir, databaseUrl, ["folder", "add", "--person", "ava@example.com", "Notes"]);
    const key = await cli(cliDir, databaseUrl, [
      "key",
      "add",
      "--person",
      "ava@example.com",
      "--name",
      "notes",
      "--read",
      "Notes",
    ]);
    const personal = await cli(cliDir, databaseUrl, ["personal-key", "add", "--person", "ava@example.com"]);
    cluster = await startReplicas({
      databaseUrl,
      count: 2,
      env: { SERGO_RATE_LIMIT: "1000000", SERGO_RATE_BURST: "1000000", SERGO_WORK_LEASE_S: "10" },
    });
    const url = cluster.url;
    const { hostname, port } = new URL(url);
    // Each request sent once (Deno's fetch sends a POST again on a connection that closed before its answer).
    const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        client,
        headers: { authorization: `Bearer ${personal}`, ...(init.headers ?? {}) },
      });
    const mcp = (body: string, bearer = key) =>
      fetch(`${url}/mcp`, {
        method: "POST",
        client,
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      });

    const documents: string[] = [];
    let uploadsAccepted = 0, uploadsUnavailable = 0, uploadCount = 0;
    const otherFailures: string[] = [];
    const note5xx = (what: string, status: number, text: string) => {
      if (status >= 500 && status !== 503 && otherFailures.length < 20) {
        otherFailures.push(`${what}: ${status} ${text.slice(0, 160)}`);
      }
    };
    const upload = async () => {
      const n = uploadCount++;
      const text = Array.from({ length: 30 }, (_, i) => `Soak note ${n} line ${i}: heat pump tariff winter.`)
        .join("\n");
      const response = await api(`/api/documents?name=soak-${n}.txt&folder=Notes`, {
        method: "POST",
        body: text,
      });
      const body = await response.text();
      if (response.status === 201) {
        uploadsAccepted++;
        documents.push((JSON.parse(body) as { documents: { id: string }[] }).documents[0]!.id);
      } else if (response.status === 503) uploadsUnavailable++;
      else note5xx("upload", response.status, body);
    };
    for (let i = 0; i < 10; i++) await upload();

    const started = performance.now();
    const end = started + seconds * 1000;
    const warmupS = Math.min(60, seconds / 5);
    const searches = new Map<string, number>();
    let unavailable = 0;
    const unavailableSamples = new Set<string>();
    const hostileCounts: Record<string, Record<string, number>> = {};
    let restartAt: number | null = null;

    const caller = async (c: number) => {
      const interval = 1000 * CALLERS / TARGET_CALLS_PER_S;
      for (let i = 0; performance.now() < end; i++) {
        const t = performance.now();
        const token = `soak${c}x${i}`;
        try {
          const response = await mcp(JSON.stringify({
            jsonrpc: "2.0",
            id: i,
            method: "tools/call",
            params: { name: "search", arguments: { query: `${token} heat pump`, limit: 5 } },
          }));
          const text = await response.text();
          searches.set(token, response.status === 200 && text.includes('"result"') ? 200 : response.status);
          if (response.status === 503) {
            unavailable++;
            if (unavailableSamples.size < 5) unavailableSamples.add(text.slice(0, 200));
          }
          note5xx("search", response.status, text);
        } catch {
          searches.set(token, 0); // the connection dropped: not answered
        }
        await sleep(Math.max(0, interval - (performance.now() - t)));
      }
    };
    const uploader = async () => {
      while (performance.now() < end) {
        await upload().catch(() => {});
        const oldest = documents.length > 10 ? documents.shift() : undefined;
        if (oldest) {
          const response = await api(`/api/documents/${oldest}`, { method: "DELETE" }).catch(() => null);
          await response?.body?.cancel();
          if (response) note5xx("delete", response.status, "");
        }
        await sleep(2000);
      }
    };
    const samples: [number, number][][] = cluster.replicas.map(() => []);
    const sampler = async () => {
      while (performance.now() < end) {
        await sleep(Math.max(1000, Math.min(5000, (seconds * 1000) / 30)));
        const at = round((performance.now() - started) / 1000, 0);
        for (const [i, replica] of cluster!.replicas.entries()) {
          const memory = await memoryOf(replica.pid);
          if (memory) samples[i]!.push([at, memory.rss_mb]);
        }
      }
    };

    /** The SSE client that never reads: its stream stays open, unread, while it posts calls to its session. */
    const unreadSse = async () => {
      while (performance.now() < end) {
        const response = await fetch(`${url}/sse`, {
          client,
          headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
        }).catch(() => null);
        tally(hostileCounts, "unread SSE stream opened", response?.status ?? "dropped");
        if (!response?.ok || !response.body) {
          await response?.body?.cancel();
          await sleep(1000);
          continue;
        }
        const reader = response.body.getReader();
        let head = "";
        while (!head.includes("\n\n")) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) break;
          head += new TextDecoder().decode(value);
        }
        const endpoint = /data: (\S+)/.exec(head)?.[1];
        // From here on the stream is never read; the session's answers pile up on the replica's side.
        for (let i = 0; endpoint && performance.now() < end; i++) {
          const posted = await fetch(`${url}${endpoint}`, {
            method: "POST",
            client,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: i,
              method: "tools/call",
              params: { name: "search", arguments: { query: `unread${i} heat pump`, limit: 20 } },
            }),
          }).catch(() => null);
          const text = await posted?.text().catch(() => "") ?? "";
          tally(hostileCounts, "unread SSE: posts", posted?.status ?? "dropped");
          if (posted) note5xx("unread SSE post", posted.status, text);
          if (posted?.status === 404) break; // the session ended (its replica was away): open another
          await sleep(100);
        }
        await reader.cancel().catch(() => {});
      }
    };
    const hugeBodies = async () => {
      while (performance.now() < end) {
        const response = await mcp(`{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"y".repeat(2_000_000)}"}`)
          .catch(() => null);
        const text = await response?.text().catch(() => "") ?? "";
        tally(hostileCounts, "2 MB body", response?.status ?? "dropped");
        if (response) note5xx("2 MB body", response.status, text);
        await sleep(1000);
      }
    };
    const slowBodies = async () => {
      while (performance.now() < end) {
        const status = await tricklingPost(
          hostname,
          Number(port),
          key,
          Math.min(15_000, end - performance.now()),
        )
          .catch((error) => `failed: ${error}`);
        tally(hostileCounts, "body trickling in", status.replace(/^HTTP\/1\.1 /, ""));
        if (/^HTTP\/1\.1 5(?!03)/.test(status)) note5xx("trickling body", 500, status);
      }
    };
    const badOAuth = async () => {
      const requests: [string, () => Promise<Response>][] = [
        ["authorize: implicit grant, unregistered client", () =>
          fetch(
            `${url}/oauth/authorize?response_type=token&client_id=${
              encodeURIComponent("https://evil.example/client.json")
            }&redirect_uri=${encodeURIComponent("https://evil.example/phish")}`,
            { client, redirect: "manual" },
          )],
        ["token: made-up code", () =>
          fetch(`${url}/oauth/token`, {
            method: "POST",
            client,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: "grant_type=authorization_code&code=made-up&client_id=nobody&code_verifier=x",
          })],
        ["register: javascript: redirect", () =>
          fetch(`${url}/oauth/register`, {
            method: "POST",
            client,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ client_name: "Evil", redirect_uris: ["javascript:alert(1)"] }),
          })],
      ];
      for (let i = 0; performance.now() < end; i++) {
        const [name, send] = requests[i % requests.length]!;
        const response = await send().catch(() => null);
        const text = await response?.text().catch(() => "") ?? "";
        tally(hostileCounts, name, response?.status ?? "dropped");
        if (response) note5xx(name, response.status, text);
        await sleep(500);
      }
    };
    const restart = async () => {
      await sleep(seconds * 500);
      restartAt = round((performance.now() - started) / 1000, 0);
      await database.stop();
      await sleep(5000);
      await database.start();
    };

    await Promise.all([
      ...Array.from({ length: CALLERS }, (_, c) => caller(c)),
      uploader(),
      sampler(),
      ...(hostile ? [unreadSse(), hugeBodies(), slowBodies(), badOAuth(), restart()] : []),
    ]);
    // What was committed is in the log: a moment for the audit entries of the last answers.
    await sleep(1000);
    const exited = cluster.replicas.filter((replica) => replica.exitCode !== null).map((replica) =>
      replica.index
    );
    const ends = await Promise.all(cluster.replicas.map((replica) => memoryOf(replica.pid)));
    client.close();

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const audited = new Map<string, number>();
    try {
      for (
        const row of await sql<{ token: string; n: number }[]>`
          SELECT split_part(data::jsonb->'arguments'->>'query', ' ', 1) AS token, count(*)::int AS n
          FROM sergo_events WHERE type = 'McpCalled' AND data::jsonb->'arguments'->>'query' LIKE 'soak%'
          GROUP BY 1`
      ) audited.set(row.token, row.n);
    } finally {
      await sql.end();
    }
    const answered = [...searches].filter(([, status]) => status === 200);
    const verify = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}main.ts`, "log", "verify", "--data", cliDir],
      env: { SERGO_DATABASE_URL: databaseUrl, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const verdict = (new TextDecoder().decode(verify.stdout) + new TextDecoder().decode(verify.stderr))
      .trim();
    return {
      seconds,
      hostile,
      searches: {
        sent: searches.size,
        answered: answered.length,
        unavailable,
        audited_once: answered.filter(([token]) => audited.get(token) === 1).length,
        audited_twice: [...audited.values()].filter((n) => n > 1).length,
      },
      unavailable_samples: [...unavailableSamples],
      other_5xx: otherFailures,
      replicas_exited: exited,
      log_verify: verify.success ? verdict.split("\n").pop()! : `failed: ${verdict.slice(0, 300)}`,
      rss_mb: cluster.replicas.map((replica, i) => {
        const warm = samples[i]!.filter(([at]) => at <= warmupS).map(([, mb]) => mb);
        const warmupPeak = warm.length > 0 ? Math.max(...warm) : NaN;
        const endMb = ends[i]?.rss_mb ?? NaN;
        return {
          index: replica.index,
          warmup_peak: warmupPeak,
          end: endMb,
          ratio: round(endMb / warmupPeak, 2),
          samples: samples[i]!,
        };
      }),
      hostile_counts: hostileCounts,
      uploads: { accepted: uploadsAccepted, unavailable: uploadsUnavailable },
      restart_s: restartAt,
    };
  } finally {
    await cluster?.stop();
    await Deno.remove(cliDir, { recursive: true }).catch(() => {});
  }
}

/** The summary rows of a hostile run beside its clean run. */
function rowsOf(clean: RunResult, hostile: RunResult): SummaryRow[] {
  const label = `soak_cluster ${hostile.seconds} s`;
  const rows: SummaryRow[] = [];
  for (const [i, replica] of hostile.rss_mb.entries()) {
    const baseline = clean.rss_mb[i];
    rows.push(ratioRow({
      figure:
        `${label}: replica ${replica.index} RSS at the end ÷ its warm-up peak (hostile clients, restart)`,
      sergo: `${replica.end} MB (warm-up peak ${replica.warmup_peak} MB)`,
      baseline: `clean run: ${baseline?.end} MB ÷ ${baseline?.warmup_peak} MB = ${baseline?.ratio}`,
      ratio: replica.ratio,
      budget: { op: "<=", value: 1.2 },
    }));
  }
  for (const run of [clean, hostile]) {
    const s = run.searches;
    rows.push({
      ...ratioRow({
        figure: `${label}: searches answered and audited exactly once (${
          run.hostile ? "hostile, restart" : "clean"
        })`,
        sergo: `${s.audited_once} of ${s.answered} answered (${s.sent} sent, ${s.unavailable} answered 503)`,
        baseline: `${s.audited_twice} audited twice`,
        ratio: s.answered > 0 ? round(s.audited_once / s.answered, 4) : null,
        budget: { op: ">=", value: 1 },
      }),
      pass: s.answered > 0 && s.audited_once === s.answered && s.audited_twice === 0,
    });
    rows.push({
      ...ratioRow({
        figure: `${label}: replica exits, 5xx other than 503, log verify (${
          run.hostile ? "hostile, restart" : "clean"
        })`,
        sergo: `${run.replicas_exited.length} exits, ${run.other_5xx.length} other 5xx, ${run.log_verify}`,
        baseline: "none, none, ok",
        ratio: run.replicas_exited.length + run.other_5xx.length,
        budget: { op: "<=", value: 0 },
      }),
      pass: run.replicas_exited.length === 0 && run.other_5xx.length === 0 && run.log_verify.startsWith("ok"),
    });
  }
  return rows;
}

/** Runs the cluster soak clean, then hostile with a restart; see the module documentation. */
export async function benchSoakCluster(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const setting = Deno.env.get("SOAK_CLUSTER_SECONDS");
  const seconds = Number(setting ?? (opts.quick ? 60 : 600));
  if (!(seconds >= 20)) throw new Error(`SOAK_CLUSTER_SECONDS must be 20 or more, got "${setting}"`);
  const clean = await runOnce(seconds, false);
  const hostile = await runOnce(seconds, true);
  return { rows: rowsOf(clean, hostile), seconds, load_average_at_end: Deno.loadavg(), clean, hostile };
}

if (import.meta.main) {
  const result = await benchSoakCluster({ quick: Deno.args.includes("--quick") });
  console.log(JSON.stringify(result, null, 2));
}
