/**
 * The OAuth grant rules, as one pure decider: `decide(command, state, now)`
 * says which events a command appends (and at which stream version), or why
 * it is refused — without a database, a clock or randomness (the handlers in
 * `src/auth/oauth/` read the grant, make the secrets, pass the time, and
 * append what is decided).
 *
 * - A person allows an app: the grant, with a single-use code that works for
 *   `codeSeconds`.
 * - An app exchanges its code (PKCE S256, the same redirect URI and resource):
 *   tokens; a code used twice ends the grant (RFC 6749 §4.1.2).
 * - An app refreshes: new tokens, and the old refresh token is spent; a spent
 *   one used again ends the grant (OAuth 2.1 §4.3.1).
 * - A grant is revoked by its person (the key's page) or by its app (RFC 7009).
 * - An app registers itself (RFC 7591): public clients only.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ExpectedVersion } from "../../events/store.ts";
import type { EventData } from "../../events/types.ts";
import type { OAuthGrant } from "../../projections/oauth_grants.ts";

/** An event a grant command appends (the handler adds its metadata). */
export type GrantEvent =
  | { type: "OAuthClientRegistered"; data: EventData<"OAuthClientRegistered"> }
  | { type: "OAuthGranted"; data: EventData<"OAuthGranted"> }
  | { type: "OAuthTokensIssued"; data: EventData<"OAuthTokensIssued"> }
  | { type: "OAuthGrantRevoked"; data: EventData<"OAuthGrantRevoked"> };

/** New tokens to issue: their sha256 (the handler makes the values) and how long each works. */
export interface NewTokens {
  accessHash: string;
  refreshHash: string;
  accessSeconds: number;
  refreshSeconds: number;
}

/** A person allowed an app, on the consent page, to act as one of their agent keys. */
export interface GrantAccess {
  type: "GrantAccess";
  grantId: string;
  keyId: string;
  personId: string;
  client: { client_id: string; client_name: string; metadata_url: string | null };
  redirectUri: string;
  resource: string;
  codeChallenge: string;
  /** The sha256 of the authorization code. */
  codeHash: string;
  /** How long the code works. */
  codeSeconds: number;
}

/** An app exchanges an authorization code for tokens (`grant_type=authorization_code`). */
export interface ExchangeCode {
  type: "ExchangeCode";
  clientId: string;
  redirectUri: string;
  codeVerifier: string;
  /** The request's `resource` parameters. */
  resources: string[];
  tokens: NewTokens;
}

/** An app trades its refresh token for new tokens (`grant_type=refresh_token`). */
export interface RefreshTokens {
  type: "RefreshTokens";
  clientId: string;
  resources: string[];
  tokens: NewTokens;
}

/** A grant is ended: by its person (the key's page), or by an app with one of its tokens (RFC 7009). */
export interface RevokeGrant {
  type: "RevokeGrant";
  by: { personId: string } | { clientId: string | null };
}

/** An app registers itself (RFC 7591) with its metadata, as sent. */
export interface RegisterClient {
  type: "RegisterClient";
  clientId: string;
  metadata: Record<string, unknown>;
}

/** A command about OAuth grants. */
export type GrantCommand = GrantAccess | ExchangeCode | RefreshTokens | RevokeGrant | RegisterClient;

/** What a command is decided against. */
export interface GrantState {
  /**
   * The grant the command is about, found by its code, refresh token, access
   * token or id; null when there is none (and for a new grant or client).
   */
  grant: OAuthGrant | null;
  /** For a refresh: the grant was found by a refresh token it has rotated away already. */
  spent?: boolean;
  /** Whether the agent key the grant acts as still exists. */
  keyExists?: boolean;
}

/** No grant: the state of a new grant or a registration. */
export const NO_GRANT: GrantState = { grant: null };

/** Why a command is refused: the OAuth error code, or `not_found` (nothing to show the caller). */
export type GrantError =
  | "invalid_grant"
  | "invalid_target"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "not_found";

/**
 * What a command decided: the events to append to `stream` at
 * `expectedVersion` — and, when it is refused, why. A refusal may still append
 * (a code or refresh token used twice ends the grant).
 */
export type GrantDecision =
  | { ok: true; stream: string; events: GrantEvent[]; expectedVersion: ExpectedVersion }
  | {
    ok: false;
    error: GrantError;
    description: string;
    stream: string;
    events: GrantEvent[];
    expectedVersion: ExpectedVersion;
  };

/** The grant types an app gets when it names none at registration. */
export const DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"];

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The PKCE S256 challenge of a code verifier. */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/** Whether a host name is this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether a redirect URI may be registered; the reason when not. */
export function redirectUriProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL`;
  }
  if (url.hash) return `"${raw}" has a fragment`;
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === "https") return null;
  if (scheme === "http") return isLoopbackHost(url.hostname) ? null : `"${raw}" is http on a public host`;
  if (["javascript", "data", "file", "blob", "about", "vbscript", "ftp", "ws", "wss"].includes(scheme)) {
    return `"${raw}" uses the ${scheme}: scheme`;
  }
  return null; // an app's own scheme, such as cursor:// or vscode://
}

/** Decides a grant command against its state at `now`. */
export function decide(command: GrantCommand, state: GrantState, now: Date): GrantDecision {
  switch (command.type) {
    case "GrantAccess":
      return grantAccess(command, now);
    case "ExchangeCode":
      return exchangeCode(command, state, now);
    case "RefreshTokens":
      return refreshTokens(command, state, now);
    case "RevokeGrant":
      return revokeGrant(command, state);
    case "RegisterClient":
      return registerClient(command);
    default: {
      const never: never = command;
      throw new Error(`Unknown grant command "${(never as { type: string }).type}"`);
    }
  }
}

function grantAccess(command: GrantAccess, now: Date): GrantDecision {
  return {
    ok: true,
    stream: `grant-${command.grantId}`,
    expectedVersion: "no_stream",
    events: [{
      type: "OAuthGranted",
      data: {
        grant_id: command.grantId,
        key_id: command.keyId,
        person_id: command.personId,
        client_id: command.client.client_id,
        client_name: command.client.client_name,
        metadata_url: command.client.metadata_url,
        redirect_uri: command.redirectUri,
        resource: command.resource,
        code_hash: command.codeHash,
        code_challenge: command.codeChallenge,
        code_expires_at: new Date(now.getTime() + command.codeSeconds * 1000).toISOString(),
      },
    }],
  };
}

/** A refusal that appends nothing. */
function refused(error: GrantError, description: string, stream = ""): GrantDecision {
  return { ok: false, error, description, stream, events: [], expectedVersion: "any" };
}

/** A refusal that ends the grant (unless it has ended already). */
function refusedAndRevoked(
  grant: OAuthGrant,
  reason: "code_reused" | "refresh_reused",
  description: string,
): GrantDecision {
  return { ...revoked(grant, reason), ok: false, error: "invalid_grant", description };
}

/** The grant's end, or nothing when it has ended already. */
function revoked(
  grant: OAuthGrant,
  reason: "revoked" | "code_reused" | "refresh_reused",
): GrantDecision & { ok: true } {
  return {
    ok: true,
    stream: `grant-${grant.grant_id}`,
    expectedVersion: "any",
    events: grant.revoked !== null ? [] : [{
      type: "OAuthGrantRevoked",
      data: { grant_id: grant.grant_id, reason },
    }],
  };
}

/** New tokens for a grant, appended at the version it was read at (so a concurrent use fails). */
function issued(
  grant: OAuthGrant,
  grantType: "authorization_code" | "refresh_token",
  tokens: NewTokens,
  now: Date,
): GrantDecision {
  return {
    ok: true,
    stream: `grant-${grant.grant_id}`,
    expectedVersion: grant.version,
    events: [{
      type: "OAuthTokensIssued",
      data: {
        grant_id: grant.grant_id,
        grant_type: grantType,
        access_hash: tokens.accessHash,
        access_expires_at: new Date(now.getTime() + tokens.accessSeconds * 1000).toISOString(),
        refresh_hash: tokens.refreshHash,
        refresh_expires_at: new Date(now.getTime() + tokens.refreshSeconds * 1000).toISOString(),
      },
    }],
  };
}

/** The refusal of a token request that names another resource than the grant's (RFC 8707); null when it does not. */
function wrongResource(resources: readonly string[], grant: OAuthGrant): GrantDecision | null {
  if (resources.length > 1 || (resources.length === 1 && resources[0] !== grant.resource)) {
    return refused("invalid_target", `This grant is for ${grant.resource} only.`);
  }
  return null;
}

function exchangeCode(command: ExchangeCode, state: GrantState, now: Date): GrantDecision {
  const { clientId } = command;
  const grant = state.grant;
  if (!grant || grant.client_id !== clientId) {
    return refused("invalid_grant", "The code is unknown, or was given to another app.");
  }
  if (grant.code_used || grant.revoked !== null) {
    return refusedAndRevoked(grant, "code_reused", "The code was used already; the app's access is revoked.");
  }
  if (Date.parse(grant.code_expires_at) <= now.getTime()) {
    return refused("invalid_grant", "The code has expired: sign in again.");
  }
  if (command.redirectUri !== grant.redirect_uri) {
    return refused("invalid_grant", "The redirect_uri differs from the authorization request's.");
  }
  const verifier = command.codeVerifier;
  if (!VERIFIER.test(verifier) || s256(verifier) !== grant.code_challenge) {
    return refused("invalid_grant", "The code_verifier does not match the code_challenge.");
  }
  const wrongTarget = wrongResource(command.resources, grant);
  if (wrongTarget) return wrongTarget;
  if (!state.keyExists) {
    return refused("invalid_grant", "The agent key this app was given was deleted.");
  }
  return issued(grant, "authorization_code", command.tokens, now);
}

function refreshTokens(command: RefreshTokens, state: GrantState, now: Date): GrantDecision {
  const { clientId } = command;
  const grant = state.grant;
  if (state.spent) {
    if (grant && grant.client_id === clientId) {
      return refusedAndRevoked(
        grant,
        "refresh_reused",
        "The refresh token was used already; the app's access is revoked.",
      );
    }
    return refused("invalid_grant", "The refresh token is unknown.");
  }
  if (!grant) return refused("invalid_grant", "The refresh token is unknown.");
  if (grant.client_id !== clientId) {
    return refused("invalid_grant", "The refresh token was given to another app.");
  }
  if (grant.revoked !== null || !state.keyExists) {
    return refused("invalid_grant", "The app's access was revoked: sign in again.");
  }
  if (grant.refresh_expires_at === null || Date.parse(grant.refresh_expires_at) <= now.getTime()) {
    return refused("invalid_grant", "The refresh token has expired: sign in again.");
  }
  const wrongTarget = wrongResource(command.resources, grant);
  if (wrongTarget) return wrongTarget;
  return issued(grant, "refresh_token", command.tokens, now);
}

function revokeGrant(command: RevokeGrant, state: GrantState): GrantDecision {
  const grant = state.grant;
  if ("personId" in command.by) {
    // Another person's grant looks exactly like a missing one.
    if (!grant || grant.person_id !== command.by.personId) return refused("not_found", "No such app");
    return revoked(grant, "revoked");
  }
  // Unknown tokens are answered as revoked too (RFC 7009 §2.2); another app's token is not this app's to revoke.
  const clientId = command.by.clientId;
  if (!grant || grant.client_id !== (clientId ?? grant.client_id)) {
    return { ok: true, stream: "", events: [], expectedVersion: "any" };
  }
  return revoked(grant, "revoked");
}

function registerClient(command: RegisterClient): GrantDecision {
  const body = command.metadata;
  const uris = body.redirect_uris;
  if (
    !Array.isArray(uris) || uris.length === 0 || uris.length > 10 ||
    !uris.every((u) => typeof u === "string" && u.length <= 2000)
  ) {
    return refused("invalid_redirect_uri", "Give redirect_uris: 1 to 10 URLs.");
  }
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      return refused("invalid_redirect_uri", `This redirect URI cannot be used: ${problem}.`);
    }
  }
  const method = body.token_endpoint_auth_method ?? "none";
  if (method !== "none") {
    return refused(
      "invalid_client_metadata",
      `Sergo registers public clients only: token_endpoint_auth_method must be "none", not "${method}".`,
    );
  }
  const grants = body.grant_types ?? DEFAULT_GRANT_TYPES;
  if (
    !Array.isArray(grants) || !grants.every((g) => g === "authorization_code" || g === "refresh_token")
  ) {
    return refused(
      "invalid_client_metadata",
      "grant_types may be authorization_code and refresh_token only.",
    );
  }
  const rawName = typeof body.client_name === "string" ? body.client_name.trim() : "";
  const hosts = (uris as string[]).map((u) => new URL(u).host || new URL(u).protocol);
  const clientName = (rawName || hosts[0] || "An app").slice(0, 200);
  return {
    ok: true,
    stream: `client-${command.clientId}`,
    expectedVersion: "no_stream",
    events: [{
      type: "OAuthClientRegistered",
      data: { client_id: command.clientId, client_name: clientName, redirect_uris: uris as string[] },
    }],
  };
}
