/**
 * `sergo migrate --to`: an embedded install (people, a key, corpus uploads,
 * audited MCP calls) copied into PostgreSQL keeps its log head and its
 * projections' digest; a copy resumes, and a database holding another log is
 * refused.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import { testDatabase } from "../helpers/postgres.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const CORPUS = new URL("../corpus/", import.meta.url);

Deno.test("sergo migrate copies an embedded install into PostgreSQL: the same log head, the same projections digest, the same blobs", async () => {
  await using source = await tempDir();
  await using replica = await tempDir();
  await using db = await testDatabase();
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const result = await runCli(args, { env });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim();
  };
  const d = ["--data", source.path];
  await run(["person", "add", "--name", "Ава Беннетт", "--email", "ava@example.com", ...d]);
  await run(["folder", "add", "--person", "ava@example.com", "Reports/Текст", ...d]);
  await run([
    "key",
    "add",
    "--person",
    "ava@example.com",
    "--name",
    "reports",
    "--description",
    "Reports",
    "--read",
    "Reports",
    ...d,
  ]);
  const files = [
    new URL("text/rfc6787-mrcpv2.txt", CORPUS).pathname,
    new URL("text/markitdown-readme.md", CORPUS).pathname,
  ];
  await run([
    "upload",
    "--person",
    "ava@example.com",
    "--folder",
    "Reports/Текст",
    "--preset",
    "basic",
    ...files,
    ...d,
  ]);
  const verifiedBefore = await run(["log", "verify", ...d]);
  const digestBefore = await run(["projections", "digest", ...d]);
  assert.match(verifiedBefore, /^ok: \d+ events, head \d+ [0-9a-f]{64}$/);

  const migrated = await run(["migrate", "--to", db.url, ...d]);
  const head = verifiedBefore.match(/head (\d+ [0-9a-f]{64})/)![1]!;
  assert.match(migrated, new RegExp(`^Copied \\d+ events \\(the log now ends at ${head}\\) and 2 blobs\\.`));

  // A replica with an empty data directory on the database: the same head, and projections rebuilt from the
  // copy with the same digest.
  const env = { SERGO_DATABASE_URL: db.url };
  const r = ["--data", replica.path];
  assert.equal(await run(["log", "verify", ...r], env), verifiedBefore);
  assert.equal(await run(["projections", "digest", ...r], env), digestBefore);
  const sql = postgres(db.url, { max: 1 });
  try {
    const blobs = await sql<
      { sha256: string; size: string }[]
    >`SELECT sha256, size FROM sergo_blobs ORDER BY size`;
    const sizes = await Promise.all(files.map(async (f) => (await Deno.stat(f)).size));
    assert.deepEqual(blobs.map((b) => Number(b.size)), sizes.sort((a, b) => a - b));
  } finally {
    await sql.end();
  }

  // Again: nothing more to copy. Another install's log onto the same database: refused, nothing written.
  assert.match(await run(["migrate", "--to", db.url, ...d]), /^Copied 0 events .* and 0 blobs\./);
  await using other = await tempDir();
  await run(["person", "add", "--name", "Bo", "--email", "bo@example.com", "--data", other.path]);
  const refused = await runCli(["migrate", "--to", db.url, "--data", other.path]);
  assert.equal(refused.code, 2);
  assert.equal(
    refused.stderr,
    "The database already holds a longer log (" + head.split(" ")[0] + " events) than this one (1)\n",
  );
  assert.equal(await run(["log", "verify", ...r], env), verifiedBefore);
});

Deno.test("sergo migrate refuses a bad --to with one line, and a log that does not verify, copying nothing", async () => {
  await using source = await tempDir();
  const bad = await runCli(["migrate", "--to", "mysql://root:hunter2@db/sergo", "--data", source.path]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    "--to must be a PostgreSQL URL such as postgres://user:password@host:5432/sergo\n",
  );
  const missing = await runCli(["migrate", "--to", "postgres://127.0.0.1/sergo", "--data", source.path]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^No event log at ".*events\.db" to migrate\n$/);

  await using db = await testDatabase();
  const added = await runCli([
    "person",
    "add",
    "--name",
    "Bo",
    "--email",
    "bo@example.com",
    "--data",
    source.path,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const raw = new DatabaseSync(`${source.path}/events.db`);
  raw.prepare("UPDATE events SET data = replace(data, 'Bo', 'Al') WHERE position = 1").run();
  raw.close();
  const broken = await runCli(["migrate", "--to", db.url, "--data", source.path]);
  assert.equal(broken.code, 2);
  assert.equal(
    broken.stderr,
    "The log does not verify (broken at position 1: its content does not match its hash); nothing was copied\n",
  );
  const sql = postgres(db.url, { max: 1 });
  try {
    const tables = await sql`SELECT 1 FROM pg_tables WHERE tablename = 'sergo_events'`;
    if (tables.length > 0) assert.equal((await sql`SELECT count(*)::int AS n FROM sergo_events`)[0]!.n, 0);
  } finally {
    await sql.end();
  }
});
