/**
 * Slows down repeated failed sign-ins, per email and per client address, in
 * memory: a few failures are free, then each further attempt must wait twice
 * as long as the one before (up to 15 minutes).
 *
 * @module
 */

/** Options of {@linkcode SignInThrottle}. */
export interface SignInThrottleOptions {
  /** Failures allowed before attempts must wait. */
  freeFailures?: number;
  /** The first wait, doubled at each further failure. */
  firstWaitMs?: number;
  /** The longest wait. */
  maxWaitMs?: number;
  /** How long failures are remembered after the last one. */
  forgetAfterMs?: number;
  /** How many emails and addresses are tracked at most (the oldest are forgotten). */
  maxEntries?: number;
}

interface Failures {
  count: number;
  last: number;
}

/** Counts failed sign-ins and says how long to wait before the next attempt. */
export class SignInThrottle {
  readonly #entries = new Map<string, Failures>();
  readonly #free: number;
  readonly #first: number;
  readonly #max: number;
  readonly #forget: number;
  readonly #maxEntries: number;

  /** Creates a throttle; the defaults allow 5 failures, then wait 1 s, 2 s, 4 s… up to 15 minutes. */
  constructor(options: SignInThrottleOptions = {}) {
    this.#free = options.freeFailures ?? 5;
    this.#first = options.firstWaitMs ?? 1000;
    this.#max = options.maxWaitMs ?? 15 * 60_000;
    this.#forget = options.forgetAfterMs ?? 60 * 60_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** How many milliseconds the attempt for these keys (email, address) must still wait; 0 when it may go ahead. */
  waitMs(keys: readonly string[], now: number): number {
    let wait = 0;
    for (const key of keys) {
      const entry = this.#entries.get(key);
      if (!entry) continue;
      if (now - entry.last > this.#forget) {
        this.#entries.delete(key);
        continue;
      }
      if (entry.count < this.#free) continue;
      const delay = Math.min(this.#max, this.#first * 2 ** (entry.count - this.#free));
      wait = Math.max(wait, entry.last + delay - now);
    }
    return Math.max(0, wait);
  }

  /** Records a failed attempt for these keys. */
  fail(keys: readonly string[], now: number): void {
    for (const key of keys) {
      const entry = this.#entries.get(key);
      this.#entries.delete(key);
      this.#entries.set(key, { count: (entry?.count ?? 0) + 1, last: now });
    }
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /** Forgets the failures of these keys after a successful sign-in. */
  succeed(keys: readonly string[]): void {
    for (const key of keys) this.#entries.delete(key);
  }
}

/** A wait as people read it: "8 seconds", "2 minutes". */
export function describeWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return seconds === 1 ? "1 second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}
