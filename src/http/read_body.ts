/**
 * Reads a request body with a size limit, stopping as soon as it is passed,
 * and a time limit, so a client that trickles its body (or stops sending it)
 * is answered 408 and holds nothing: the body's stream is cancelled.
 *
 * @module
 */
import { DomainError } from "../domain/errors.ts";
import { Deadlines } from "./deadlines.ts";

/** How long a JSON body (MCP, API) may take to arrive in full. */
export const BODY_TIMEOUT_MS = 30_000;

/** The longest an upload's body may pause between two chunks. */
export const UPLOAD_IDLE_MS = 30_000;

let bodyDeadlines = new Deadlines(BODY_TIMEOUT_MS);

/** The error of a body that did not arrive in time; `408 Request Timeout`. */
export function slowBody(ms: number, what: "arrive in full" | "send anything for"): DomainError {
  const seconds = ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
  return new DomainError(
    "timeout",
    what === "arrive in full"
      ? `The request body did not arrive within ${seconds}: send it in one go`
      : `The upload stopped: nothing arrived for ${seconds}`,
  );
}

/**
 * The body as text, or null once it passes `limit` bytes (the rest is not
 * read); throws a 408 {@linkcode DomainError} when it has not all arrived
 * within `timeoutMs`. The `Content-Length` header is read once: header
 * look-ups are calls into the runtime, and this runs on every request.
 */
export async function readBodyText(
  request: Request,
  limit: number,
  timeoutMs: number = BODY_TIMEOUT_MS,
): Promise<string | null> {
  const length = request.headers.get("content-length");
  const declared = length !== null && /^\d+$/.test(length) ? Number(length) : null;
  if (declared !== null && declared > limit) return null;
  if (bodyDeadlines.ms !== timeoutMs) bodyDeadlines = new Deadlines(timeoutMs);
  // Before `request.body` is touched: making its stream object costs as much as reading the body whole.
  if (declared !== null) return await declaredBody(request, declared, bodyDeadlines, timeoutMs);
  if (!request.body) return "";
  let done: () => void = () => {};
  const late = new Promise<"late">((resolve) => done = bodyDeadlines.start(() => resolve("late")));
  const reader = request.body.getReader();
  // A declared length is read into one buffer of that size, and is complete once it is full.
  const whole = declared !== null ? new Uint8Array(declared) : null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    while (declared === null || size < declared) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") throw slowBody(timeoutMs, "arrive in full");
      if (next.done) break;
      if (size + next.value.byteLength > (whole?.byteLength ?? limit)) return null;
      if (whole) whole.set(next.value, size);
      else chunks.push(next.value);
      size += next.value.byteLength;
    }
    complete = true;
  } finally {
    done();
    // Stops a body that is still arriving (too large, or too slow).
    if (!complete) reader.cancel().catch(() => {});
  }
  if (whole) return DECODER.decode(size === whole.byteLength ? whole : whole.subarray(0, size));
  if (chunks.length === 1) return DECODER.decode(chunks[0]);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return DECODER.decode(bytes);
}

const DECODER = new TextDecoder();

/**
 * A body of a declared length within the limit, read whole by the runtime
 * (`arrayBuffer()`: one call, where reading its stream chunk by chunk cost
 * about 60 µs a request through `Deno.serve`). More bytes than declared are
 * too many (null), as on the stream path; a body still arriving when `late`
 * comes is left to the connection the 408 closes.
 */
function declaredBody(
  request: Request,
  declared: number,
  deadlines: Deadlines,
  timeoutMs: number,
): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const done = deadlines.start(() => reject(slowBody(timeoutMs, "arrive in full")));
    request.arrayBuffer().then((bytes) => {
      done();
      resolve(bytes.byteLength > declared ? null : DECODER.decode(bytes));
    }, (error) => {
      done();
      reject(error);
    });
  });
}

/**
 * The chunks of an upload's body as they arrive; throws a 408
 * {@linkcode DomainError} when none arrives for `idleMs`, and cancels the
 * body when the reader stops early (a file too large, a refused upload).
 */
export async function* arriving(
  body: ReadableStream<Uint8Array>,
  idleMs: number = UPLOAD_IDLE_MS,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => timer = setTimeout(resolve, idleMs, "late"));
      const next = await Promise.race([reader.read(), late]);
      clearTimeout(timer);
      if (next === "late") throw slowBody(idleMs, "send anything for");
      if (next.done) return;
      yield next.value;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
