/**
 * A Merkle tree over the event hashes of the whole log (RFC 6962 / 9162
 * shape): leaf = sha256(0x00 ‖ event hash), node = sha256(0x01 ‖ left ‖ right).
 * Its root is the signed checkpoint of an export; an inclusion proof (audit
 * path) shows that one event hash sits at its position under that root.
 *
 * The tree is built level by level into a temporary SQLite file, so a log of
 * millions of events needs a bounded amount of memory.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { sha256 } from "./_sha256.ts";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Buffer } from "node:buffer";

/** The leaf hash of one event hash (hex). */
export function leafHash(eventHashHex: string): Uint8Array {
  const input = new Uint8Array(33);
  input[0] = 0;
  for (let i = 0; i < 32; i++) input[i + 1] = hexByte(eventHashHex, i * 2);
  return sha256(input);
}

/** The hash of an inner node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = new Uint8Array(65);
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 33);
  return sha256(input);
}

function hexByte(hex: string, at: number): number {
  return (nibble(hex.charCodeAt(at)) << 4) | nibble(hex.charCodeAt(at + 1));
}

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  throw new RangeError("Cannot read a hash: expected hex digits");
}

/** Computes a root from leaves pushed in order, keeping only O(log n) hashes. */
export class MerkleRootBuilder {
  #stack: Array<{ hash: Uint8Array; size: number }> = [];
  #size = 0;

  /** Adds the next event hash (hex). */
  push(eventHashHex: string): void {
    let item = { hash: leafHash(eventHashHex), size: 1 };
    while (this.#stack.length > 0 && this.#stack[this.#stack.length - 1]!.size === item.size) {
      const left = this.#stack.pop()!;
      item = { hash: nodeHash(left.hash, item.hash), size: left.size * 2 };
    }
    this.#stack.push(item);
    this.#size++;
  }

  /** How many leaves were pushed. */
  get size(): number {
    return this.#size;
  }

  /** The root (hex); sha256 of nothing for an empty tree. */
  root(): string {
    if (this.#stack.length === 0) return createHash("sha256").digest("hex");
    let hash = this.#stack[this.#stack.length - 1]!.hash;
    for (let i = this.#stack.length - 2; i >= 0; i--) hash = nodeHash(this.#stack[i]!.hash, hash);
    return toHex(hash);
  }
}

/** Checks that `eventHashHex` is leaf `index` (0-based) of the tree of `size` leaves with root `rootHex`. */
export function verifyInclusion(
  eventHashHex: string,
  proof: { index: number; size: number; path: readonly string[]; root: string },
): boolean {
  if (!/^[0-9a-f]{64}$/.test(eventHashHex)) return false;
  if (!Number.isInteger(proof.index) || proof.index < 0 || proof.index >= proof.size) return false;
  let hash = leafHash(eventHashHex);
  let index = proof.index;
  let size = proof.size;
  let used = 0;
  while (size > 1) {
    const sibling = index ^ 1;
    if (sibling < size) {
      const step = proof.path[used++];
      if (step === undefined || !/^[0-9a-f]{64}$/.test(step)) return false;
      hash = index % 2 === 1 ? nodeHash(fromHex(step), hash) : nodeHash(hash, fromHex(step));
    }
    index = Math.floor(index / 2);
    size = Math.ceil(size / 2);
  }
  return used === proof.path.length && toHex(hash) === proof.root;
}

/** A Merkle tree stored level by level in a temporary SQLite file. */
export class MerkleTreeFile {
  readonly #db: DatabaseSync;
  readonly #path: string;
  readonly #sizes: number[];
  readonly #root: string;
  readonly #select: StatementSync[];

  private constructor(db: DatabaseSync, path: string, sizes: number[], root: string) {
    this.#db = db;
    this.#path = path;
    this.#sizes = sizes;
    this.#root = root;
    this.#select = sizes.map((_, level) => db.prepare(`SELECT h FROM level_${level} WHERE rowid = ?`));
  }

  /** Builds the tree from every event hash (hex) in log order. */
  static build(eventHashes: Iterable<string>): MerkleTreeFile {
    const path = Deno.makeTempFileSync({ prefix: "sergo-merkle-", suffix: ".db" });
    const db = new DatabaseSync(path);
    try {
      db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8000");
      const sizes: number[] = [];
      db.exec("CREATE TABLE level_0 (h BLOB NOT NULL)");
      db.exec("BEGIN");
      let insert = db.prepare("INSERT INTO level_0 (h) VALUES (?)");
      let count = 0;
      for (const hash of eventHashes) {
        insert.run(leafHash(hash));
        count++;
      }
      db.exec("COMMIT");
      sizes.push(count);
      let level = 0;
      while (sizes[level]! > 1) {
        db.exec(`CREATE TABLE level_${level + 1} (h BLOB NOT NULL)`);
        db.exec("BEGIN");
        insert = db.prepare(`INSERT INTO level_${level + 1} (h) VALUES (?)`);
        let left: Uint8Array | null = null;
        let next = 0;
        for (const row of db.prepare(`SELECT h FROM level_${level} ORDER BY rowid`).iterate()) {
          const hash = (row as { h: Uint8Array }).h;
          if (left === null) left = hash;
          else {
            insert.run(nodeHash(left, hash));
            left = null;
            next++;
          }
        }
        if (left !== null) {
          insert.run(left);
          next++;
        }
        db.exec("COMMIT");
        sizes.push(next);
        level++;
      }
      const top = count === 0 ? null : db.prepare(`SELECT h FROM level_${level} WHERE rowid = 1`).get() as {
        h: Uint8Array;
      };
      const root = top ? toHex(top.h) : createHash("sha256").digest("hex");
      return new MerkleTreeFile(db, path, sizes, root);
    } catch (error) {
      db.close();
      Deno.removeSync(path);
      throw error;
    }
  }

  /** How many leaves the tree has. */
  get size(): number {
    return this.#sizes[0] ?? 0;
  }

  /** The root (hex). */
  get root(): string {
    return this.#root;
  }

  /** The audit path of leaf `index` (0-based), bottom up, as hex hashes. */
  proof(index: number): string[] {
    if (index < 0 || index >= this.size) {
      throw new RangeError(`Cannot prove leaf ${index}: the tree has ${this.size} leaves`);
    }
    const path: string[] = [];
    let i = index;
    for (let level = 0; level < this.#sizes.length - 1; level++) {
      const sibling = i ^ 1;
      if (sibling < this.#sizes[level]!) {
        const row = this.#select[level]!.get(sibling + 1) as { h: Uint8Array };
        path.push(toHex(row.h));
      }
      i = Math.floor(i / 2);
    }
    return path;
  }

  /** Closes and deletes the temporary file. */
  close(): void {
    this.#db.close();
    try {
      Deno.removeSync(this.#path);
    } catch { /* already gone */ }
  }
}

function fromHex(hex: string): Uint8Array {
  return Buffer.from(hex, "hex");
}

function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}
