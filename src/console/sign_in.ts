/**
 * Signing in and out of the console: a form post checked against the CSRF
 * cookie, the password checked against its scrypt hash, failures slowed
 * down; success issues a login token in an HttpOnly cookie.
 *
 * @module
 */
import { getPersonByEmail } from "../../projections/catalogue.ts";
import { hashPassword, verifyPassword } from "../auth/passwords.ts";
import { issueLoginToken, LOGIN_TOKEN_LIFETIME_MS, revokeLoginToken } from "../domain/keys.ts";
import type { ConsoleDeps } from "./deps.ts";
import { currentSession, isSecure, sessionCookie } from "./session.ts";
import { describeWait, type SignInCounter } from "./sign_in_throttle.ts";
import { DATABASE_UNREACHABLE, databaseUnreachable, LIMIT_UNCHECKED } from "../http/unavailable.ts";

/** What a sign-in attempt came to. */
export type SignInResult =
  | { ok: true; cookie: string; next: string }
  | { ok: false; status: number; message: string; email: string };

/** The fields of the sign-in form. */
export interface SignInForm {
  email: string;
  password: string;
  next: string;
}

let dummyHash: Promise<string> | null = null;

/** A path to go to after signing in: only a local console path, else the documents. */
export function safeNext(next: string): string {
  return /^\/(?![/\\])[^\s]*$/.test(next) && !next.startsWith("/api") && !next.startsWith("/sign-")
    ? next
    : "/documents";
}

/** Checks a sign-in form and, when the password is right, issues a login token. */
export async function signIn(
  services: ConsoleDeps,
  form: SignInForm,
  options: { address: string; secure: boolean; throttle: SignInCounter },
): Promise<SignInResult> {
  const email = form.email.trim();
  if (email === "") return { ok: false, status: 400, message: "Enter your email.", email };
  if (form.password === "") return { ok: false, status: 400, message: "Enter your password.", email };
  if (email.length > 320 || form.password.length > 1024) {
    return { ok: false, status: 400, message: "The email or password is too long.", email };
  }
  // Counted before the hash runs: parallel attempts cannot all pass while it does. The shared count (in
  // PostgreSQL) out of reach refuses the attempt rather than let it go uncounted.
  let reservation: Awaited<ReturnType<SignInCounter["reserve"]>>;
  try {
    reservation = await options.throttle.reserve({ email, address: options.address });
  } catch (error) {
    if (!databaseUnreachable(error)) throw error;
    return { ok: false, status: 503, message: LIMIT_UNCHECKED, email };
  }
  if ("waitMs" in reservation) {
    return {
      ok: false,
      status: 429,
      message: `Too many failed sign-ins — wait ${describeWait(reservation.waitMs)} and try again.`,
      email,
    };
  }
  const person = getPersonByEmail(services.app.db, email);
  const stored = person?.password_hash ?? null;
  const good = stored === null
    ? (await verifyPassword(form.password, await (dummyHash ??= hashPassword("not a password"))), false)
    : await verifyPassword(form.password, stored);
  if (!person || !good) return { ok: false, status: 401, message: "The email or password is wrong.", email };
  let token: Awaited<ReturnType<typeof issueLoginToken>>;
  try {
    await reservation.succeed();
    token = await issueLoginToken(services.app, { personId: person.person_id }, `person-${person.person_id}`);
  } catch (error) {
    if (!databaseUnreachable(error)) throw error;
    return { ok: false, status: 503, message: DATABASE_UNREACHABLE, email };
  }
  return {
    ok: true,
    cookie: sessionCookie(token.value, {
      secure: options.secure,
      maxAgeSeconds: LOGIN_TOKEN_LIFETIME_MS / 1000,
    }),
    next: safeNext(form.next),
  };
}

/** Signs out: revokes the login token of the request (if any) and returns the cookie that clears it. */
export async function signOut(services: ConsoleDeps, request: Request): Promise<string> {
  const session = currentSession(services, request);
  if (session) {
    await revokeLoginToken(services.app, { tokenId: session.tokenId }, `person-${session.person.person_id}`);
  }
  return sessionCookie("", { secure: isSecure(services, request), maxAgeSeconds: 0 });
}
