/**
 * What the PostgreSQL parts raise when the database fails them, and how a
 * driver's error is told in a sentence.
 *
 * @module
 */

/** The error raised when the database cannot be reached or opened, in one sentence. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

/** An error's message, with the driver's code (`ECONNREFUSED`, `57P01`) when the message lacks it. */
export function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
