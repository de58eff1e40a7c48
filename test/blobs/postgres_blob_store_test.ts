import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import postgres from "postgres";
import { BLOB_CHUNK_BYTES, openPostgresBlobStore } from "../../src/postgres_blob_store.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/temp.ts";

const CORPUS = new URL("../corpus/", import.meta.url);

Deno.test("PostgreSQL blobs: a corpus PDF and a 5.5 MiB upload round-trip, named by their sha256, in 1 MiB chunks", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const blobs = await openPostgresBlobStore(db.url, join(dir.path, "tmp"));
  try {
    const pdf = await Deno.readFile(new URL("pdf/eia-aeo2023-narrative.pdf", CORPUS)).catch(async () => {
      // Any corpus PDF will do when that one is renamed.
      for await (const entry of Deno.readDir(new URL("pdf/", CORPUS))) {
        if (entry.name.endsWith(".pdf")) return await Deno.readFile(new URL(`pdf/${entry.name}`, CORPUS));
      }
      throw new Error("no PDF in the corpus");
    });
    const sha = await blobs.write(pdf);
    assert.equal(sha, createHash("sha256").update(pdf).digest("hex"));
    assert.equal(await blobs.write(pdf), sha, "writing the same bytes twice is harmless");
    assert.deepEqual(await blobs.read(sha), pdf);
    assert.ok(await blobs.has(sha));
    assert.equal(await blobs.has("0".repeat(64)), false);
    await assert.rejects(blobs.read("0".repeat(64)), Deno.errors.NotFound);
    await assert.rejects(blobs.read("../etc/passwd"), /Not a blob name/);

    // An upload streamed to a temporary file, adopted: the file is gone, the bytes are in the database.
    const big = new Uint8Array(Math.floor(5.5 * BLOB_CHUNK_BYTES));
    for (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, i + 65536));
    const temp = await blobs.tempPath();
    await Deno.writeFile(temp, big);
    const adopted = await blobs.adopt(temp);
    assert.deepEqual(adopted, { sha256: createHash("sha256").update(big).digest("hex"), size: big.length });
    await assert.rejects(Deno.stat(temp), Deno.errors.NotFound);
    assert.deepEqual(await blobs.read(adopted.sha256), big);
    // A download streams it chunk by chunk.
    assert.deepEqual(
      new Uint8Array(await new Response(await blobs.stream(adopted.sha256)).arrayBuffer()),
      big,
    );
    const sql = postgres(db.url, { max: 1 });
    const rows =
      await sql`SELECT seq, length(bytes) AS n FROM sergo_blob_chunks WHERE sha256 = ${adopted.sha256} ORDER BY seq`;
    await sql.end();
    assert.deepEqual(
      rows.map((r) => [r.seq, r.n]),
      [0, 1, 2, 3, 4, 5].map((seq) => [seq, seq < 5 ? BLOB_CHUNK_BYTES : big.length - 5 * BLOB_CHUNK_BYTES]),
    );
  } finally {
    await blobs.close();
  }
});

Deno.test("PostgreSQL blobs: two stores adopting the same bytes at once store them once", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const a = await openPostgresBlobStore(db.url, join(dir.path, "a"));
  const b = await openPostgresBlobStore(db.url, join(dir.path, "b"));
  try {
    const bytes = crypto.getRandomValues(new Uint8Array(65536));
    const paths = [await a.tempPath(), await b.tempPath()];
    for (const path of paths) await Deno.writeFile(path, bytes);
    const [x, y] = await Promise.all([a.adopt(paths[0]!), b.adopt(paths[1]!)]);
    assert.deepEqual(x, y);
    const sql = postgres(db.url, { max: 1 });
    const [count] = await sql`SELECT count(*)::int AS n FROM sergo_blob_chunks`;
    await sql.end();
    assert.equal(count!.n, 1);
    assert.deepEqual(await b.read(x.sha256), bytes);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("PostgreSQL blobs: a 200 MB upload is adopted in chunks, never whole in memory (64 MB heap, RSS growth below its size)", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const path = join(dir.path, "upload");
  const hash = createHash("sha256");
  const chunk = crypto.getRandomValues(new Uint8Array(65536));
  {
    using file = await Deno.open(path, { write: true, create: true });
    for (let i = 0; i < 200 * 16; i++) {
      chunk[0] = i & 0xff;
      chunk[1] = i >> 8;
      hash.update(chunk);
      await file.write(chunk);
    }
  }
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--v8-flags=--max-old-space-size=64",
      new URL("./_adopt_child.ts", import.meta.url).pathname,
      db.url,
      join(dir.path, "tmp"),
      path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.ok(output.success, stderr);
  const result = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(result.size, 200 * BLOB_CHUNK_BYTES);
  assert.equal(result.sha256, hash.digest("hex"));
  // Holding the upload whole would take 200 MiB at least; chunks and their garbage stay well below it.
  assert.ok(
    result.growthMb < 150,
    `adopting 200 MiB grew the resident memory by ${result.growthMb.toFixed(1)} MiB`,
  );
  const sql = postgres(db.url, { max: 1 });
  const [blob] = await sql`SELECT size::int AS size, chunks FROM sergo_blobs WHERE sha256 = ${result.sha256}`;
  await sql.end();
  assert.deepEqual({ ...blob }, { size: 200 * BLOB_CHUNK_BYTES, chunks: 200 });
});

Deno.test("PostgreSQL blobs: a large blob leaves no temporary row behind, and one left unfinished a day ago is removed", async () => {
  await using db = await testDatabase();
  await using dir = await tempDir();
  const blobs = await openPostgresBlobStore(db.url, join(dir.path, "tmp"));
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    const big = new Uint8Array(2 * BLOB_CHUNK_BYTES + 10).fill(7);
    const sha = await blobs.write(big);
    assert.deepEqual(await blobs.read(sha), big);
    const rows = await sql<{ sha256: string; size: string }[]>`SELECT sha256, size::text FROM sergo_blobs`;
    assert.deepEqual(rows.map((row) => [row.sha256, row.size]), [[sha, String(big.length)]]);
    // What a replica that lost the database in the middle of a large file leaves: a row of size -1 and chunks,
    // named by when it began (the first 16 hex digits), two days ago and a minute ago.
    const name = (msAgo: number) => (Date.now() - msAgo).toString(16).padStart(16, "0") + "ab".repeat(24);
    for (const ago of [2 * 86_400_000, 60_000]) {
      const unfinished = name(ago);
      await sql`INSERT INTO sergo_blobs (sha256, size, chunks) VALUES (${unfinished}, -1, 2)`;
      await sql`INSERT INTO sergo_blob_chunks (sha256, seq, bytes) VALUES (${unfinished}, 0, ${new Uint8Array(
        9,
      )})`;
    }
    assert.equal(await blobs.removeUnfinished(), 1);
    const left = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sergo_blobs WHERE size = -1`;
    assert.equal(left[0]!.n, 1, "the one begun a minute ago may still be being written");
    assert.deepEqual(await blobs.read(sha), big);
  } finally {
    await sql.end();
    await blobs.close();
  }
});
