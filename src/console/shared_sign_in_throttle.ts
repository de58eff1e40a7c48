/**
 * The console's sign-in throttle shared by every replica on one PostgreSQL:
 * the same three counts and back-off as {@linkcode SignInThrottle} (one
 * account from one address, one address, one account from new addresses),
 * kept in one unlogged table (`sergo_sign_in_counts`) and decided by one SQL
 * function on the database's clock, one round trip per attempt. Each attempt
 * makes and locks its rows in key order before it reads them, so attempts at
 * once through any number of replicas are counted one after another, as in
 * one process: an attacker behind a load balancer gets the allowance once,
 * not once per replica.
 *
 * Unlogged and committed without waiting for the disk: the counts are worth
 * nothing after a crash (they start empty, as a restarted process's do).
 * What is older than the forgetting time is deleted now and then (about one
 * attempt in a hundred), so the table holds about an hour of attempts; an
 * address an account signed in from is remembered for 90 days.
 *
 * @module
 */
import type postgres from "postgres";
import { ensureSchema } from "../../events/postgres/schema.ts";
import {
  type SignInAttempter,
  type SignInCounter,
  type SignInLimits,
  signInLimits,
  type SignInReservation,
  type SignInThrottleOptions,
} from "./sign_in_throttle.ts";

const SCHEMA = `
CREATE UNLOGGED TABLE IF NOT EXISTS sergo_sign_in_counts (
  key text PRIMARY KEY,
  count integer NOT NULL,
  last_ms double precision NOT NULL
);
CREATE OR REPLACE FUNCTION sergo_sign_in_reserve(
  keys text[], frees integer[], max_waits double precision[], known_key text,
  first_ms double precision, forget_ms double precision, at_ms double precision)
RETURNS double precision LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms double precision := coalesce(at_ms, extract(epoch FROM clock_timestamp()) * 1000);
  n integer := array_length(keys, 1);
  longest double precision := 0;
  r record;
  i integer;
  c integer;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- The account's count (the last key) does not hold for an address that signed in to it before.
  IF EXISTS (SELECT 1 FROM sergo_sign_in_counts WHERE key = known_key) THEN n := n - 1; END IF;
  -- Each row made if new and locked in key order: attempts at once are counted one after another.
  INSERT INTO sergo_sign_in_counts (key, count, last_ms)
    SELECT k, 0, now_ms FROM unnest(keys[1:n]) AS k ORDER BY k ON CONFLICT DO NOTHING;
  FOR r IN SELECT s.key, s.count, s.last_ms FROM sergo_sign_in_counts s
    WHERE s.key = ANY (keys[1:n]) ORDER BY s.key FOR UPDATE LOOP
    i := array_position(keys, r.key);
    c := CASE WHEN now_ms - r.last_ms > forget_ms THEN 0 ELSE r.count END;
    IF c >= frees[i] THEN
      longest := greatest(longest,
        r.last_ms + least(max_waits[i], first_ms * 2 ^ least(c - frees[i], 60)) - now_ms);
    END IF;
  END LOOP;
  IF longest > 0 THEN RETURN longest; END IF;
  UPDATE sergo_sign_in_counts s
    SET count = CASE WHEN now_ms - s.last_ms > forget_ms THEN 1 ELSE s.count + 1 END, last_ms = now_ms
    WHERE s.key = ANY (keys[1:n]);
  IF random() < 0.01 THEN
    DELETE FROM sergo_sign_in_counts s WHERE s.key NOT LIKE 'known:%' AND s.last_ms < now_ms - forget_ms
      OR s.key LIKE 'known:%' AND s.last_ms < now_ms - 90 * 86400000.0;
  END IF;
  RETURN 0;
END
$fn$;
CREATE OR REPLACE FUNCTION sergo_sign_in_succeed(
  pair_key text, account_key text, address_key text, known_key text, at_ms double precision)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  DELETE FROM sergo_sign_in_counts WHERE key IN (pair_key, account_key);
  UPDATE sergo_sign_in_counts SET count = greatest(0, count - 1) WHERE key = address_key;
  INSERT INTO sergo_sign_in_counts (key, count, last_ms)
    VALUES (known_key, 0, coalesce(at_ms, extract(epoch FROM clock_timestamp()) * 1000))
    ON CONFLICT (key) DO UPDATE SET last_ms = EXCLUDED.last_ms;
END
$fn$;
`;

/** Sign-in attempts counted in PostgreSQL for all replicas. */
export class SharedSignInThrottle implements SignInCounter {
  readonly #sql: postgres.Sql;
  readonly #limits: SignInLimits;
  #schema: Promise<void> | null = null;

  /**
   * Counts in the database behind `sql` (the pool is the caller's to close).
   * The table and functions are made at the first attempt, so a replica's
   * start does not wait for them.
   */
  constructor(sql: postgres.Sql, options: Omit<SignInThrottleOptions, "now" | "maxEntries"> = {}) {
    this.#sql = sql;
    this.#limits = signInLimits(options);
  }

  /**
   * Counts an attempt before its password is checked, as
   * {@linkcode SignInThrottle.reserve} does; `atMs` (tests) replaces the
   * database's clock.
   */
  async reserve(
    who: SignInAttempter,
    atMs: number | null = null,
  ): Promise<{ waitMs: number } | SignInReservation> {
    await this.#ready();
    const email = who.email.toLowerCase();
    const pair = `pair:${email}\n${who.address}`;
    const address = `address:${who.address}`;
    const account = `account:${email}`;
    const known = `known:${email}\n${who.address}`;
    const l = this.#limits;
    const [row] = await this.#sql<{ wait: number }[]>`
      SELECT sergo_sign_in_reserve(
        ${[pair, address, account]}::text[],
        ${[l.freeFailures, l.addressFreeFailures, l.accountFreeFailures]}::integer[],
        ${[l.maxWaitMs, l.maxWaitMs, l.accountMaxWaitMs]}::double precision[],
        ${known}, ${l.firstWaitMs}, ${l.forgetAfterMs}, ${atMs}::double precision) AS wait`;
    const wait = Number(row!.wait);
    if (wait > 0) return { waitMs: wait };
    return {
      succeed: async () => {
        await this.#sql`
          SELECT sergo_sign_in_succeed(${pair}, ${account}, ${address}, ${known}, ${atMs}::double precision)`;
      },
    };
  }

  #ready(): Promise<void> {
    // Replicas starting at once must not both create the functions (the schema's own lock).
    this.#schema ??= ensureSchema(this.#sql, {
      ddl: SCHEMA,
      lock: 8317403,
      tables: ["sergo_sign_in_counts"],
      functions: [
        "sergo_sign_in_reserve(text[], integer[], double precision[], text, double precision, double precision, double precision)",
        "sergo_sign_in_succeed(text, text, text, text, double precision)",
      ],
    }).catch((error) => {
      this.#schema = null; // try again at the next attempt
      throw error;
    });
    return this.#schema;
  }
}
