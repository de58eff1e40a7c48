/**
 * The console's session: the signed-in person (from the `sergo_session`
 * cookie, a login token), the CSRF cookie, and the headers every page carries.
 *
 * @module
 */
import { getPerson, type Person } from "../../projections/catalogue.ts";
import { authenticateApi, readCookie, SESSION_COOKIE } from "../auth/api_auth.ts";
import { randomId } from "../domain/ids.ts";
import { CSRF_COOKIE, type Services } from "../services.ts";

/** Who is signed in to the console, and with which login token. */
export interface ConsoleSession {
  person: Person;
  tokenId: string;
}

/** The signed-in person of a request, or null when the cookie is missing, expired or revoked. */
export function currentSession(services: Services, request: Request): ConsoleSession | null {
  if (readCookie(request, SESSION_COOKIE) === null) return null;
  const stripped = new Request(request.url, { headers: { cookie: request.headers.get("cookie") ?? "" } });
  const caller = authenticateApi(services.app.db, stripped, services.app.now());
  if (caller instanceof Response || caller.kind !== "login") return null;
  const person = getPerson(services.app.db, caller.personId);
  return person ? { person, tokenId: caller.credentialId } : null;
}

/** Whether cookies must be `Secure`: the request came over https, or the public URL is https. */
export function isSecure(services: Services, request: Request): boolean {
  return new URL(request.url).protocol === "https:" ||
    (services.config.publicUrl?.startsWith("https:") ?? false);
}

/** The CSRF token of a request: its cookie's value, or a fresh one to set with {@linkcode csrfCookie}. */
export function csrfToken(request: Request): { token: string; fresh: boolean } {
  const existing = readCookie(request, CSRF_COOKIE);
  if (existing !== null && /^[A-Za-z0-9]{32}$/.test(existing)) return { token: existing, fresh: false };
  return { token: randomId(32), fresh: true };
}

/** The `Set-Cookie` value of the CSRF cookie (readable by the page, sent back as `X-CSRF-Token`). */
export function csrfCookie(token: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${token}; Path=/; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** The `Set-Cookie` value of the session cookie holding a login token; an empty value clears it. */
export function sessionCookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${options.maxAgeSeconds}${
    options.secure ? "; Secure" : ""
  }`;
}

/** The headers of every console answer: no caching, no framing, scripts and styles from this server only. */
export function pageHeaders(contentType: string): Headers {
  return new Headers({
    "content-type": contentType,
    "cache-control": "no-store",
    "content-security-policy":
      "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
      "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
  });
}

/** The public URL of this server for connection snippets: the setting, or the request's origin. */
export function publicUrl(services: Services, request: Request): string {
  return (services.config.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, "");
}
