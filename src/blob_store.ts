/**
 * Content-addressed blobs under `data/blobs/`: originals, PDF copies and
 * cached page renders, each named by the sha256 of its bytes (or, for derived
 * blobs, of its key).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

/**
 * The shared blobs (originals, PDF copies) as the domain and workers use
 * them: on disk ({@linkcode BlobStore}) or in PostgreSQL
 * (`src/postgres_blob_store.ts`), content-addressed by sha256 either way.
 */
export interface Blobs {
  /** Whether the blob exists. */
  has(sha256: string): Promise<boolean>;
  /** Reads a blob's bytes. */
  read(sha256: string): Promise<Uint8Array>;
  /** A blob's bytes as a stream, never whole in memory (downloads). */
  stream(sha256: string): Promise<ReadableStream<Uint8Array>>;
  /** Writes bytes and returns their sha256; writing the same bytes twice is harmless. */
  write(bytes: Uint8Array): Promise<string>;
  /** Moves a file streamed to {@linkcode Blobs.tempPath} into the store; returns its sha256 and size. */
  adopt(tempPath: string): Promise<{ sha256: string; size: number }>;
  /** A temporary path for a file about to be adopted. */
  tempPath(): Promise<string>;
}

/** Where blobs live and how they are named. */
export class BlobStore implements Blobs {
  /** Creates a store rooted at `root` (created on first write). */
  constructor(readonly root: string) {}

  /** The path of the blob with this sha256. */
  path(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`Not a blob name: "${sha256}"`);
    return join(this.root, sha256.slice(0, 2), sha256);
  }

  /** Whether the blob exists. */
  async has(sha256: string): Promise<boolean> {
    try {
      await Deno.stat(this.path(sha256));
      return true;
    } catch {
      return false;
    }
  }

  /** Reads a blob's bytes. */
  read(sha256: string): Promise<Uint8Array> {
    return Deno.readFile(this.path(sha256));
  }

  /** A blob's bytes as a stream from its file. */
  async stream(sha256: string): Promise<ReadableStream<Uint8Array>> {
    return (await Deno.open(this.path(sha256), { read: true })).readable;
  }

  /** Writes bytes and returns their sha256; writing the same bytes twice is harmless. */
  async write(bytes: Uint8Array): Promise<string> {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    await this.#put(sha256, bytes);
    return sha256;
  }

  /** Writes bytes under a name derived from `key` (for caches such as page renders). */
  async writeDerived(key: string, bytes: Uint8Array): Promise<string> {
    const name = createHash("sha256").update(`derived:${key}`).digest("hex");
    await this.#put(name, bytes);
    return name;
  }

  /** The name a derived blob with this key has. */
  derivedName(key: string): string {
    return createHash("sha256").update(`derived:${key}`).digest("hex");
  }

  /**
   * Moves a file that was streamed to disk into the store, hashing it as it is
   * read, and returns its sha256 and size.
   */
  async adopt(tempPath: string): Promise<{ sha256: string; size: number }> {
    const hash = createHash("sha256");
    let size = 0;
    using file = await Deno.open(tempPath, { read: true });
    for await (const chunk of file.readable) {
      hash.update(chunk);
      size += chunk.byteLength;
    }
    const sha256 = hash.digest("hex");
    const target = this.path(sha256);
    await Deno.mkdir(join(this.root, sha256.slice(0, 2)), { recursive: true });
    await Deno.rename(tempPath, target);
    return { sha256, size };
  }

  /** A temporary path inside the store's folder, on the same file system. */
  async tempPath(): Promise<string> {
    const dir = join(this.root, "tmp");
    await Deno.mkdir(dir, { recursive: true });
    return join(dir, crypto.randomUUID());
  }

  async #put(name: string, bytes: Uint8Array): Promise<void> {
    const target = this.path(name);
    await Deno.mkdir(join(this.root, name.slice(0, 2)), { recursive: true });
    const temp = `${target}.${crypto.randomUUID()}.tmp`;
    await Deno.writeFile(temp, bytes);
    await Deno.rename(temp, target);
  }
}
