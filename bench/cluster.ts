/**
 * A Sergo cluster on one machine: N real `serve` replicas (subprocesses run
 * with `deno task serve`'s permissions, each with its own data directory, all
 * on one `SERGO_DATABASE_URL`) behind an HAProxy that checks `/healthz` and
 * spreads requests round robin. `deno task cluster` runs it for people to try
 * (with a PostgreSQL of its own unless `SERGO_DATABASE_URL` is given); the
 * end-to-end tests and benchmarks start it through `startReplicas`
 * (test/helpers/replicas.ts).
 *
 * ```sh
 * deno task cluster                   # throwaway: everything in a temporary folder, removed on Ctrl-C
 * deno task cluster --data ./cluster  # kept: PostgreSQL's files and the replicas' data directories
 * deno task cluster --replicas 2 --port 8788
 * ```
 *
 * HAProxy routes `/setup` (the first-run address, whose token only the replica
 * that printed it knows) to the first replica, and `/sse*` by the
 * `Authorization` header, so a legacy SSE session's stream and its messages
 * reach the same replica; everything else is round robin.
 *
 * @module
 */
import { join, resolve } from "node:path";
import postgres from "postgres";
import { SIGNING_KEY_FILE } from "../src/audit/signing_key.ts";
import { needs } from "../test/helpers/dependencies.ts";
import { startThrowawayCluster } from "../test/helpers/postgres.ts";

/** The flags and environment of `deno task serve` (deno.json), which each replica runs with. */
const SERVE_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-sys",
  "--allow-ffi",
  "--allow-run=soffice,libreoffice,prlimit,tesseract,deno",
];
const SERVE_ENV = { MALLOC_TRIM_THRESHOLD_: "0", MALLOC_MMAP_THRESHOLD_: "131072" };

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** How long a replica may take to print its address. */
const START_MS = 120_000;
/** How long a replica may take to stop after SIGTERM before it is killed. */
const STOP_MS = 20_000;
/** How much of each process's output is kept for error messages. */
const KEEP_OUTPUT = 64 * 1024;

/** HAProxy's health check: every 250 ms, two failures mark a replica down, two successes up again. */
const CHECK = "inter 250ms fall 2 rise 2";

/** One `serve` subprocess. */
export interface Replica {
  /** 1, 2, …: also its HAProxy server name `r<index>`. */
  index: number;
  dataDir: string;
  /** Its own address (not through HAProxy). */
  url: string;
  port: number;
  /** Its process id (0 before it first starts). */
  pid: number;
  /** The first-run address it printed (through HAProxy), when nobody existed at its start. */
  setupUrl: string | null;
  /** Milliseconds from start to serving, as the replica printed it. */
  readyMs: number;
  /** Whether the process is running (false after `kill`, until `restart`). */
  running: boolean;
  /** The exit code when the process ended by itself or was killed (null while it runs). */
  exitCode: number | null;
  /** Everything it printed (the last 64 KiB), for messages. */
  output(): string;
}

/** Replicas behind an HAProxy. */
export interface Replicas {
  /** HAProxy's address: what clients use. */
  url: string;
  replicas: Replica[];
  /** The database URL the replicas share. */
  databaseUrl: string;
  /** Kills replica `index` (SIGKILL unless told: a crash, nothing finished) and waits for it to end. */
  kill(index: number, signal?: Deno.Signal): Promise<void>;
  /** Starts replica `index` again on its port and data directory; resolves when it serves. */
  restart(index: number): Promise<void>;
  /** What HAProxy printed (its request log, the last 64 KiB). */
  haproxyOutput(): string;
  /** HAProxy's view of each replica (`r1` → "UP", "DOWN", …) from its statistics page. */
  states(): Promise<Record<string, string>>;
  /** Waits until HAProxy sees replica `index` in `state` ("UP" or "DOWN"). */
  waitFor(index: number, state: "UP" | "DOWN", timeoutMs?: number): Promise<void>;
  /** Stops the replicas (SIGTERM, finishing in-flight work), then HAProxy; removes temporary folders. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What to start. */
export interface ReplicaOptions {
  databaseUrl: string;
  /** How many replicas (3). */
  count?: number;
  /** HAProxy's port (a free one when 0 or absent). */
  port?: number;
  /** HAProxy's listening address (127.0.0.1). */
  host?: string;
  /** The replicas' data directories (temporary ones, removed on stop, when absent). */
  dataDirs?: string[];
  /** More environment for every replica (e.g. `SERGO_RATE_LIMIT`). */
  env?: Record<string, string>;
}

/**
 * The running Deno's path, or `deno` from PATH when only that name may be run
 * (`deno task cluster`'s `--allow-run=deno`; npm's deno is a symlink whose path differs).
 */
function deno(): string {
  const path = Deno.execPath();
  return Deno.permissions.querySync({ name: "run", command: path }).state === "granted" ? path : "deno";
}

/** A port nobody listens on now. */
export function freePort(hostname = "127.0.0.1"): number {
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A child process whose output is read continuously (so it never blocks on a full pipe) and kept. */
class Process {
  readonly child: Deno.ChildProcess;
  #output = "";
  #lines: ((line: string) => void)[] = [];
  readonly done: Promise<Deno.CommandStatus>;

  constructor(command: string, args: string[], env: Record<string, string>) {
    this.child = new Deno.Command(command, { args, env, stdin: "null", stdout: "piped", stderr: "piped" })
      .spawn();
    const read = async (stream: ReadableStream<Uint8Array>) => {
      let partial = "";
      const decoder = new TextDecoder();
      for await (const bytes of stream) {
        const text = decoder.decode(bytes, { stream: true });
        this.#output = (this.#output + text).slice(-KEEP_OUTPUT);
        partial += text;
        const lines = partial.split("\n");
        partial = lines.pop()!;
        for (const line of lines) for (const listener of this.#lines) listener(line);
      }
    };
    const reading = Promise.all([read(this.child.stdout), read(this.child.stderr)]);
    this.done = this.child.status.then(async (status) => {
      await reading.catch(() => {});
      return status;
    });
  }

  output(): string {
    return this.#output;
  }

  /** Resolves with the first line matching `pattern` (within `ms`); rejects when the process ends first. */
  waitForLine(pattern: RegExp, ms: number, what: string): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${what} did not start within ${ms / 1000} s:\n${this.#output}`));
      }, ms);
      const listener = (line: string) => {
        const match = line.match(pattern);
        if (match) {
          clearTimeout(timer);
          resolve(match);
        }
      };
      this.#lines.push(listener);
      this.done.then((status) => {
        clearTimeout(timer);
        reject(new Error(`${what} ended (exit code ${status.code}) before it served:\n${this.#output}`));
      });
    });
  }

  kill(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch { /* already ended */ }
  }

  /** SIGTERM, then SIGKILL after `ms`. */
  async stop(ms: number): Promise<void> {
    this.kill("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      this.done.then(() => true),
      new Promise<false>((resolve) => timer = setTimeout(resolve, ms, false)),
    ]);
    clearTimeout(timer);
    if (!ended) {
      this.kill("SIGKILL");
      await this.done;
    }
  }
}

const SERVING = /^Sergo is serving .* at (https?:\/\/\S+) \(ready in (\d+) ms\)$/;
const SETUP = /^First run: open (\S+) to create the first person/;

/** The HAProxy configuration for replicas on `ports`. */
export function haproxyConfig(
  options: { host: string; port: number; ports: number[]; statsPort: number },
): string {
  const servers = (check: boolean) =>
    options.ports.map((port, i) => `  server r${i + 1} 127.0.0.1:${port}${check ? " check" : ""}`).join("\n");
  return `global
  maxconn 2000
  log stdout format raw local0 info


defaults
  mode http
  log global
  option httplog
  option http-server-close
  timeout connect 2s
  # A client has 10 s to send its request's headers (Deno.serve has no such deadline of its own).
  timeout http-request 10s
  timeout http-keep-alive 10s
  timeout client 120s
  timeout server 330s
  timeout tunnel 1h
  # A replica that refuses the connection (killed, restarting) is tried again on another one; a request
  # that reached a replica is never sent twice.
  retries 3
  option redispatch
  # The client's address for Sergo's per-address limits (SERGO_TRUSTED_PROXIES names this balancer).
  option forwardfor

# Each replica's state as HAProxy sees it (CSV at /stats;csv), on loopback only.
listen stats
  bind 127.0.0.1:${options.statsPort}
  stats enable
  stats uri /stats

frontend sergo
  bind ${options.host}:${options.port}
  use_backend setup if { path /setup }
  use_backend sse if { path /sse } || { path_beg /sse/ }
  default_backend replicas

backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server ${CHECK}
${servers(true)}

# The first-run address's token is known only to the replica that printed it (the first).
backend setup
${servers(false).split("\n")[0]}

# A legacy SSE session lives on one replica: its stream and its messages carry the same key.
backend sse
  balance hdr(Authorization)
  hash-type consistent
  option httpchk GET /healthz
  http-check expect status 200
  default-server ${CHECK}
${servers(true)}
`;
}

/** Starts `count` replicas on `databaseUrl` and an HAProxy in front; resolves when all serve. */
export async function startReplicas(options: ReplicaOptions): Promise<Replicas> {
  const count = options.count ?? 3;
  const host = options.host ?? "127.0.0.1";
  const haproxyPath = await needs("haproxy");
  const work = await Deno.makeTempDir({ prefix: "sergo-cluster-" });
  const dataDirs = options.dataDirs ??
    Array.from({ length: count }, (_, i) => join(work, `replica-${i + 1}`));
  if (dataDirs.length !== count) throw new Error(`${count} replicas need ${count} data directories`);
  for (const dir of dataDirs) await Deno.mkdir(dir, { recursive: true });
  const port = options.port || freePort(host);
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const env = {
    ...SERVE_ENV,
    NO_COLOR: "1",
    SERGO_PUBLIC_URL: url,
    // HAProxy connects from loopback and says who the client is (option forwardfor).
    SERGO_TRUSTED_PROXIES: "127.0.0.1",
    ...(options.env ?? {}),
    SERGO_DATABASE_URL: options.databaseUrl,
  };
  const processes: (Process | null)[] = dataDirs.map(() => null);
  let haproxy: Process | null = null;
  let removed = false;
  const killAll = () => {
    if (removed) return;
    removed = true;
    for (const process of processes) process?.kill("SIGKILL");
    haproxy?.kill("SIGKILL");
    try {
      Deno.removeSync(work, { recursive: true });
    } catch { /* gone */ }
  };
  // Whatever the caller does, nothing outlives the process that started it.
  globalThis.addEventListener("unload", killAll);

  const replicas: Replica[] = dataDirs.map((dataDir, i) => ({
    index: i + 1,
    dataDir,
    url: "",
    port: 0,
    pid: 0,
    setupUrl: null,
    readyMs: 0,
    running: false,
    exitCode: null,
    output: () => processes[i]?.output() ?? "",
  }));

  const launch = async (i: number, replicaPort: number) => {
    const replica = replicas[i]!;
    const process = new Process(deno(), [
      "run",
      ...SERVE_PERMISSIONS,
      MAIN,
      "serve",
      "--data",
      replica.dataDir,
      "--host",
      "127.0.0.1",
      "--port",
      String(replicaPort),
    ], env);
    processes[i] = process;
    replica.pid = process.child.pid;
    replica.exitCode = null;
    process.done.then((status) => {
      if (processes[i] === process) replica.exitCode = status.code;
    });
    const [, address, ready] = await process.waitForLine(SERVING, START_MS, `replica ${i + 1}`);
    replica.url = address!;
    replica.port = Number(new URL(address!).port);
    replica.readyMs = Number(ready);
    replica.running = true;
    // The setup line follows the serving line at once, when there is one (it may come in the next read).
    replica.setupUrl = null;
    for (let wait = 0; wait < 10 && !replica.setupUrl; wait++) {
      replica.setupUrl = process.output().split("\n").map((line) => line.match(SETUP)?.[1]).find(Boolean) ??
        null;
      if (!replica.setupUrl) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const stop = async () => {
    globalThis.removeEventListener("unload", killAll);
    await Promise.all(processes.map((process) => process?.stop(STOP_MS)));
    await haproxy?.stop(STOP_MS);
    for (const replica of replicas) replica.running = false;
    await Deno.remove(work, { recursive: true }).catch(() => {});
    removed = true;
  };

  try {
    // The first replica alone first: on a new database it is the one whose setup address HAProxy serves.
    await launch(0, 0);
    // One install, one audit signing key: the others get the first one's (export manifests verify alike,
    // whichever replica signed them). It is not in the database: back it up with the database.
    const key = join(replicas[0]!.dataDir, SIGNING_KEY_FILE);
    for (const replica of replicas.slice(1)) {
      const target = join(replica.dataDir, SIGNING_KEY_FILE);
      if (await Deno.stat(target).then(() => false, () => true)) {
        await Deno.copyFile(key, target);
        await Deno.chmod(target, 0o600);
      }
    }
    await Promise.all(replicas.slice(1).map((_, i) => launch(i + 1, 0)));
    const statsPort = freePort();
    const config = join(work, "haproxy.cfg");
    await Deno.writeTextFile(
      config,
      haproxyConfig({ host, port, ports: replicas.map((replica) => replica.port), statsPort }),
    );
    // -db: in the foreground, so it is our child and ends with us.
    haproxy = new Process(haproxyPath, ["-db", "-f", config], {});
    const states = () => haproxyStates(statsPort);
    const waitFor = async (index: number, state: "UP" | "DOWN", timeoutMs = 10_000) => {
      const started = Date.now();
      for (;;) {
        const seen = await states().catch(() => ({} as Record<string, string>));
        if (seen[`r${index}`] === state) return;
        if (haproxy && await isDone(haproxy)) throw new Error(`HAProxy ended:\n${haproxy.output()}`);
        if (Date.now() - started > timeoutMs) {
          throw new Error(`HAProxy did not see replica ${index} ${state} within ${timeoutMs / 1000} s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // Generous: on a loaded machine a replica's health checks can time out for a while after it answers.
    for (const replica of replicas) await waitFor(replica.index, "UP", 120_000);
    return {
      url,
      replicas,
      databaseUrl: options.databaseUrl,
      async kill(index, signal = "SIGKILL") {
        const process = processes[index - 1];
        if (!process) throw new Error(`No replica ${index}`);
        process.kill(signal);
        await process.done;
        replicas[index - 1]!.running = false;
      },
      async restart(index) {
        const replica = replicas[index - 1];
        if (!replica) throw new Error(`No replica ${index}`);
        if (replica.running) throw new Error(`Replica ${index} is running`);
        await launch(index - 1, replica.port);
      },
      states,
      waitFor,
      haproxyOutput: () => haproxy?.output() ?? "",
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function isDone(process: Process): Promise<boolean> {
  return await Promise.race([process.done.then(() => true), Promise.resolve(false)]);
}

/** Each server's operational state in the `replicas` backend, from HAProxy's CSV statistics. */
async function haproxyStates(statsPort: number): Promise<Record<string, string>> {
  const response = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`);
  if (!response.ok) throw new Error(`HAProxy's statistics answered ${response.status}`);
  // CSV: "# pxname,svname,…,status,…"
  const [header, ...rows] = (await response.text()).trim().split("\n");
  const columns = header!.replace(/^# /, "").split(",");
  const status = columns.indexOf("status");
  const states: Record<string, string> = {};
  for (const row of rows) {
    const cells = row.split(",");
    if (cells[0] === "replicas" && /^r\d+$/.test(cells[1] ?? "")) states[cells[1]!] = cells[status] ?? "";
  }
  return states;
}

const USAGE = "Usage: deno task cluster [--data DIR] [--replicas N] [--port PORT]";

/** `deno task cluster`: PostgreSQL (unless SERGO_DATABASE_URL is set), the replicas and HAProxy, until Ctrl-C. */
async function main(args: string[]): Promise<number> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const [name, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!["--data", "--replicas", "--port"].includes(name)) {
      console.error(`Unknown argument "${args[i]}". ${USAGE}`);
      return 2;
    }
    const value = inline ?? args[++i];
    if (value === undefined || value === "") {
      console.error(`${name} needs a value. ${USAGE}`);
      return 2;
    }
    flags[name.slice(2)] = value;
  }
  const count = Number(flags.replicas ?? "3");
  const port = Number(flags.port ?? "8787");
  if (!Number.isInteger(count) || count < 1 || count > 16) {
    console.error(`--replicas must be a whole number from 1 to 16, got "${flags.replicas}"`);
    return 2;
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a port number (0 for any free one), got "${flags.port}"`);
    return 2;
  }
  const data = flags.data ? resolve(flags.data) : null;
  let databaseUrl = Deno.env.get("SERGO_DATABASE_URL") ?? null;
  let database: Awaited<ReturnType<typeof startThrowawayCluster>> | null = null;
  let replicas: Replicas | null = null;
  const { promise: signalled, resolve: onSignal } = Promise.withResolvers<void>();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    if (databaseUrl === null) {
      console.log(`Starting PostgreSQL${data ? ` in ${join(data, "postgres")}` : " (throwaway)"}…`);
      database = await startThrowawayCluster(
        data ? { dir: join(data, "postgres"), fsync: true } : { fsync: false },
      );
      const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
      try {
        const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = 'sergo'`;
        if (!exists) await admin`CREATE DATABASE sergo`;
      } finally {
        await admin.end();
      }
      databaseUrl = database.adminUrl.replace(/\/postgres$/, "/sergo");
    }
    console.log(`Starting ${count} replicas and HAProxy…`);
    replicas = await startReplicas({
      databaseUrl,
      count,
      port,
      dataDirs: data ? Array.from({ length: count }, (_, i) => join(data, `replica-${i + 1}`)) : undefined,
    });
    const where = new URL(databaseUrl);
    console.log(`PostgreSQL: ${where.hostname}:${where.port || 5432}${where.pathname}`);
    for (const replica of replicas.replicas) {
      console.log(
        `Replica ${replica.index}: ${replica.url} (data ${replica.dataDir}, ready in ${replica.readyMs} ms)`,
      );
    }
    console.log(`Sergo is serving at ${replicas.url} (HAProxy, round robin over ${count} replicas)`);
    const setup = replicas.replicas[0]!.setupUrl;
    if (setup) {
      console.log(`First run: open ${setup} to create the first person (an administrator); it works once.`);
    }
    console.log("Ctrl-C stops everything.");
    await signalled;
    console.log("Stopping: the replicas finish in-flight requests and work…");
    return 0;
  } catch (error) {
    console.error(`deno task cluster failed: ${error instanceof Error ? error.message : error}`);
    return 1;
  } finally {
    await replicas?.stop();
    await database?.[Symbol.asyncDispose]();
    console.log("Stopped.");
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
