/**
 * A token bucket per key: `perSecond` calls refilled continuously, up to
 * `burst` at once, so one runaway agent cannot starve the others.
 *
 * @module
 */
import type { TokenTake } from "../../events/store.ts";

/** The answer of {@linkcode RateLimiter.take}: allowed, or how long to wait. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** What the MCP endpoint asks before a call: this process's buckets, or the replicas' shared ones. */
export interface KeyRateLimit {
  /** Takes one call from the key's bucket at time `nowMs`. */
  take(keyId: string, nowMs: number): RateDecision | Promise<RateDecision>;
  /**
   * Buckets in the log's database only: the token of a call, to be taken in
   * the same statement as the call's audit entry (see `TokenTake`).
   */
  tokenFor?(keyId: string): TokenTake;
  /** Buckets in the log's database only: a refusal known without asking it, else null. */
  surelyRefused?(keyId: string): RateDecision | null;
}

/** Rate limits by key id, counted in this process (the embedded server). */
export class RateLimiter implements KeyRateLimit {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  /** A limiter of `perSecond` calls a second with bursts of `burst`. */
  constructor(perSecond: number, burst: number) {
    this.#perSecond = perSecond;
    this.#burst = Math.max(1, burst);
  }

  /** Takes one call from the key's bucket at time `nowMs`. */
  take(keyId: string, nowMs: number): RateDecision {
    let bucket = this.#buckets.get(keyId);
    if (!bucket) {
      if (this.#buckets.size > 100_000) this.#buckets.clear();
      bucket = { tokens: this.#burst, at: nowMs };
      this.#buckets.set(keyId, bucket);
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.#perSecond);
      bucket.at = nowMs;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perSecond)),
    };
  }
}
