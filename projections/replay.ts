/**
 * Replay: rebuilds every projection from position 0 into a fresh file and
 * swaps it in atomically.
 *
 * @module
 */
import type { EventStore } from "../events/store.ts";
import { projectionsFor } from "./all.ts";
import { projectionDigest } from "./digest.ts";
import { openProjector } from "./projector.ts";

/** Options of {@linkcode replayInto}. */
export interface ReplayOptions {
  /** Called after each batch with the position reached and the head. */
  onProgress?: (position: number, head: number) => void;
}

/**
 * Rebuilds the projections from the whole log into `targetPath`, by way of a
 * fresh temporary file renamed over it, and returns the digest and count.
 */
export async function replayInto(
  store: EventStore,
  targetPath: string,
  options: ReplayOptions = {},
): Promise<{ digest: string; events: number }> {
  const temp = `${targetPath}.replay-${crypto.randomUUID()}`;
  const projections = projectionsFor(store);
  const projector = openProjector(temp, projections, { onProgress: options.onProgress, batchSize: 2000 });
  let digest: string;
  let events: number;
  try {
    events = projector.catchUp(store);
    digest = projectionDigest(projector.db, projections);
    projector.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (error) {
    projector.close();
    await removeDatabase(temp);
    throw error;
  }
  projector.close();
  await Deno.rename(temp, targetPath);
  // The replaced file's write-ahead log must not be applied to the new file.
  for (const suffix of ["-wal", "-shm"]) await Deno.remove(`${targetPath}${suffix}`).catch(() => {});
  for (const suffix of ["-wal", "-shm"]) await Deno.remove(`${temp}${suffix}`).catch(() => {});
  return { digest, events };
}

/** Removes a SQLite database file with its WAL and shared-memory files. */
export async function removeDatabase(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(`${path}${suffix}`).catch(() => {});
}
