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
import { hashSecret, maskKey, parseSecret } from "./key_format.ts";

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

/** The outcome of authenticating an MCP request. */
export type McpAuthResult = { ok: true; key: AgentKey; maskedKey: string } | {
  ok: false;
  response: Response;
};

/** Reads the bearer value of an `Authorization` header, or null when there is none. */
export function bearerValue(authorization: string | null): string | null {
  if (!authorization) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return match ? match[1]! : null;
}

/** An auth failure as a JSON response, with `WWW-Authenticate` on every 401. */
export function authErrorResponse(
  error: { status: number; code: string; message: string },
  credentialSent: boolean,
): Response {
  const headers = new Headers({ "content-type": "application/json" });
  if (error.status === 401) {
    headers.set(
      "www-authenticate",
      credentialSent ? 'Bearer realm="sergo", error="invalid_token"' : 'Bearer realm="sergo"',
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
