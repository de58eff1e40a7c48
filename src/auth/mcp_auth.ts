/**
 * Authentication of `/mcp`, before MCP starts: the reference's answers for a
 * missing, malformed, unknown or wrong kind of credential.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import {
  type AgentKey,
  type Credential,
  credentialByHash,
  getAgentKey,
  usableAt,
} from "../../projections/key_scopes.ts";
import { hashSecret, maskKey, parseSecret } from "../domain/key_format.ts";

/** The answers of `/mcp` authentication, word for word from the reference. */
export const MCP_AUTH_ERRORS = {
  noAuth: {
    status: 401,
    code: "no_auth",
    message: "No credentials — send a login token or an sgk_ key in the Authorization header",
  },
  malformed: {
    status: 401,
    code: "bad_key",
    message:
      "Malformed key — the prefix or checksum doesn't match, so check the value wasn't truncated when copied",
  },
  loginToken: {
    status: 401,
    code: "no_auth",
    message: "MCP takes an agent key (sgk_s_…) in the Authorization header",
  },
  personalKey: {
    status: 403,
    code: "personal_key",
    message: "Personal keys work with the API only — make a key for an agent to use MCP",
  },
  unknown: {
    status: 401,
    code: "bad_key",
    message: "Unknown key — it was deleted, or rolled and its old value has expired",
  },
} as const;

/** The app an OAuth access token was given to, named in the audit of its calls. */
export interface OAuthVia {
  grant_id: string;
  client_name: string;
}

/** The outcome of authenticating an MCP request. */
export type McpAuthResult = { ok: true; key: AgentKey; maskedKey: string; oauth?: OAuthVia } | {
  ok: false;
  response: Response;
};

/** How `/mcp` and `/sse` take OAuth access tokens (see `src/auth/oauth/mod.ts`). */
export interface OAuthCheck {
  /** Whether a bearer value is one of this server's OAuth access tokens (by its form). */
  owns(value: string): boolean;
  /** The key an access token acts as at this request's resource, or the answer when it does not work. */
  token(value: string, request: Request, now: Date): { keyId: string; via: OAuthVia } | Response;
  /** The `resource_metadata` URL a 401 names (RFC 9728), or null when OAuth discovery is off. */
  challenge(request: Request): string | null;
}

/** Reads the bearer value of an `Authorization` header, or null when there is none. */
export function bearerValue(authorization: string | null): string | null {
  if (!authorization) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return match ? match[1]! : null;
}

/** An auth failure as a JSON response, with `WWW-Authenticate` on every 401 (naming the resource metadata, if given). */
export function authErrorResponse(
  error: { status: number; code: string; message: string },
  credentialSent: boolean,
  resourceMetadata: string | null = null,
): Response {
  const headers = new Headers({ "content-type": "application/json" });
  if (error.status === 401) {
    const metadata = resourceMetadata === null ? "" : `, resource_metadata="${resourceMetadata}"`;
    headers.set(
      "www-authenticate",
      credentialSent
        ? `Bearer realm="sergo", error="invalid_token"${metadata}`
        : `Bearer realm="sergo"${metadata}`,
    );
  }
  return new Response(JSON.stringify({ code: error.code, message: error.message }), {
    status: error.status,
    headers,
  });
}

/** Where authentication looks keys up: the projections, or a cache of them (see `src/mcp/read_cache.ts`). */
export interface KeyLookup {
  /** The credential with this sha256, expired or not. */
  credential(hash: string): Credential | undefined;
  /** An agent key by id. */
  agentKey(keyId: string): AgentKey | undefined;
}

/** Looks keys up in the projections on every call. */
export function directKeyLookup(db: DatabaseSync): KeyLookup {
  return {
    credential: (hash) => credentialByHash(db, hash),
    agentKey: (keyId) => getAgentKey(db, keyId),
  };
}

/** Authenticates an agent key from the `Authorization` header at `now`. */
export function authenticateAgentKey(
  lookup: KeyLookup,
  authorization: string | null,
  now: Date,
): McpAuthResult {
  const value = bearerValue(authorization);
  if (value === null) return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.noAuth, false) };
  const form = parseSecret(value);
  if (!form.valid) return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.malformed, true) };
  const found = lookup.credential(hashSecret(value));
  const credential = found && usableAt(found, now) ? found : undefined;
  if (!credential) return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.unknown, true) };
  if (credential.kind === "login") {
    return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.loginToken, true) };
  }
  if (credential.kind === "personal") {
    return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.personalKey, true) };
  }
  const key = lookup.agentKey(credential.id);
  if (!key) return { ok: false, response: authErrorResponse(MCP_AUTH_ERRORS.unknown, true) };
  return { ok: true, key, maskedKey: maskKey("agent", credential.last4) };
}

/** The answer to an OAuth access token that does not work here. */
export const OAUTH_TOKEN_ERRORS = {
  unknown: {
    status: 401,
    code: "bad_token",
    message: "Unknown, expired or revoked access token — the app has to sign in again",
  },
  audience: {
    status: 401,
    code: "bad_token",
    message: "This access token was issued for another resource — the app has to sign in for this one",
  },
} as const;

/**
 * Authenticates an MCP request: an agent key (`sgk_s_…`) as
 * {@linkcode authenticateAgentKey} does, or — with `oauth` — an OAuth access
 * token acting as its key. A 401 names the resource metadata, so OAuth
 * clients can discover how to sign in, except when the request carried an
 * `sgk_` value: a client configured with a key's header is never pushed into
 * an OAuth flow. The 401 bodies stay the same.
 */
export function authenticateMcp(
  lookup: KeyLookup,
  request: Request,
  now: Date,
  oauth?: OAuthCheck,
): McpAuthResult {
  const authorization = request.headers.get("authorization");
  const value = bearerValue(authorization);
  if (oauth && value !== null && oauth.owns(value)) {
    const found = oauth.token(value, request, now);
    if (found instanceof Response) return { ok: false, response: found };
    const key = lookup.agentKey(found.keyId);
    if (!key) {
      return {
        ok: false,
        response: authErrorResponse(OAUTH_TOKEN_ERRORS.unknown, true, oauth.challenge(request)),
      };
    }
    return { ok: true, key, maskedKey: maskKey("agent", key.last4), oauth: found.via };
  }
  const result = authenticateAgentKey(lookup, authorization, now);
  if (result.ok || !oauth || result.response.status !== 401 || value?.startsWith("sgk_")) return result;
  const metadata = oauth.challenge(request);
  if (metadata === null) return result;
  const headers = new Headers(result.response.headers);
  headers.set("www-authenticate", `${headers.get("www-authenticate")}, resource_metadata="${metadata}"`);
  return { ok: false, response: new Response(result.response.body, { status: 401, headers }) };
}
