/**
 * The error every command raises for bad input or a state that forbids it:
 * a code, an HTTP status and one sentence.
 *
 * @module
 */

/** Codes of domain errors with their HTTP status. */
export const ERROR_STATUS = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported: 415,
  /** A request body that did not arrive in time. */
  timeout: 408,
} as const;

/** A domain error code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** A command refused: nothing was written. */
export class DomainError extends Error {
  override name = "DomainError";
  /** Creates the error with a code and one sentence. */
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
  }
  /** The HTTP status for this error. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}
