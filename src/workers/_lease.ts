/**
 * A worker's lease on one piece of a document's work (its processing, or its
 * PDF copy), held in the log itself, so it holds across processes and
 * replicas: taken by appending a start event at the document stream's
 * version (two workers claiming at once: one append wins, the other gets a
 * `ConcurrencyError` and moves on), renewed every third of its length while
 * the work goes on, and lost when the stream shows another worker's claim,
 * a new request, the work's end or the document's deletion. Every append of
 * the work (progress, the result) goes at the version the lease knows, so a
 * worker whose lease was taken over cannot also record a result: its append
 * fails the version check, the events in between show the takeover, and the
 * result is dropped (and logged).
 *
 * While the shared database is away (a PostgreSQL restart) the lease's
 * appends fail: renewals are tried again at their next turn, and the work's
 * result ({@linkcode Lease.record}) every second until the lease would have
 * run out; a worker that cannot record it then gives the work up, and the
 * lease's expiry lets this or another worker claim it again.
 *
 * @module
 */
import { ConcurrencyError } from "../../events/store.ts";
import { databaseUnreachable } from "../http/unavailable.ts";
import type { EventType, RecordedEvent, SergoEvent } from "../../events/types.ts";
import type { SergoApp } from "../app.ts";

/** What kind of work a lease is on: its events, and which later events take it away. */
export interface LeaseKind {
  /** For messages: `processing`, `PDF copy`. */
  what: string;
  /** The event that claims the work until `leaseUntil`. */
  start(documentId: string, worker: string, leaseUntil: string): SergoEvent;
  /** The event that extends the claim to `leaseUntil`. */
  renew(documentId: string, worker: string, leaseUntil: string): SergoEvent;
  /** Events that end the claim: another worker's start, a new request, the work's end, a deletion. */
  ends: ReadonlySet<EventType>;
}

/** How many times an append is tried again when events that leave the lease alone came in between. */
const APPEND_ATTEMPTS = 10;

/** How long {@linkcode Lease.record} waits before it tries again while the database is unreachable. */
const RECORD_RETRY_MS = 1000;

/** Brings this process's copy of the log and its projections up to what the store holds now. */
async function catchUp(app: SergoApp): Promise<void> {
  if ("sync" in app.store) await app.store.sync();
  app.catchUp();
}

/** A held lease; see the module documentation. */
export class Lease {
  readonly #app: SergoApp;
  readonly #kind: LeaseKind;
  readonly #documentId: string;
  readonly #worker: string;
  readonly #leaseMs: number;
  readonly stream: string;
  /** The stream's version after this lease's last append. */
  #version: number;
  #lost: string | null = null;
  /** Until when (ms since the epoch) the log holds this lease for the worker: its last claim or renewal's end. */
  #until: number;
  #timer: ReturnType<typeof setInterval> | null = null;
  /** The lease's appends, one at a time (a renewal never races the result). */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(
    app: SergoApp,
    kind: LeaseKind,
    ids: { documentId: string; worker: string },
    leaseMs: number,
    version: number,
  ) {
    this.#app = app;
    this.#kind = kind;
    this.#documentId = ids.documentId;
    this.#worker = ids.worker;
    this.#leaseMs = leaseMs;
    this.stream = `document-${ids.documentId}`;
    this.#version = version;
    this.#until = app.now().getTime() + leaseMs;
  }

  /**
   * Claims the work at the stream's version as this process knows it; null
   * when another worker claimed it first or the document changed meanwhile
   * (the caller looks again later). Renewal starts at once.
   */
  static async take(
    app: SergoApp,
    kind: LeaseKind,
    ids: { documentId: string; worker: string },
    leaseMs: number,
  ): Promise<Lease | null> {
    const stream = `document-${ids.documentId}`;
    const version = app.store.readStream(stream).length;
    const until = new Date(app.now().getTime() + leaseMs).toISOString();
    let result;
    try {
      result = await app.append(stream, [kind.start(ids.documentId, ids.worker, until)], {
        expectedVersion: version,
      });
    } catch (error) {
      if (error instanceof ConcurrencyError) return null;
      throw error;
    }
    const lease = new Lease(app, kind, ids, leaseMs, result.streamVersion);
    lease.#until = Date.parse(until);
    lease.#timer = setInterval(() => lease.#renew(), Math.max(1000, Math.floor(leaseMs / 3)));
    return lease;
  }

  /** Why the lease was lost, or null while it is held. */
  get lost(): string | null {
    return this.#lost;
  }

  /**
   * Appends the events `make` gives (null: nothing to append) at the version
   * this lease knows. When other events came in between and none of them
   * takes the lease away, `make` is asked again and the append tried at the
   * new version. Resolves false when the lease is lost (nothing appended).
   */
  append(make: () => SergoEvent[] | null): Promise<boolean> {
    const next = this.#queue.then(() => this.#appendNow(make));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #appendNow(make: () => SergoEvent[] | null): Promise<boolean> {
    for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
      if (this.#lost) return false;
      const events = make();
      if (!events) return true;
      try {
        const result = await this.#app.append(this.stream, events, { expectedVersion: this.#version });
        this.#version = result.streamVersion;
        return true;
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        await catchUp(this.#app);
        const between = this.#app.store.readStream(this.stream).slice(this.#version);
        const taken = between.find((event) => this.#kind.ends.has(event.type));
        if (taken) {
          this.#lose(taken);
          return false;
        }
        this.#version += between.length;
      }
    }
    throw new Error(
      `Cannot record the ${this.#kind.what} of "${this.#documentId}": the document kept changing`,
    );
  }

  /**
   * Appends the work's result as {@linkcode append} does, trying again every
   * second while the database is unreachable and the lease has not run out:
   * a result the outage held up is recorded once it is back, without the
   * work being done again. Past the lease's end it rejects with the last
   * error (the work is given up; whoever claims it next does it again). An
   * append that reached the database but whose answer was lost is found by
   * the next try's version check: the lease is then seen as ended by its own
   * result, and nothing is recorded twice.
   */
  async record(make: () => SergoEvent[] | null): Promise<boolean> {
    for (;;) {
      try {
        return await this.append(make);
      } catch (error) {
        if (!databaseUnreachable(error) || this.#app.now().getTime() + RECORD_RETRY_MS >= this.#until) {
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS));
      }
    }
  }

  #renew(): void {
    if (this.#lost) return;
    const until = this.#app.now().getTime() + this.#leaseMs;
    this.append(() => [this.#kind.renew(this.#documentId, this.#worker, new Date(until).toISOString())]).then(
      (renewed) => {
        if (renewed) this.#until = Math.max(this.#until, until);
      },
      (error) => {
        // The database may be away for a moment: the next renewal tries again, and the lease lasts until then.
        console.error(
          `Cannot renew the ${this.#kind.what} lease of ${this.#documentId}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      },
    );
  }

  #lose(taken: RecordedEvent): void {
    this.#lost = `${taken.type} at ${taken.position}`;
    this.release();
    console.error(
      `The ${this.#kind.what} of ${this.#documentId} by ${this.#worker} was taken over (${this.#lost}); ` +
        "what it finds is dropped",
    );
  }

  /**
   * Gives the work back unfinished (the server is stopping): the claim is
   * renewed to end now, so another worker may take it at once, and renewal
   * stops. Nothing else is recorded; when the store cannot be reached, the
   * lease is left to run out instead.
   */
  async handBack(): Promise<void> {
    await this.release(); // no renewal after the hand-back
    if (!this.#lost) {
      const now = this.#app.now().toISOString();
      await this.append(() => [this.#kind.renew(this.#documentId, this.#worker, now)]).catch((error) => {
        console.error(`Cannot give back the ${this.#kind.what} lease of ${this.#documentId}:`, error);
      });
    }
    await this.release();
  }

  /** Stops renewing (the work is over, recorded or not); waits for an append in flight. */
  release(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    return this.#queue.then(() => {});
  }
}
