/**
 * The per-key rate limit shared by every replica on one PostgreSQL: one token
 * bucket row per key (`sergo_rate_buckets`), refilled and taken from by one
 * statement (`sergo_take_token`, one round trip) under the row's lock, on the
 * database's clock, so a key's burst spread over any number of replicas is
 * refused at the key's limit, not at the limit times the replicas.
 *
 * Why this rather than the limit split by the replica count: a balancer may
 * keep one key on one replica (the cluster's HAProxy hashes a legacy SSE
 * session's `Authorization` header; keep-alive and stickiness do the same),
 * so a split limit would refuse that key at half its rate while the other
 * replica idles, and the count changes as replicas come and go. Why rather than counting `McpCalled` events in each
 * replica's copy of the log: the copy lags the other replicas by the NOTIFY
 * latency, so a burst would pass twice over before it is seen. The cost, one
 * round trip per call, is measured in `bench/postgres.ts`.
 *
 * @module
 */
import postgres from "postgres";
import type { RateDecision } from "./rate_limit.ts";

/**
 * Unlogged, and committed without waiting for the disk: a bucket is worth
 * nothing after a crash (it starts full again), and a call must not wait for
 * a WAL flush while it holds its key's row (every call of that key waits
 * behind it). Measured: 17 ms a call with the flush on a busy disk.
 */
const SCHEMA = `
CREATE UNLOGGED TABLE IF NOT EXISTS sergo_rate_buckets (
  key_id text PRIMARY KEY,
  tokens double precision NOT NULL,
  at timestamptz NOT NULL
);
CREATE OR REPLACE FUNCTION sergo_take_token(key text, per_second double precision, burst double precision)
RETURNS double precision LANGUAGE plpgsql AS $fn$
DECLARE
  now_at timestamptz := clock_timestamp();
  have double precision;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO sergo_rate_buckets AS b (key_id, tokens, at) VALUES (key, burst, now_at)
  ON CONFLICT (key_id) DO UPDATE SET
    tokens = least(burst, b.tokens + greatest(0, extract(epoch FROM now_at - b.at)) * per_second),
    at = greatest(b.at, now_at)
  RETURNING tokens INTO have;
  IF have >= 1 THEN
    UPDATE sergo_rate_buckets SET tokens = have - 1 WHERE key_id = key;
    RETURN 0;
  END IF;
  RETURN (1 - have) / per_second;
END
$fn$;
`;

/** Rate limits by key id, counted in PostgreSQL for all replicas. */
export class SharedRateLimiter {
  readonly #sql: postgres.Sql;
  readonly #perSecond: number;
  readonly #burst: number;

  /** Wraps a connection pool whose database has the bucket table; prefer {@linkcode openSharedRateLimiter}. */
  constructor(sql: postgres.Sql, perSecond: number, burst: number) {
    this.#sql = sql;
    this.#perSecond = perSecond;
    this.#burst = Math.max(1, burst);
  }

  /** Takes one call from the key's bucket (the database's clock decides; `_nowMs` is not used). */
  async take(keyId: string, _nowMs?: number): Promise<RateDecision> {
    const [row] = await this.#sql<{ wait: number }[]>`
      SELECT sergo_take_token(${keyId}, ${this.#perSecond}, ${this.#burst}) AS wait`;
    const wait = Number(row!.wait);
    if (wait <= 0) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }

  /** Closes its connections. */
  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

/** Opens the shared limiter on `url`, creating its table and function if needed. */
export async function openSharedRateLimiter(
  url: string,
  limits: { perSecond: number; burst: number },
): Promise<SharedRateLimiter> {
  const sql = postgres(url, {
    max: 4,
    onnotice: () => {},
    connect_timeout: 10,
    // As the log's pool: reconnect within half a second, so calls fail with 503 while the server is down
    // instead of hanging in the driver's backoff, and work again as soon as it is back.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
  });
  try {
    await sql.begin(async (tx) => {
      // Replicas starting at once must not both create the function (the log's own lock).
      await tx`SELECT pg_advisory_xact_lock(8317401)`;
      await tx.unsafe(SCHEMA);
    });
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
  return new SharedRateLimiter(sql, limits.perSecond, limits.burst);
}
