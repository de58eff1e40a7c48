/**
 * The console's session: the signed-in person (read by `auth/session.ts`),
 * its cookies, and the headers every page carries.
 *
 * @module
 */
import { SESSION_COOKIE } from "../auth/api_auth.ts";
import { type SignedIn, signedIn } from "../auth/session.ts";
import type { Config } from "../config.ts";
import type { ConsoleDeps } from "./deps.ts";

/** Who is signed in to the console, and with which login token. */
export type ConsoleSession = SignedIn;

/** The signed-in person of a request, or null when the cookie is missing, expired or revoked. */
export function currentSession(services: ConsoleDeps, request: Request): ConsoleSession | null {
  return signedIn(services.app.db, request, services.app.now());
}

/** Whether cookies must be `Secure`: the request came over https, or the public URL is https. */
export function isSecure(services: { config: Pick<Config, "publicUrl"> }, request: Request): boolean {
  return new URL(request.url).protocol === "https:" ||
    (services.config.publicUrl?.startsWith("https:") ?? false);
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
export function publicUrl(services: ConsoleDeps, request: Request): string {
  return (services.config.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, "");
}
