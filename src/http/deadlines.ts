/**
 * Deadlines for many waits of the same length under one timer: a request's
 * body arriving, the SDK answering. A timer per wait costs microseconds on
 * every request; here a wait costs a map entry, and the one timer runs only
 * while something waits.
 *
 * @module
 */

interface Wait {
  at: number;
  expire: () => void;
}

/** Waits of one length, each expired (its callback called once) when it has lasted `ms`. */
export class Deadlines {
  readonly ms: number;
  readonly #waits = new Map<number, Wait>();
  #next = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(ms: number) {
    this.ms = ms;
  }

  /** Starts a wait; returns the function that ends it (without expiring it). */
  start(expire: () => void): () => void {
    const id = this.#next++;
    this.#waits.set(id, { at: performance.now() + this.ms, expire });
    if (this.#timer === null) this.#timer = setTimeout(() => this.#sweep(), this.ms);
    else if (this.#waits.size === 1) Deno.refTimer(this.#timer);
    return () => {
      // With nothing left to wait for, the timer stays set but no longer keeps the process alive: setting a
      // timer and clearing it again cost about 20 µs a request when requests came one at a time.
      if (this.#waits.delete(id) && this.#waits.size === 0 && this.#timer !== null) {
        Deno.unrefTimer(this.#timer);
      }
    };
  }

  /** Expires every wait that is due (they are in the order they started), then waits for the next. */
  #sweep(): void {
    this.#timer = null;
    const now = performance.now();
    for (const [id, wait] of this.#waits) {
      if (wait.at > now) {
        // An expiry may have started a wait (and a timer): the earliest wait sets the one timer.
        if (this.#timer !== null) clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#sweep(), wait.at - now);
        return;
      }
      this.#waits.delete(id);
      wait.expire();
    }
  }
}
