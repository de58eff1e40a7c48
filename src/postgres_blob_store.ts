/**
 * Blobs (originals, PDF copies) in PostgreSQL, shared by every replica on one
 * database: content-addressed by sha256 as on disk, stored in 1 MiB chunks so
 * that a large upload is streamed from its temporary file to the database and
 * never sits whole in memory. A blob's row appears with all its chunks in one
 * statement, so a blob is either complete or absent; two replicas adopting
 * the same bytes at once write them once (the second waits on the first's row
 * and then finds it there). Page renders stay in each replica's local cache.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import postgres from "postgres";
import { ensureSchema } from "../events/postgres/schema.ts";
import { DatabaseUnavailableError } from "../events/postgres/errors.ts";
import type { Blobs } from "./blob_store.ts";

/** The size of one stored chunk. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sergo_blobs (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size bigint NOT NULL,
  chunks integer NOT NULL
);
CREATE TABLE IF NOT EXISTS sergo_blob_chunks (
  sha256 text NOT NULL REFERENCES sergo_blobs (sha256) ON DELETE CASCADE,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (sha256, seq)
);
`;

type Sql = postgres.Sql<Record<string, never>>;

/**
 * How long a read's statement may go unanswered before it fails as the
 * database being unreachable. The driver (postgres 3.4.9) can lose a query
 * when a connection closes with a write still queued (PostgreSQL restarted):
 * it then waits with no timer until some other query opens a connection, so a
 * worker reading a document would hold its lease, renewed, forever.
 */
const ANSWER_MS = 30_000;

/** `query`, or a `DatabaseUnavailableError` when it has no answer within {@linkcode ANSWER_MS}. */
function answered<T>(query: PromiseLike<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DatabaseUnavailableError(`${what}: the database did not answer within ${ANSWER_MS / 1000} s`),
        ),
      ANSWER_MS,
    );
  });
  return Promise.race([query, late]).finally(() => clearTimeout(timer));
}

/** How long an unfinished blob (a large file being stored) is kept before a replica's start removes it. */
const UNFINISHED_KEPT_MS = 24 * 60 * 60 * 1000;

/**
 * The temporary name of a blob being stored: 64 hex digits like a sha256,
 * the time in its first 16 (so names sort by when they were made), random
 * after; its row has size -1 until it is renamed.
 */
function unfinishedName(at: number): string {
  const random = [...crypto.getRandomValues(new Uint8Array(24))].map((b) => b.toString(16).padStart(2, "0"));
  return Math.max(0, Math.floor(at)).toString(16).padStart(16, "0") + random.join("");
}

function checkName(sha256: string): void {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`Not a blob name: "${sha256}"`);
}

/** Opens the blob tables at `url` (creating them if needed); temporary upload files go under `tempRoot`. */
export async function openPostgresBlobStore(url: string, tempRoot: string): Promise<PostgresBlobStore> {
  // Reconnect within half a second, as the log does (the driver's default waits up to 20 s after failures).
  const sql = postgres(url, {
    max: 2,
    onnotice: () => {},
    connect_timeout: 10,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
  }) as unknown as Sql;
  try {
    await ensureSchema(sql, {
      ddl: SCHEMA,
      lock: 8317402,
      tables: ["sergo_blobs", "sergo_blob_chunks"],
      functions: [],
    });
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new Error(`Cannot open the blob store: ${error instanceof Error ? error.message : String(error)}`);
  }
  return new PostgresBlobStore(sql, tempRoot);
}

/** Blobs in PostgreSQL; see the module documentation. */
export class PostgresBlobStore implements Blobs {
  readonly #sql: Sql;
  readonly #tempRoot: string;
  /** The removal of what was left unfinished a day ago or more (nothing waits for it but close). */
  readonly #removing: Promise<void>;

  /** Wraps an open pool; prefer {@linkcode openPostgresBlobStore}. */
  constructor(sql: Sql, tempRoot: string) {
    this.#sql = sql;
    this.#tempRoot = tempRoot;
    this.#removing = this.removeUnfinished().then(() => {}, (error) => {
      console.error(
        `Cannot remove unfinished blobs: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  async has(sha256: string): Promise<boolean> {
    checkName(sha256);
    const rows = await answered(
      this.#sql`SELECT 1 FROM sergo_blobs WHERE sha256 = ${sha256}`,
      `Cannot look for blob ${sha256}`,
    );
    return rows.length > 0;
  }

  /** The blob's size in bytes, or null when there is none. */
  async size(sha256: string): Promise<number | null> {
    checkName(sha256);
    const [row] = await answered(
      this.#sql<{ size: string }[]>`SELECT size FROM sergo_blobs WHERE sha256 = ${sha256}`,
      `Cannot look for blob ${sha256}`,
    );
    return row ? Number(row.size) : null;
  }

  async read(sha256: string): Promise<Uint8Array> {
    checkName(sha256);
    const [blob] = await answered(
      this.#sql<{ size: string; chunks: number }[]>`
        SELECT size, chunks FROM sergo_blobs WHERE sha256 = ${sha256}`,
      `Cannot read blob ${sha256}`,
    );
    if (!blob) throw new Deno.errors.NotFound(`No blob ${sha256}`);
    const out = new Uint8Array(Number(blob.size));
    let offset = 0;
    for await (const chunk of this.chunks(sha256)) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    if (offset !== out.byteLength) throw new Error(`Blob ${sha256} is incomplete in the database`);
    return out;
  }

  /** The blob's bytes as a stream, one chunk read from the database at a time, as the reader pulls. */
  async stream(sha256: string): Promise<ReadableStream<Uint8Array>> {
    if (!(await this.has(sha256))) throw new Deno.errors.NotFound(`No blob ${sha256}`);
    const chunks = this.chunks(sha256)[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return?.();
      },
    }, { highWaterMark: 1 });
  }

  /** The blob's bytes chunk by chunk, one chunk in memory at a time. */
  async *chunks(sha256: string): AsyncIterable<Uint8Array> {
    checkName(sha256);
    const [blob] = await answered(
      this.#sql<{ chunks: number }[]>`SELECT chunks FROM sergo_blobs WHERE sha256 = ${sha256}`,
      `Cannot read blob ${sha256}`,
    );
    if (!blob) throw new Deno.errors.NotFound(`No blob ${sha256}`);
    for (let seq = 0; seq < blob.chunks; seq++) {
      const [row] = await answered(
        this.#sql<{ bytes: Uint8Array }[]>`
          SELECT bytes FROM sergo_blob_chunks WHERE sha256 = ${sha256} AND seq = ${seq}`,
        `Cannot read blob ${sha256}`,
      );
      if (!row) throw new Error(`Blob ${sha256} is missing chunk ${seq} in the database`);
      yield new Uint8Array(row.bytes);
    }
  }

  async write(bytes: Uint8Array): Promise<string> {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    await this.#store(sha256, bytes.byteLength, async function* () {
      for (let i = 0; i < bytes.byteLength; i += BLOB_CHUNK_BYTES) {
        yield bytes.subarray(i, i + BLOB_CHUNK_BYTES);
      }
    });
    return sha256;
  }

  /**
   * Stores a file streamed to disk (an upload), hashing it in a first pass and
   * copying it chunk by chunk in a second, then removes the file.
   */
  async adopt(tempPath: string): Promise<{ sha256: string; size: number }> {
    const stored = await this.copyFile(tempPath);
    await Deno.remove(tempPath).catch(() => {});
    return stored;
  }

  /** Stores a file's bytes, chunk by chunk, leaving the file where it is; returns its sha256 and size. */
  async copyFile(path: string): Promise<{ sha256: string; size: number }> {
    const tempPath = path;
    const hash = createHash("sha256");
    let size = 0;
    {
      using file = await Deno.open(tempPath, { read: true });
      for await (const chunk of file.readable) {
        hash.update(chunk);
        size += chunk.byteLength;
      }
    }
    const sha256 = hash.digest("hex");
    await this.#store(sha256, size, () => fileChunks(tempPath));
    return { sha256, size };
  }

  async tempPath(): Promise<string> {
    await Deno.mkdir(this.#tempRoot, { recursive: true });
    return join(this.#tempRoot, crypto.randomUUID());
  }

  /**
   * Writes the blob's row and chunks unless it is stored already, without a
   * client-side transaction: the driver (postgres 3.4.9) runs its `ROLLBACK`
   * on a transaction's connection after that connection was lost, and the
   * write it schedules then throws an uncatchable `TypeError` (porsager/postgres
   * #1154, #1208) that ended the process when PostgreSQL restarted during an
   * upload. A blob of one chunk goes in one statement; a longer one is written
   * under a temporary name first (a row of size -1, see {@linkcode unfinishedName})
   * and renamed in one statement, so a reader sees a blob whole or not at all.
   */
  async #store(sha256: string, size: number, chunks: () => AsyncIterable<Uint8Array>): Promise<void> {
    const count = Math.ceil(size / BLOB_CHUNK_BYTES);
    if (count <= 1) {
      const parts: Uint8Array[] = [];
      for await (const chunk of chunks()) parts.push(chunk);
      if (parts.length !== count) {
        throw new Error(`The file changed while it was stored (${parts.length} chunks, not ${count})`);
      }
      await this.#sql`
        WITH blob AS (
          INSERT INTO sergo_blobs (sha256, size, chunks) VALUES (${sha256}, ${size}, ${count})
          ON CONFLICT DO NOTHING RETURNING sha256)
        INSERT INTO sergo_blob_chunks (sha256, seq, bytes)
        SELECT sha256, 0, ${parts[0] ?? new Uint8Array()}::bytea FROM blob WHERE ${count} = 1`;
      return;
    }
    if (await this.has(sha256)) return; // the same bytes are there already
    const temporary = unfinishedName(Date.now());
    await this.#sql`INSERT INTO sergo_blobs (sha256, size, chunks) VALUES (${temporary}, -1, ${count})`;
    try {
      let seq = 0;
      for await (const chunk of chunks()) {
        await this.#sql`
          INSERT INTO sergo_blob_chunks (sha256, seq, bytes) VALUES (${temporary}, ${seq}, ${chunk})`;
        seq++;
      }
      if (seq !== count) {
        throw new Error(`The file changed while it was stored (${seq} chunks, not ${count})`);
      }
      // Whole or not at all: the row under its name and its chunks moved to it in one statement (a replica that
      // stored the same bytes first leaves this one's chunks behind, removed with the temporary row below).
      await this.#sql`
        WITH blob AS (
          INSERT INTO sergo_blobs (sha256, size, chunks) VALUES (${sha256}, ${size}, ${count})
          ON CONFLICT DO NOTHING RETURNING sha256)
        UPDATE sergo_blob_chunks SET sha256 = blob.sha256 FROM blob WHERE sergo_blob_chunks.sha256 = ${temporary}`;
    } finally {
      // Its chunks go with it (ON DELETE CASCADE); left behind when the database is away, for removeUnfinished.
      await this.#sql`DELETE FROM sergo_blobs WHERE sha256 = ${temporary}`.catch(() => {});
    }
  }

  /**
   * Removes blobs left unfinished more than `olderThanMs` ago (a replica that
   * stopped, or lost the database, in the middle of storing a large file).
   */
  async removeUnfinished(olderThanMs = UNFINISHED_KEPT_MS): Promise<number> {
    const before = unfinishedName(Date.now() - olderThanMs);
    const removed = await this.#sql`
      DELETE FROM sergo_blobs WHERE size = -1 AND sha256 COLLATE "C" < ${before}`;
    return removed.count;
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.#removing;
    await this.#sql.end({ timeout: 5 });
  }
}

/** A file's bytes in chunks of exactly {@linkcode BLOB_CHUNK_BYTES} (the last one shorter). */
async function* fileChunks(path: string): AsyncIterable<Uint8Array> {
  using file = await Deno.open(path, { read: true });
  const buffer = new Uint8Array(BLOB_CHUNK_BYTES);
  for (;;) {
    let filled = 0;
    while (filled < BLOB_CHUNK_BYTES) {
      const n = await file.read(buffer.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    if (filled === 0) return;
    yield buffer.slice(0, filled);
    if (filled < BLOB_CHUNK_BYTES) return;
  }
}
