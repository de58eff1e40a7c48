/**
 * How many OAuth clients an address may register in an hour (and all
 * addresses together). Embedded, this process counts them in memory
 * ({@linkcode LocalRegistrationLimit}); replicas on one PostgreSQL count them
 * together there ({@linkcode SharedRegistrationLimit}), so behind a load
 * balancer an address gets its allowance once, not once per replica.
 *
 * The shared count is one unlogged table, `sergo_hourly_counts` (a key's
 * registration times in the last hour), and one SQL function per
 * registration, on the database's clock: it makes and locks the two rows (the
 * address's and everyone's) in key order, drops the times older than an
 * hour, and adds this one only if both rows are under their limit, so
 * registrations at once through any number of replicas are counted one after
 * another. Unlogged and committed without waiting for the disk, as the
 * sign-in counts: worth nothing after a crash. About one registration in a
 * hundred deletes the rows of addresses with nothing in the last hour.
 *
 * @module
 */
import type postgres from "postgres";
import { ensureSchema } from "../../../events/postgres/schema.ts";
import { HourlyLimit } from "./_shared.ts";

/** Counts registrations per address and overall, over a sliding hour. */
export interface RegistrationCounter {
  /**
   * Takes one registration from `address`'s allowance at `nowMs` (the shared
   * count uses the database's clock instead): false when the hour's allowance
   * of the address, or of all addresses, is spent.
   */
  take(address: string, nowMs: number): Promise<boolean>;
}

/** Registrations counted in this process's memory (embedded: one process serves). */
export class LocalRegistrationLimit implements RegistrationCounter {
  readonly #perAddress: HourlyLimit;
  readonly #overall: HourlyLimit;

  constructor(perAddress: number, overall: number) {
    this.#perAddress = new HourlyLimit(perAddress);
    this.#overall = new HourlyLimit(overall);
  }

  take(address: string, nowMs: number): Promise<boolean> {
    return Promise.resolve(this.#perAddress.take(address, nowMs) && this.#overall.take("*", nowMs));
  }
}

const HOUR_MS = 3_600_000;

const SCHEMA = `
CREATE UNLOGGED TABLE IF NOT EXISTS sergo_hourly_counts (
  key text PRIMARY KEY,
  times double precision[] NOT NULL
);
CREATE OR REPLACE FUNCTION sergo_hourly_take(keys text[], limits integer[], window_ms double precision,
  at_ms double precision)
RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms double precision := coalesce(at_ms, extract(epoch FROM clock_timestamp()) * 1000);
  allowed boolean := true;
  r record;
  kept double precision[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Each row made if new and locked in key order: takes at once are counted one after another.
  INSERT INTO sergo_hourly_counts (key, times)
    SELECT k, '{}'::double precision[] FROM unnest(keys) AS k ORDER BY k ON CONFLICT DO NOTHING;
  FOR r IN SELECT c.key, c.times FROM sergo_hourly_counts c WHERE c.key = ANY (keys) ORDER BY c.key FOR UPDATE LOOP
    kept := ARRAY(SELECT t FROM unnest(r.times) AS t WHERE t > now_ms - window_ms ORDER BY t);
    IF cardinality(kept) >= limits[array_position(keys, r.key)] THEN allowed := false; END IF;
    UPDATE sergo_hourly_counts SET times = kept WHERE key = r.key;
  END LOOP;
  IF allowed THEN
    UPDATE sergo_hourly_counts SET times = times || now_ms WHERE key = ANY (keys);
  END IF;
  IF random() < 0.01 THEN
    DELETE FROM sergo_hourly_counts c WHERE NOT (c.key = ANY (keys))
      AND coalesce(c.times[cardinality(c.times)], 0) <= now_ms - window_ms;
  END IF;
  RETURN allowed;
END
$fn$;
`;

/** Registrations counted in PostgreSQL for all replicas. */
export class SharedRegistrationLimit implements RegistrationCounter {
  readonly #sql: postgres.Sql;
  readonly #perAddress: number;
  readonly #overall: number;
  #schema: Promise<void> | null = null;

  /**
   * Counts in the database behind `sql` (the pool is the caller's to close).
   * The table and function are made at the first registration, so a
   * replica's start does not wait for them.
   */
  constructor(sql: postgres.Sql, perAddress: number, overall: number) {
    this.#sql = sql;
    this.#perAddress = perAddress;
    this.#overall = overall;
  }

  /** Takes one on the database's clock (`_nowMs` is not used; `atMs`, for tests, replaces that clock). */
  async take(address: string, _nowMs?: number, atMs: number | null = null): Promise<boolean> {
    await this.#ready();
    const [row] = await this.#sql<{ allowed: boolean }[]>`
      SELECT sergo_hourly_take(
        ${[`registration:${address}`, "registration:*"]}::text[],
        ${[this.#perAddress, this.#overall]}::integer[],
        ${HOUR_MS}::double precision, ${atMs}::double precision) AS allowed`;
    return row!.allowed;
  }

  #ready(): Promise<void> {
    // Replicas registering at once must not both create the function (the schema's own lock).
    this.#schema ??= ensureSchema(this.#sql, {
      ddl: SCHEMA,
      lock: 8317404,
      tables: ["sergo_hourly_counts"],
      functions: ["sergo_hourly_take(text[], integer[], double precision, double precision)"],
    }).catch((error) => {
      this.#schema = null; // try again at the next registration
      throw error;
    });
    return this.#schema;
  }
}
