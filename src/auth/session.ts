/**
 * Who is signed in: the person of the `sergo_session` cookie (a login
 * token), for the console and for the OAuth consent page alike.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { getPerson, type Person } from "../../projections/catalogue.ts";
import { authenticateApi, readCookie, SESSION_COOKIE } from "./api_auth.ts";

/** Who is signed in, and with which login token. */
export interface SignedIn {
  person: Person;
  tokenId: string;
}

/** The signed-in person of a request at `now`, or null when the cookie is missing, expired or revoked. */
export function signedIn(db: DatabaseSync, request: Request, now: Date): SignedIn | null {
  if (readCookie(request, SESSION_COOKIE) === null) return null;
  const stripped = new Request(request.url, { headers: { cookie: request.headers.get("cookie") ?? "" } });
  const caller = authenticateApi(db, stripped, now);
  if (caller instanceof Response || caller.kind !== "login") return null;
  const person = getPerson(db, caller.personId);
  return person ? { person, tokenId: caller.credentialId } : null;
}
