/**
 * A real PostgreSQL for the tests. With `SERGO_TEST_DATABASE_URL` set (a
 * server someone else runs), each test gets a fresh database on it; unset, the
 * first test that asks starts a throwaway cluster (`initdb` into a temporary
 * folder, as the `postgres` user when running as root, on a random loopback
 * port), stopped and removed when the test process ends. A missing PostgreSQL
 * fails the test (through `needs`), never skips it.
 *
 * ```ts
 * await using db = await testDatabase();
 * const store = await openPostgresStore(db.url, …);
 * ```
 *
 * @module
 */
import postgres from "postgres";
import { needs } from "./dependencies.ts";

interface Cluster {
  /** A URL of the cluster's `postgres` database (a superuser connection). */
  adminUrl: string;
}

let cluster: Promise<Cluster> | null = null;

async function run(command: string, args: string[], asUser: string | null): Promise<string> {
  const [program, argv] = asUser ? ["runuser", ["-u", asUser, "--", command, ...args]] : [command, args];
  const output = await new Deno.Command(program, {
    args: argv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  if (!output.success) throw new Error(`${command} ${args.join(" ")} failed: ${text.trim()}`);
  return text;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A PostgreSQL cluster of its own, for a test that stops and starts the server. */
export interface ThrowawayCluster {
  /** A URL of its `postgres` database (a superuser connection). */
  adminUrl: string;
  /** Stops the server at once (`-m immediate`, as a crash would), keeping its files. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it and removes its files (keeps them when started with `dir`). */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a cluster in a temporary folder (`initdb` as the `postgres` user
 * when root) on a random loopback port.
 */
export async function startThrowawayCluster(
  options: { fsync?: boolean; dir?: string } = {},
): Promise<ThrowawayCluster> {
  const initdb = await needs("initdb");
  const pgCtl = await needs("pg_ctl");
  const root = Deno.uid() === 0;
  // `dir` (deno task cluster --data): kept, made once, stopped cleanly; otherwise a temporary folder.
  const kept = options.dir !== undefined;
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "sergo-pg-" });
  if (kept) await Deno.mkdir(dir, { recursive: true });
  const user = root ? "postgres" : null;
  if (root) await Deno.chown(dir, ...await postgresIds());
  const data = `${dir}/data`;
  const made = await Deno.stat(`${data}/PG_VERSION`).then(() => true, () => false);
  if (!made) {
    await run(initdb, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"], user);
  }
  let port = 0;
  const start = () =>
    run(pgCtl, [
      "-D",
      data,
      "-l",
      `${dir}/log`,
      "-w",
      "-t",
      "60",
      "-o",
      // Throwaway: no fsync unless asked (tests do not crash the machine; benchmarks ask for it), sockets
      // only on loopback and in the folder.
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${
        options.fsync ? "on" : "off"
      } -c max_connections=200`,
      "start",
    ], user);
  for (let attempt = 0;; attempt++) {
    port = freePort();
    try {
      await start();
      break;
    } catch (error) {
      if (attempt < 3) continue; // another process took the port between our check and the start
      throw error;
    }
  }
  const stopSync = () => {
    const argv = ["-D", data, "-m", kept ? "fast" : "immediate", "stop"];
    new Deno.Command(user ? "runuser" : pgCtl, {
      args: user ? ["-u", user, "--", pgCtl, ...argv] : argv,
      stdout: "null",
      stderr: "null",
    }).outputSync();
  };
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    stopSync();
    if (!kept) Deno.removeSync(dir, { recursive: true });
  };
  // Stopped when the test process ends, whatever the tests did.
  globalThis.addEventListener("unload", remove);
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await run(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"], user);
    },
    start: async () => {
      await start();
    },
    [Symbol.asyncDispose]: () => {
      globalThis.removeEventListener("unload", remove);
      remove();
      return Promise.resolve();
    },
  };
}

function startCluster(): Promise<Cluster> {
  return startThrowawayCluster();
}

async function postgresIds(): Promise<[number, number]> {
  const passwd = await Deno.readTextFile("/etc/passwd");
  const line = passwd.split("\n").find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("This test needs the postgres user (apt-get install postgresql)");
  const [, , uid, gid] = line.split(":");
  return [Number(uid), Number(gid)];
}

function getCluster(): Promise<Cluster> {
  const url = Deno.env.get("SERGO_TEST_DATABASE_URL");
  if (url) return Promise.resolve({ adminUrl: url });
  cluster ??= startCluster();
  return cluster;
}

/** A fresh, empty database, dropped when disposed. */
export async function testDatabase(): Promise<{ url: string } & AsyncDisposable> {
  const { adminUrl } = await getCluster();
  const name = `sergo_test_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async [Symbol.asyncDispose]() {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Creates a database named `sergo` on a throwaway cluster and returns its URL (the cluster's admin URL with that name). */
export async function createSergoDatabase(cluster: ThrowawayCluster): Promise<string> {
  const admin = postgres(cluster.adminUrl, { max: 1, onnotice: () => {} });
  await admin`CREATE DATABASE sergo`;
  await admin.end();
  return cluster.adminUrl.replace(/\/postgres$/, "/sergo");
}
