/**
 * `SERGO_DATABASE_URL`'s TLS options against a real PostgreSQL that accepts
 * only TLS connections (`hostssl` in pg_hba.conf), through main.ts:
 * `sslmode=verify-full` connects when the server's CA is among Deno's roots
 * (`DENO_CERT`) and is refused in one line when it is not; `sslmode=require`
 * connects without checking the certificate (as libpq's does, which the
 * README warns about); without TLS the server refuses. A password with URL
 * characters works percent-encoded in the URL or from `PGPASSWORD`, and a
 * wrong one is refused without being printed.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { makeLocalhostCertificate } from "../helpers/certificates.ts";
import { startThrowawayCluster } from "../helpers/postgres.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const PASSWORD = "p@ss:w/rd?1";

Deno.test("SERGO_DATABASE_URL over TLS: verify-full checks the server's certificate, require does not, plain is refused", async () => {
  await using database = await startThrowawayCluster();
  await using certs = await tempDir();
  const made = await makeLocalhostCertificate(certs.path);
  const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin<{ data_directory: string }[]>`SHOW data_directory`;
    const dataDir = row!.data_directory;
    // The server reads its key as its own user, mode 0600; only TLS connections are let in.
    await Deno.copyFile(made.cert, `${dataDir}/server.crt`);
    await Deno.copyFile(made.key, `${dataDir}/server.key`);
    const owner = await Deno.stat(`${dataDir}/PG_VERSION`);
    for (const file of ["server.crt", "server.key"]) {
      await Deno.chown(`${dataDir}/${file}`, owner.uid, owner.gid);
      await Deno.chmod(`${dataDir}/${file}`, 0o600);
    }
    // Only TLS connections; the role sergo signs in with its password.
    await Deno.writeTextFile(
      `${dataDir}/pg_hba.conf`,
      "local all all trust\nhostssl all sergo 127.0.0.1/32 scram-sha-256\nhostssl all all 127.0.0.1/32 trust\n",
    );
    await admin.unsafe(`CREATE ROLE sergo LOGIN PASSWORD '${PASSWORD}'`);
    await admin`CREATE DATABASE sergo OWNER sergo`;
    await admin`ALTER SYSTEM SET ssl = on`;
    await admin`SELECT pg_reload_conf()`;
  } finally {
    await admin.end();
  }
  const url = new URL(database.adminUrl);
  const verify = async (query: string, env: Record<string, string> = {}) => {
    await using dir = await tempDir();
    return await runCli(["log", "verify", "--data", dir.path], {
      env: { SERGO_DATABASE_URL: `${url.href}${query}`, ...env },
    });
  };
  const trusted = await verify("?sslmode=verify-full", { DENO_CERT: made.ca });
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.match(trusted.stdout, /^ok: 0 events, head 0 0{64}\n$/);

  const untrusted = await verify("?sslmode=verify-full");
  assert.equal(untrusted.code, 1);
  const lines = untrusted.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, untrusted.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `^sergo log verify failed: Cannot open the log at 127\\.0\\.0\\.1:${url.port}/postgres: .*cert`,
      "i",
    ),
  );

  const unchecked = await verify("?sslmode=require");
  assert.equal(unchecked.code, 0, unchecked.stderr);

  // A password with URL characters, percent-encoded in the URL, or in PGPASSWORD; a wrong one is not printed.
  const withPassword = (password: string | null) => {
    const signed = new URL(url);
    signed.username = "sergo";
    signed.pathname = "/sergo";
    if (password !== null) signed.password = encodeURIComponent(password);
    return `${signed.href}?sslmode=verify-full`;
  };
  const run = async (databaseUrl: string, env: Record<string, string> = {}) => {
    await using dir = await tempDir();
    return await runCli(["log", "verify", "--data", dir.path], {
      env: { SERGO_DATABASE_URL: databaseUrl, DENO_CERT: made.ca, ...env },
    });
  };
  const encoded = await run(withPassword(PASSWORD));
  assert.equal(encoded.code, 0, encoded.stderr);
  const fromEnv = await run(withPassword(null), { PGPASSWORD: PASSWORD });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  const wrong = await run(withPassword("hunter2"));
  assert.equal(wrong.code, 1);
  assert.match(
    wrong.stderr,
    /^sergo log verify failed: Cannot open the log at 127\.0\.0\.1:\d+\/sergo: .*password/,
  );
  assert.ok(!wrong.stderr.includes("hunter2") && !wrong.stderr.includes(PASSWORD));

  const plain = await verify("");
  assert.equal(plain.code, 1);
  assert.match(plain.stderr, /no pg_hba\.conf entry .*no encryption/);
});
