/**
 * The CSRF token of cookie-authenticated requests: a random value in a cookie
 * that the page reads and sends back (a form field, or the `X-CSRF-Token`
 * header), which another site's page cannot do.
 *
 * @module
 */
import { randomId } from "../domain/ids.ts";
import { readCookie } from "./api_auth.ts";

/** The CSRF cookie; forms and fetches send the same value back. */
export const CSRF_COOKIE = "sergo_csrf";

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

/**
 * Whether a cookie-authenticated change carries the CSRF token: the
 * `X-CSRF-Token` header equals the cookie (which another site's page cannot read).
 */
export function carriesCsrfToken(request: Request): boolean {
  const cookie = readCookie(request, CSRF_COOKIE);
  const header = request.headers.get("x-csrf-token");
  return cookie !== null && cookie.length >= 16 && header === cookie;
}
