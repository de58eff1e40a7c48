/**
 * The one error processing raises: its message is a single sentence a person can read.
 *
 * @module
 */

/** A file could not be read; `message` says why in one sentence. */
export class ProcessingError extends Error {
  override name = "ProcessingError";
}

/** Turns anything thrown while reading into a {@link ProcessingError}, keeping clear ones as they are. */
export function toProcessingError(error: unknown, fallback: string): ProcessingError {
  if (error instanceof ProcessingError) return error;
  if (
    error instanceof RangeError &&
    /call stack|Invalid array length|Array buffer allocation/i.test(error.message)
  ) {
    return new ProcessingError(`${fallback}: the file is nested too deeply or too large to read.`);
  }
  const detail = error instanceof Error ? error.message : String(error);
  const short = detail.replace(/\s+/g, " ").trim().slice(0, 200);
  return new ProcessingError(short ? `${fallback}: ${short.replace(/\.$/, "")}.` : `${fallback}.`);
}
