/**
 * Waits with a deadline: every wait in a test ends, and one that runs out
 * fails with a sentence saying what did not happen, instead of holding the
 * test (and the suite) forever.
 *
 * ```ts
 * await waitFor(() => doc().status === "searchable", { ms: 30_000, what: "the upload is read" });
 * const line = await within(reader.read(), { ms: 5_000, what: "the server's first line" });
 * ```
 *
 * @module
 */

/** How long to wait, and what is waited for (the failure's sentence). */
export interface WaitOptions {
  /** The deadline, in ms from the call. */
  ms: number;
  /** What should happen, as in "the copy is made": the error says it did not within `ms`. */
  what: string;
  /** How often `condition` is asked again, in ms (default 50). */
  everyMs?: number;
}

/** A wait that ran out (its message is the sentence). */
class WaitTimeout extends Error {
  override name = "WaitTimeout";
}

function late(options: WaitOptions, detail?: string): Error {
  const seconds = options.ms >= 1000 ? `${Math.round(options.ms / 1000)} s` : `${options.ms} ms`;
  return new WaitTimeout(
    `Waited ${seconds}, and ${options.what} did not happen${detail ? `: ${detail}` : ""}`,
  );
}

/**
 * Asks `condition` until it gives a truthy value (returned), every `everyMs`;
 * fails when the deadline passes. `condition` may be async; `detail`, when
 * given, adds the state seen last to the failure's sentence.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitOptions & { detail?: () => string },
): Promise<NonNullable<T>> {
  const deadline = Date.now() + options.ms;
  for (;;) {
    let value: T;
    try {
      value = await within(Promise.resolve(condition()), {
        ms: Math.max(1, deadline - Date.now()),
        what: "",
      });
    } catch (error) {
      if (error instanceof WaitTimeout) throw late(options, options.detail?.());
      throw error;
    }
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw late(options, options.detail?.());
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(options.everyMs ?? 50, deadline - Date.now()))
    );
  }
}

/** The value of `promise`, or a failure saying what did not happen when it is not settled within `ms`. */
export async function within<T>(promise: Promise<T>, options: WaitOptions): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late(options)), options.ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads a text stream until `done` says the text read so far is enough;
 * returns that text. Fails when the stream ends first, or the deadline passes.
 */
export async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  done: (text: string) => boolean,
  options: WaitOptions & { text?: string },
): Promise<string> {
  const deadline = Date.now() + options.ms;
  let text = options.text ?? "";
  while (!done(text)) {
    let read: ReadableStreamReadResult<string>;
    try {
      read = await within(reader.read(), { ms: Math.max(1, deadline - Date.now()), what: "" });
    } catch (error) {
      if (error instanceof WaitTimeout) {
        throw late(options, `read so far: ${JSON.stringify(text.slice(-300))}`);
      }
      throw error;
    }
    const { value, done: ended } = read;
    if (ended) {
      throw new Error(`The stream ended before ${options.what}: ${JSON.stringify(text.slice(-300))}`);
    }
    text += value;
  }
  return text;
}
