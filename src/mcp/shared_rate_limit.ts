/**
 * The per-key rate limit shared by every replica on one PostgreSQL: one token
 * bucket row per key (`sergo_rate_buckets`), refilled and taken from under the
 * row's lock on the database's clock, so a key's burst spread over any number
 * of replicas is refused at the key's limit, not at the limit times the
 * replicas. The takes that arrive while a statement is in flight go together
 * in the next one (`sergo_take_tokens`, in order), as the log's appends do:
 * one round trip per batch, not per call.
 *
 * Why this rather than the limit split by the replica count: a balancer may
 * keep one key on one replica (the cluster's HAProxy hashes a legacy SSE
 * session's `Authorization` header; keep-alive and stickiness do the same),
 * so a split limit would refuse that key at half its rate while the other
 * replica idles, and the count changes as replicas come and go. Why rather
 * than counting `McpCalled` events in each replica's copy of the log: the
 * copy lags the other replicas by the NOTIFY latency, so a burst would pass
 * twice over before it is seen. The cost per call is measured in
 * `bench/postgres.ts`.
 *
 * @module
 */
import { setImmediate } from "node:timers";
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
CREATE OR REPLACE FUNCTION sergo_take_tokens(keys text[], per_second double precision, burst double precision)
RETURNS double precision[] LANGUAGE plpgsql AS $fn$
DECLARE
  now_at timestamptz := clock_timestamp();
  have double precision;
  waits double precision[] := '{}';
  key text;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOREACH key IN ARRAY keys LOOP
    INSERT INTO sergo_rate_buckets AS b (key_id, tokens, at) VALUES (key, burst, now_at)
    ON CONFLICT (key_id) DO UPDATE SET
      tokens = least(burst, b.tokens + greatest(0, extract(epoch FROM now_at - b.at)) * per_second),
      at = greatest(b.at, now_at)
    RETURNING tokens INTO have;
    IF have >= 1 THEN
      UPDATE sergo_rate_buckets SET tokens = have - 1 WHERE key_id = key;
      waits := waits || 0::double precision;
    ELSE
      waits := waits || ((1 - have) / per_second);
    END IF;
  END LOOP;
  RETURN waits;
END
$fn$;
`;

/** Rate limits by key id, counted in PostgreSQL for all replicas. */
export class SharedRateLimiter {
  readonly #sql: postgres.Sql;
  readonly #perSecond: number;
  readonly #burst: number;
  #pending: { keyId: string; resolve: (decision: RateDecision) => void; reject: (error: unknown) => void }[] =
    [];
  #scheduled = false;
  #flushing = false;

  /** Wraps a connection pool whose database has the bucket table; prefer {@linkcode openSharedRateLimiter}. */
  constructor(sql: postgres.Sql, perSecond: number, burst: number) {
    this.#sql = sql;
    this.#perSecond = perSecond;
    this.#burst = Math.max(1, burst);
  }

  /**
   * Takes one call from the key's bucket (the database's clock decides; `_nowMs` is not used). The takes of
   * one turn of the event loop go in one statement, in order, as the log's appends do.
   */
  take(keyId: string, _nowMs?: number): Promise<RateDecision> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ keyId, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushing = true;
      this.#flush().finally(() => {
        this.#flushing = false;
        if (this.#pending.length > 0) this.#schedule();
      });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    try {
      const [row] = await this.#sql<{ waits: number[] }[]>`
        SELECT sergo_take_tokens(${
        batch.map((item) => item.keyId)
      }::text[], ${this.#perSecond}, ${this.#burst})
          AS waits`;
      batch.forEach((item, i) => {
        const wait = Number(row!.waits[i]);
        item.resolve(
          wait <= 0 ? { allowed: true } : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) },
        );
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
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
