/**
 * The token endpoint (authorization code with PKCE, refresh tokens rotated on
 * every use) and the revocation endpoint (RFC 7009). Tokens are opaque random
 * values, kept as sha256 only: a token is checked by looking its hash up, so a
 * revoked grant or a deleted key stops it at once — which signed tokens
 * (JWTs) could not do without the same look-up.
 *
 * A code works once: exchanging it appends to the grant's stream at the
 * version the grant was made with, so a second exchange — even a concurrent
 * one — fails, and ends the grant (RFC 6749 §4.1.2). A refresh token that was
 * already rotated away ends the grant too (OAuth 2.1 §4.3.1).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { SergoApp } from "../../app.ts";
import { ConcurrencyError } from "../../../events/store.ts";
import {
  getGrant,
  grantByAccessToken,
  grantByCode,
  grantByRefreshToken,
  grantOfSpentRefresh,
  type OAuthGrant,
} from "../../../projections/oauth_grants.ts";
import { getAgentKey } from "../../../projections/key_scopes.ts";
import { hashSecret } from "../../domain/key_format.ts";
import {
  ACCESS_PREFIX,
  jsonAnswer,
  newSecret,
  oauthError,
  type OAuthSettings,
  readSmallBody,
  REFRESH_PREFIX,
} from "./_shared.ts";

const MAX_BODY_BYTES = 16 * 1024;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

async function readParams(request: Request): Promise<URLSearchParams | Response> {
  if (request.method !== "POST") return oauthError(405, "invalid_request", "Send token requests with POST.");
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    return oauthError(400, "invalid_request", "Send the request as application/x-www-form-urlencoded.");
  }
  if (new URL(request.url).search !== "") {
    return oauthError(400, "invalid_request", "Put the parameters in the body, not in the URL.");
  }
  const text = await readSmallBody(request, MAX_BODY_BYTES);
  if (text === null) return oauthError(413, "invalid_request", "The request is larger than 16 KB.");
  const params = new URLSearchParams(text);
  for (const name of new Set(params.keys())) {
    if (name !== "resource" && params.getAll(name).length > 1) {
      return oauthError(400, "invalid_request", `The request repeats "${name}".`);
    }
  }
  return params;
}

/** Builds the token endpoint. */
export function createTokenEndpoint(
  app: SergoApp,
  settings: OAuthSettings,
): (request: Request) => Promise<Response> {
  const revoke = async (grant: OAuthGrant, reason: "revoked" | "code_reused" | "refresh_reused") => {
    if (grant.revoked !== null) return;
    await app.append(`grant-${grant.grant_id}`, [{
      type: "OAuthGrantRevoked",
      data: { grant_id: grant.grant_id, reason },
      metadata: app.meta(`key-${grant.key_id}`),
    }], { expectedVersion: "any" });
  };

  const issue = async (grant: OAuthGrant, grantType: "authorization_code" | "refresh_token") => {
    const now = app.now().getTime();
    const access = newSecret(ACCESS_PREFIX);
    const refresh = newSecret(REFRESH_PREFIX);
    await app.append(`grant-${grant.grant_id}`, [{
      type: "OAuthTokensIssued",
      data: {
        grant_id: grant.grant_id,
        grant_type: grantType,
        access_hash: access.hash,
        access_expires_at: new Date(now + settings.accessTokenSeconds * 1000).toISOString(),
        refresh_hash: refresh.hash,
        refresh_expires_at: new Date(now + settings.refreshTokenSeconds * 1000).toISOString(),
      },
      metadata: app.meta(`key-${grant.key_id}`),
    }], { expectedVersion: grant.version });
    return jsonAnswer({
      access_token: access.value,
      token_type: "Bearer",
      expires_in: settings.accessTokenSeconds,
      refresh_token: refresh.value,
      scope: "mcp",
    });
  };

  const checkResource = (params: URLSearchParams, grant: OAuthGrant): Response | null => {
    const resources = params.getAll("resource");
    if (resources.length > 1 || (resources.length === 1 && resources[0] !== grant.resource)) {
      return oauthError(400, "invalid_target", `This grant is for ${grant.resource} only.`);
    }
    return null;
  };

  return async (request) => {
    const params = await readParams(request);
    if (params instanceof Response) return params;
    const now = app.now();
    const clientId = params.get("client_id") ?? "";
    const grantType = params.get("grant_type");
    try {
      if (grantType === "authorization_code") {
        const code = params.get("code") ?? "";
        const grant = grantByCode(app.db, hashSecret(code));
        if (!grant || grant.client_id !== clientId) {
          return oauthError(400, "invalid_grant", "The code is unknown, or was given to another app.");
        }
        if (grant.code_used || grant.revoked !== null) {
          await revoke(grant, "code_reused");
          return oauthError(400, "invalid_grant", "The code was used already; the app's access is revoked.");
        }
        if (Date.parse(grant.code_expires_at) <= now.getTime()) {
          return oauthError(400, "invalid_grant", "The code has expired: sign in again.");
        }
        if ((params.get("redirect_uri") ?? "") !== grant.redirect_uri) {
          return oauthError(
            400,
            "invalid_grant",
            "The redirect_uri differs from the authorization request's.",
          );
        }
        const verifier = params.get("code_verifier") ?? "";
        if (!VERIFIER.test(verifier) || s256(verifier) !== grant.code_challenge) {
          return oauthError(400, "invalid_grant", "The code_verifier does not match the code_challenge.");
        }
        const wrongTarget = checkResource(params, grant);
        if (wrongTarget) return wrongTarget;
        if (!getAgentKey(app.db, grant.key_id)) {
          return oauthError(400, "invalid_grant", "The agent key this app was given was deleted.");
        }
        return await issue(grant, "authorization_code");
      }
      if (grantType === "refresh_token") {
        const hash = hashSecret(params.get("refresh_token") ?? "");
        const grant = grantByRefreshToken(app.db, hash);
        if (!grant) {
          const spent = grantOfSpentRefresh(app.db, hash);
          const reused = spent ? getGrant(app.db, spent) : undefined;
          if (reused && reused.client_id === clientId) {
            await revoke(reused, "refresh_reused");
            return oauthError(
              400,
              "invalid_grant",
              "The refresh token was used already; the app's access is revoked.",
            );
          }
          return oauthError(400, "invalid_grant", "The refresh token is unknown.");
        }
        if (grant.client_id !== clientId) {
          return oauthError(400, "invalid_grant", "The refresh token was given to another app.");
        }
        if (grant.revoked !== null || !getAgentKey(app.db, grant.key_id)) {
          return oauthError(400, "invalid_grant", "The app's access was revoked: sign in again.");
        }
        if (grant.refresh_expires_at === null || Date.parse(grant.refresh_expires_at) <= now.getTime()) {
          return oauthError(400, "invalid_grant", "The refresh token has expired: sign in again.");
        }
        const wrongTarget = checkResource(params, grant);
        if (wrongTarget) return wrongTarget;
        return await issue(grant, "refresh_token");
      }
      return oauthError(
        400,
        "unsupported_grant_type",
        "Sergo takes grant_type authorization_code or refresh_token only.",
      );
    } catch (error) {
      if (error instanceof ConcurrencyError) {
        return oauthError(400, "invalid_grant", "The code or refresh token was used already.");
      }
      throw error;
    }
  };
}

/** Builds the revocation endpoint (RFC 7009): revoking either token ends the whole grant. */
export function createRevocationEndpoint(app: SergoApp): (request: Request) => Promise<Response> {
  return async (request) => {
    const params = await readParams(request);
    if (params instanceof Response) return params;
    const hash = hashSecret(params.get("token") ?? "");
    const grant = grantByAccessToken(app.db, hash) ?? grantByRefreshToken(app.db, hash);
    // Unknown tokens get 200 too (RFC 7009 §2.2); another app's token is not this app's to revoke.
    if (grant && grant.revoked === null && grant.client_id === (params.get("client_id") ?? grant.client_id)) {
      await app.append(`grant-${grant.grant_id}`, [{
        type: "OAuthGrantRevoked",
        data: { grant_id: grant.grant_id, reason: "revoked" },
        metadata: app.meta(`key-${grant.key_id}`),
      }], { expectedVersion: "any" });
    }
    return jsonAnswer({});
  };
}
