/**
 * Who may use a data directory at once, held with an OS advisory lock on
 * `serve.lock` in it: each `serve` holds it shared, `replay` (which swaps the
 * projections file) holds it alone. The kernel drops a lock when its process
 * ends, even by SIGKILL, so a stale lock file never blocks anyone.
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "./args.ts";

/** The lock file's name inside the data directory. */
export const LOCK_FILE = "serve.lock";

function open(dataDir: string): Deno.FsFile {
  Deno.mkdirSync(dataDir, { recursive: true });
  return Deno.openSync(join(dataDir, LOCK_FILE), { read: true, write: true, create: true });
}

/**
 * Takes the lock for `serve` (shared with other servers on the directory);
 * refuses with one sentence while `replay` rebuilds it. Close the file to let go.
 */
export function lockForServe(dataDir: string): Deno.FsFile {
  const file = open(dataDir);
  if (!file.tryLockSync(false)) {
    file.close();
    throw new UsageError(
      `Cannot serve "${dataDir}" while replay rebuilds its projections: wait for replay to finish, then start serve`,
    );
  }
  return file;
}

/**
 * Takes the lock for `replay` (alone); refuses with one sentence while a
 * `serve` runs on the directory. Close the file to let go.
 */
export function lockForReplay(dataDir: string): Deno.FsFile {
  const file = open(dataDir);
  if (!file.tryLockSync(true)) {
    file.close();
    throw new UsageError(
      `Cannot replay "${dataDir}" while serve runs on it: replay swaps the projections file, so stop serve first`,
    );
  }
  return file;
}
