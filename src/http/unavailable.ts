/**
 * What a request is answered when the database that replicas share
 * (PostgreSQL, `SERGO_DATABASE_URL`) cannot be reached: 503 and one sentence,
 * as the MCP endpoint answers a call whose rate limit or audit entry cannot
 * reach it, never the generic 500. The driver reconnects by itself, so the
 * same request works again once the database is back.
 *
 * @module
 */

/** The sentence of a limit that cannot be checked: a key's calls (MCP), console sign-ins, client registrations. */
export const LIMIT_UNCHECKED = "The rate limit cannot be checked now: the database is unreachable.";

/** The sentence of any other request that needed the database (an append, a stored file). */
export const DATABASE_UNREACHABLE =
  "The database is unreachable, so the request was not carried out — try again in a moment.";

/** The PostgreSQL driver's and the socket's codes of a connection that failed or was lost. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether an error says the database could not be reached: the log's
 * `DatabaseUnavailableError` (known by name, so the HTTP surface need not load
 * the driver), a connection the driver could not make or lost, or the server's
 * own "shutting down / starting up" (SQLSTATE class 08, 57P01–57P03).
 */
export function databaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "DatabaseUnavailableError") return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code);
}
