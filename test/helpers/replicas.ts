/**
 * Real `serve` replicas behind a real HAProxy, for end-to-end tests: the same
 * code as `deno task cluster` (bench/cluster.ts). Each replica is a `deno run
 * main.ts serve` subprocess with the serve task's permissions and its own
 * data directory; HAProxy checks `/healthz` and spreads requests round robin.
 * A missing HAProxy or PostgreSQL fails the test, never skips it.
 *
 * ```ts
 * await using cluster = await testReplicas({ count: 3 });
 * await fetch(`${cluster.url}/healthz`);             // through HAProxy
 * await fetch(`${cluster.replicas[1]!.url}/healthz`); // replica 2 itself
 * await cluster.kill(2);                              // SIGKILL
 * await cluster.waitFor(2, "DOWN");
 * await cluster.restart(2);
 * ```
 *
 * Everything is stopped when the test process ends, even if the test did not
 * dispose of it.
 *
 * @module
 */
import { type ReplicaOptions, type Replicas, startReplicas } from "../../bench/cluster.ts";
import { testDatabase } from "./postgres.ts";

export {
  freePort,
  type Replica,
  type ReplicaOptions,
  type Replicas,
  startReplicas,
} from "../../bench/cluster.ts";

/**
 * Replicas on a fresh database of the tests' PostgreSQL (see postgres.ts); the
 * database is dropped when disposed. `prepare` runs first (e.g. CLI commands
 * against the database) before any replica starts.
 */
export async function testReplicas(
  options: Omit<ReplicaOptions, "databaseUrl"> & { prepare?: (databaseUrl: string) => Promise<void> } = {},
): Promise<Replicas> {
  const db = await testDatabase();
  try {
    await options.prepare?.(db.url);
    const replicas = await startReplicas({ ...options, databaseUrl: db.url });
    const stop = async () => {
      await replicas.stop();
      await db[Symbol.asyncDispose]();
    };
    return { ...replicas, stop, [Symbol.asyncDispose]: stop };
  } catch (error) {
    await db[Symbol.asyncDispose]();
    throw error;
  }
}
