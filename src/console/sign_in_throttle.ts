/**
 * Slows down repeated failed sign-ins, in memory (on PostgreSQL every replica
 * shares the counts instead: shared_sign_in_throttle.ts), counting each attempt
 * before its password is checked (so parallel attempts cannot all slip past
 * the count while the hash runs). Three counts, each with its own allowance:
 *
 * - one account from one address: a few failures are free, then each further
 *   attempt waits twice as long as the one before, up to 15 minutes;
 * - one address over all accounts (guessing many accounts): many more free,
 *   then the same back-off — it slows that address only, never an account;
 * - one account from every address (a guess spread over many addresses): a
 *   slower back-off capped at a minute, and none at all from an address that
 *   signed in to the account before, so its owner is never locked out.
 *
 * @module
 */

/** Options of {@linkcode SignInThrottle}. */
export interface SignInThrottleOptions {
  /** Failures of one account from one address allowed before attempts must wait. */
  freeFailures?: number;
  /** The first wait, doubled at each further failure. */
  firstWaitMs?: number;
  /** The longest wait for one account from one address, and for one address. */
  maxWaitMs?: number;
  /** Failures from one address (any account) allowed before that address must wait. */
  addressFreeFailures?: number;
  /** Failures of one account (any address) allowed before new addresses must wait. */
  accountFreeFailures?: number;
  /** The longest wait for one account over all addresses. */
  accountMaxWaitMs?: number;
  /** How long failures are remembered after the last one. */
  forgetAfterMs?: number;
  /** How many counts (and known addresses) are tracked at most (the oldest are forgotten). */
  maxEntries?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/** Who is signing in. */
export interface SignInAttempter {
  email: string;
  address: string;
}

/** An attempt that may go ahead: say how it ended. */
export interface SignInReservation {
  /** The password was right: forget the account's failures and remember the address. */
  succeed(): void | Promise<void>;
}

/**
 * What counts sign-in attempts: {@linkcode SignInThrottle} in this process's
 * memory, or the one every replica on a PostgreSQL shares
 * (src/console/shared_sign_in_throttle.ts).
 */
export interface SignInCounter {
  /** Counts an attempt before its password is checked, or says how long it must wait (see SignInThrottle). */
  reserve(
    who: SignInAttempter,
  ): { waitMs: number } | SignInReservation | Promise<{ waitMs: number } | SignInReservation>;
}

/** The throttle's options with every default filled in. */
export type SignInLimits = Required<Omit<SignInThrottleOptions, "now">>;

/**
 * The defaults: 5 failures of an account from an address, then wait 1 s, 2 s,
 * 4 s… up to 15 minutes; 50 from an address over all accounts, the same
 * back-off; 20 of an account over all addresses, then up to a minute, except
 * from addresses it signed in from before; all forgotten an hour after the last.
 */
export function signInLimits(options: SignInThrottleOptions = {}): SignInLimits {
  return {
    freeFailures: options.freeFailures ?? 5,
    firstWaitMs: options.firstWaitMs ?? 1000,
    maxWaitMs: options.maxWaitMs ?? 15 * 60_000,
    addressFreeFailures: options.addressFreeFailures ?? 50,
    accountFreeFailures: options.accountFreeFailures ?? 20,
    accountMaxWaitMs: options.accountMaxWaitMs ?? 60_000,
    forgetAfterMs: options.forgetAfterMs ?? 60 * 60_000,
    maxEntries: options.maxEntries ?? 10_000,
  };
}

interface Count {
  count: number;
  last: number;
}

interface Rule {
  key: string;
  free: number;
  maxWait: number;
}

/** Counts sign-in attempts and says how long to wait before the next one. */
export class SignInThrottle implements SignInCounter {
  readonly #counts = new Map<string, Count>();
  readonly #known = new Map<string, true>();
  readonly #free: number;
  readonly #first: number;
  readonly #max: number;
  readonly #addressFree: number;
  readonly #accountFree: number;
  readonly #accountMax: number;
  readonly #forget: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  /** Creates a throttle (the defaults: {@linkcode signInLimits}). */
  constructor(options: SignInThrottleOptions = {}) {
    const limits = signInLimits(options);
    this.#free = limits.freeFailures;
    this.#first = limits.firstWaitMs;
    this.#max = limits.maxWaitMs;
    this.#addressFree = limits.addressFreeFailures;
    this.#accountFree = limits.accountFreeFailures;
    this.#accountMax = limits.accountMaxWaitMs;
    this.#forget = limits.forgetAfterMs;
    this.#maxEntries = limits.maxEntries;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Counts an attempt before its password is checked. Returns how long it must
   * still wait (and counts nothing) when it may not go ahead, or a reservation:
   * the attempt counts as a failure unless it {@linkcode SignInReservation.succeed}s.
   */
  reserve(who: SignInAttempter, now: number = this.#now()): { waitMs: number } | SignInReservation {
    const email = who.email.toLowerCase();
    const pair = `pair:${email}\n${who.address}`;
    const rules: Rule[] = [
      { key: pair, free: this.#free, maxWait: this.#max },
      { key: `address:${who.address}`, free: this.#addressFree, maxWait: this.#max },
    ];
    if (!this.#known.has(pair)) {
      rules.push({ key: `account:${email}`, free: this.#accountFree, maxWait: this.#accountMax });
    }
    let wait = 0;
    for (const rule of rules) wait = Math.max(wait, this.#waitFor(rule, now));
    if (wait > 0) return { waitMs: wait };
    for (const rule of rules) this.#count(rule.key, now);
    return {
      succeed: () => {
        this.#counts.delete(pair);
        this.#counts.delete(`account:${email}`);
        const address = this.#counts.get(`address:${who.address}`);
        if (address) address.count = Math.max(0, address.count - 1);
        this.#known.delete(pair);
        this.#known.set(pair, true);
        this.#trim(this.#known);
      },
    };
  }

  #waitFor(rule: Rule, now: number): number {
    const entry = this.#counts.get(rule.key);
    if (!entry) return 0;
    if (now - entry.last > this.#forget) {
      this.#counts.delete(rule.key);
      return 0;
    }
    if (entry.count < rule.free) return 0;
    const delay = Math.min(rule.maxWait, this.#first * 2 ** (entry.count - rule.free));
    return Math.max(0, entry.last + delay - now);
  }

  #count(key: string, now: number): void {
    const entry = this.#counts.get(key);
    this.#counts.delete(key);
    this.#counts.set(key, { count: (entry?.count ?? 0) + 1, last: now });
    this.#trim(this.#counts);
  }

  #trim(map: Map<string, unknown>): void {
    while (map.size > this.#maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }
}

/** A wait as people read it: "8 seconds", "2 minutes". */
export function describeWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return seconds === 1 ? "1 second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}
