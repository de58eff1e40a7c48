/**
 * The audit view's entries of MCP calls, stored by a thread of their own. A
 * busy MCP endpoint commits little but `McpCalled` events, and storing their
 * entries (SQLite's inserts into the entry table and its four indexes) was
 * about a fifth of the event loop's work per audited call. The event loop
 * makes each entry's values (the same function as the projection's) and
 * hands them over; the thread stores them, with the view's checkpoint, in one
 * transaction per batch on its own connection; the projector then records
 * the batch as applied ({@linkcode Projector.appliedElsewhere}). The rows are
 * the ones the projection would have written.
 *
 * @module
 */
import type { SQLInputValue } from "node:sqlite";
import type { RecordedEvent } from "../events/types.ts";
import { entryValues } from "./audit_view.ts";
import type { Projector } from "./projector.ts";

/** A request to the thread (`_audit_calls_worker.ts`). */
export type AuditCallsRequest =
  | { kind: "open"; path: string; done: Int32Array }
  | { kind: "apply"; last: number; rows: SQLInputValue[][] }
  | { kind: "close" };

/** Slots of the counters shared with the thread: batches it is done with, stored, and whether one failed. */
export const DONE = 0, APPLIED = 1, FAILED = 2;

/** What became of a batch handed to the thread: stored, or left to the caller (the thread failed). */
export type AuditCallsOutcome = "applied" | "not applied";

/** The thread, and the batches handed to it in log order. */
export class AuditCallsThread {
  readonly #worker: Worker;
  readonly #projector: Projector;
  readonly #done = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  readonly #onDone: (events: readonly RecordedEvent[], outcome: AuditCallsOutcome) => void;
  /** Batches handed over and not yet reported to `onDone`, oldest first. */
  readonly #queue: RecordedEvent[][] = [];
  /** Batches handed over, and of those reported. */
  #posted = 0;
  #reported = 0;
  #closed: (() => void) | null = null;
  /** Set when the thread died or stopped answering: what it has not done is reported as not applied. */
  #dead = false;

  /**
   * Starts the thread on the projections database at `path`. `onDone` is
   * told of each batch, in order, once the thread is done with it.
   */
  constructor(
    path: string,
    projector: Projector,
    onDone: (events: readonly RecordedEvent[], outcome: AuditCallsOutcome) => void,
  ) {
    this.#projector = projector;
    this.#onDone = onDone;
    this.#worker = new Worker(new URL("./_audit_calls_worker.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = (message: MessageEvent<string>) => {
      if (message.data === "closed") this.#closed?.();
      else this.#report();
    };
    this.#worker.onerror = (event) => {
      event.preventDefault();
      console.error("The audit view's thread failed; the event loop stores its entries:", event.message);
      this.#giveUp();
    };
    this.#worker.postMessage({ kind: "open", path, done: this.#done } satisfies AuditCallsRequest);
  }

  /** Stops handing batches to the thread: it stores nothing more, and what it has not stored is reported so. */
  #giveUp(): void {
    Atomics.store(this.#done, FAILED, 1);
    this.#dead = true;
    this.#report();
  }

  /** The last position handed over and not yet reported, or null when the thread has nothing. */
  get lastPosted(): number | null {
    const batch = this.#queue[this.#queue.length - 1];
    return batch ? batch[batch.length - 1]!.position : null;
  }

  /**
   * Hands over a batch of consecutive `McpCalled` events that follow what
   * the projector (and the batches before) applied, all handled by the audit
   * view alone.
   */
  post(events: readonly RecordedEvent[]): void {
    const rows = [];
    for (const event of events) {
      const values = entryValues(this.#projector.db, event);
      if (values !== null) rows.push(values);
    }
    this.#queue.push([...events]);
    this.#posted++;
    this.#worker.postMessage(
      { kind: "apply", last: events[events.length - 1]!.position, rows } satisfies AuditCallsRequest,
    );
  }

  /** Waits until the thread is done with every batch handed over, and reports them. */
  finish(): void {
    // A batch waits at most SQLite's busy timeout (10 s) for the file's lock before it fails.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const done = Atomics.load(this.#done, DONE);
      if (done >= this.#posted || this.#dead) break;
      if (Date.now() > deadline) {
        console.error("The audit view's thread did not answer in 30 s; the event loop stores its entries");
        this.#giveUp();
        break;
      }
      Atomics.wait(this.#done, DONE, done, 1_000);
    }
    this.#report();
  }

  /** Reports the batches the thread is done with, in order. */
  #report(): void {
    const done = this.#dead ? this.#posted : Atomics.load(this.#done, DONE);
    const applied = Atomics.load(this.#done, APPLIED);
    const failed = Atomics.load(this.#done, FAILED) !== 0;
    while (this.#reported < done && this.#queue.length > 0) {
      const events = this.#queue.shift()!;
      // Batches are applied in order until one fails; none after it is.
      const outcome = !failed || this.#reported < applied ? "applied" : "not applied";
      this.#reported++;
      this.#onDone(events, outcome);
    }
  }

  /** Whether the thread failed once (it then stores nothing more). */
  get failed(): boolean {
    return this.#dead || Atomics.load(this.#done, FAILED) !== 0;
  }

  /** Finishes the batches handed over and stops the thread. */
  async close(): Promise<void> {
    this.finish();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      timer = setTimeout(resolve, 10_000);
      this.#worker.postMessage({ kind: "close" } satisfies AuditCallsRequest);
    });
    clearTimeout(timer);
    this.#worker.terminate();
  }
}
