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

async function startCluster(): Promise<Cluster> {
  const initdb = await needs("initdb");
  const pgCtl = await needs("pg_ctl");
  const root = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "sergo-pg-" });
  const user = root ? "postgres" : null;
  if (root) await Deno.chown(dir, ...await postgresIds());
  const data = `${dir}/data`;
  await run(initdb, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"], user);
  for (let attempt = 0;; attempt++) {
    const port = freePort();
    try {
      await run(pgCtl, [
        "-D",
        data,
        "-l",
        `${dir}/log`,
        "-w",
        "-t",
        "60",
        "-o",
        // Throwaway: no fsync (the tests do not crash the machine), sockets only on loopback and in the folder.
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
        "start",
      ], user);
    } catch (error) {
      if (attempt < 3) continue; // another process took the port between our check and the start
      throw error;
    }
    globalThis.addEventListener("unload", () => {
      const argv = ["-D", data, "-m", "immediate", "stop"];
      new Deno.Command(user ? "runuser" : pgCtl, {
        args: user ? ["-u", user, "--", pgCtl, ...argv] : argv,
        stdout: "null",
        stderr: "null",
      }).outputSync();
      Deno.removeSync(dir, { recursive: true });
    });
    return { adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres` };
  }
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
