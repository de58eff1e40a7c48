/**
 * Authentication of the REST API: a personal key or a login token, as a
 * bearer header or (for the console) the session cookie.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { findCredential } from "../../projections/key_scopes.ts";
import { errorResponse } from "../http/json.ts";
import { hashSecret, parseSecret } from "../domain/key_format.ts";
import { bearerValue } from "./mcp_auth.ts";

/** The console's session cookie: it holds a login token. */
export const SESSION_COOKIE = "sergo_session";

/** Who an API request acts for. */
export interface ApiCaller {
  personId: string;
  /** The credential's kind and id (the actor of the events it causes). */
  kind: "personal" | "login";
  credentialId: string;
  /** True when the credential came from the session cookie (CSRF checks apply). */
  viaCookie: boolean;
}

/** Reads one cookie from a request. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return null;
}

/** Authenticates an API request at `now`, or answers why not. */
export function authenticateApi(db: DatabaseSync, request: Request, now: Date): ApiCaller | Response {
  const header = request.headers.get("authorization");
  let value = bearerValue(header);
  let viaCookie = false;
  if (value === null && header === null) {
    value = readCookie(request, SESSION_COOKIE);
    viaCookie = value !== null;
  }
  const challenge = { "www-authenticate": 'Bearer realm="sergo"' };
  if (value === null) {
    return errorResponse(
      401,
      "no_auth",
      "No credentials — send a personal key or a login token in the Authorization header",
      challenge,
    );
  }
  const form = parseSecret(value);
  const invalid = { "www-authenticate": 'Bearer realm="sergo", error="invalid_token"' };
  if (!form.valid) {
    return errorResponse(
      401,
      "bad_key",
      "Malformed key — the prefix or checksum doesn't match, so check the value wasn't truncated when copied",
      invalid,
    );
  }
  const credential = findCredential(db, hashSecret(value), now);
  if (!credential) {
    return errorResponse(
      401,
      "bad_key",
      form.kind === "login"
        ? "This login token has expired or was revoked — sign in again"
        : "Unknown key — it was deleted, or rolled and its old value has expired",
      invalid,
    );
  }
  if (credential.kind === "agent") {
    return errorResponse(
      403,
      "agent_key",
      "Agent keys work with MCP only — use a personal key or a login token for the API",
    );
  }
  return { personId: credential.person_id, kind: credential.kind, credentialId: credential.id, viaCookie };
}
