/**
 * The per-key rate limit shared by every replica on one PostgreSQL: one token
 * bucket row per key (`sergo_rate_buckets`), refilled and taken from under the
 * row's lock on the database's clock, so a key's burst spread over any number
 * of replicas is refused at the key's limit, not at the limit times the
 * replicas.
 *
 * A tool call's token is taken in the statement that writes its audit entry
 * (the log's `sergo_group_commit`, through {@linkcode SharedRateLimiter.tokenFor}):
 * one round trip for both, and the entry is written only if the token was
 * there, so a refused call leaves none (it ran its tool for nothing; that is
 * bounded by what arrives within one group commit, since the answer tells
 * this process the bucket is empty and it refuses the key's next calls
 * itself, {@linkcode SharedRateLimiter.surelyRefused}, until the bucket can
 * have refilled). Requests that write no audit entry (tools/list, a refused
 * or malformed request) take theirs on their own: those that arrive while a
 * statement is in flight go together in the next one (`sergo_take_tokens`,
 * in order), as the log's appends do. Both lock the buckets in key order.
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
import { ensureSchema } from "../../events/postgres/schema.ts";
import type { TokenTake } from "../../events/store.ts";
import type { KeyRateLimit, RateDecision } from "./rate_limit.ts";

/**
 * Unlogged, and the standalone takes commit without waiting for the disk: a
 * bucket is worth nothing after a crash (it starts full again), and a take
 * must not wait for a WAL flush while it holds its key's row (every call of
 * that key waits behind it; measured: 17 ms a call with the flush on a busy
 * disk). The takes in a group commit hold their rows until its flush, as
 * they hold the chain head, which every audited call waits for anyway.
 * (The table is also made by the log's schema, events/postgres/group_commit_sql.ts.)
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
  buckets jsonb := '{}'::jsonb;
  waits double precision[] := '{}';
  bucket_key text;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Each bucket refilled once and locked in key order, as sergo_group_commit (the log's) locks them.
  FOR bucket_key IN SELECT DISTINCT k FROM unnest(keys) AS k ORDER BY k LOOP
    INSERT INTO sergo_rate_buckets AS b (key_id, tokens, at) VALUES (bucket_key, burst, now_at)
    ON CONFLICT (key_id) DO UPDATE SET
      tokens = least(burst, b.tokens + greatest(0, extract(epoch FROM now_at - b.at)) * per_second),
      at = greatest(b.at, now_at)
    RETURNING b.tokens INTO have;
    buckets := buckets || jsonb_build_object(bucket_key, have);
  END LOOP;
  FOREACH bucket_key IN ARRAY keys LOOP
    have := (buckets->>bucket_key)::double precision;
    IF have >= 1 THEN
      buckets := buckets || jsonb_build_object(bucket_key, have - 1);
      waits := waits || 0::double precision;
    ELSE
      waits := waits || ((1 - have) / per_second);
    END IF;
  END LOOP;
  UPDATE sergo_rate_buckets r SET tokens = b.value::double precision
  FROM jsonb_each_text(buckets) b WHERE r.key_id = b.key;
  RETURN waits;
END
$fn$;
`;

/** Keys whose last known bucket this process keeps, at most (the oldest forgotten first). */
const KNOWN_KEYS = 10_000;

/** Rate limits by key id, counted in PostgreSQL for all replicas. */
export class SharedRateLimiter implements KeyRateLimit {
  readonly #sql: postgres.Sql;
  readonly #perSecond: number;
  readonly #burst: number;
  /** Each key's tokens as the database last told, and when (`performance.now()` before that statement was sent). */
  readonly #known = new Map<string, { tokens: number; at: number }>();
  #statements = 0;
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
   * one turn of the event loop go in one statement, in order, as the log's appends do. A key this process
   * knows to be empty is refused without asking (see {@linkcode SharedRateLimiter.surelyRefused}).
   */
  take(keyId: string, _nowMs?: number): Promise<RateDecision> {
    const refused = this.surelyRefused(keyId);
    if (refused) return Promise.resolve(refused);
    return new Promise((resolve, reject) => {
      this.#pending.push({ keyId, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * The token of one call, to take with its audit entry in the log's group
   * commit ({@linkcode TokenTake}): one round trip for both, and the call is
   * audited only if its token was there.
   */
  tokenFor(keyId: string): TokenTake {
    return {
      keyId,
      perSecond: this.#perSecond,
      burst: this.#burst,
      told: (tokens, at) => this.#learn(keyId, tokens, at),
    };
  }

  /**
   * A refusal decided here, without a round trip, when the key's bucket is
   * surely empty: what the database last told of it, refilled for all the
   * time since that statement was sent, is less than one call. Other replicas
   * only ever take from the bucket, so it holds no more than that; otherwise
   * null (ask the database).
   */
  surelyRefused(keyId: string): RateDecision | null {
    const known = this.#known.get(keyId);
    if (!known) return null;
    const tokens = Math.min(
      this.#burst,
      known.tokens + (Math.max(0, performance.now() - known.at) / 1000) * this.#perSecond,
    );
    if (tokens >= 1) return null;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.#perSecond)) };
  }

  /** Its connection pool (the shared sign-in throttle counts in the same database through it). */
  get pool(): postgres.Sql {
    return this.#sql;
  }

  /** How many statements the standalone takes have sent (the takes that rode with an audit entry sent none). */
  get statements(): number {
    return this.#statements;
  }

  #learn(keyId: string, tokens: number, at: number): void {
    const known = this.#known.get(keyId);
    if (known && known.at > at) return; // a later statement already told
    this.#known.delete(keyId);
    if (this.#known.size >= KNOWN_KEYS) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(keyId, { tokens, at });
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
    const sentAt = performance.now();
    this.#statements++;
    try {
      const [row] = await this.#sql<{ waits: number[] }[]>`
        SELECT sergo_take_tokens(${
        batch.map((item) => item.keyId)
      }::text[], ${this.#perSecond}, ${this.#burst})
          AS waits`;
      batch.forEach((item, i) => {
        const wait = Number(row!.waits[i]);
        // A refusal says what the bucket held (a take that passed says only that it held one).
        if (wait > 0) this.#learn(item.keyId, 1 - wait * this.#perSecond, sentAt);
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
    // Replicas starting at once must not both create the function (the log's own lock).
    await ensureSchema(sql, {
      ddl: SCHEMA,
      lock: 8317401,
      tables: ["sergo_rate_buckets"],
      functions: ["sergo_take_tokens(text[], double precision, double precision)"],
    });
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
  return new SharedRateLimiter(sql, limits.perSecond, limits.burst);
}
