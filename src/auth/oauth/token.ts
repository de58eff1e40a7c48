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
 * already rotated away ends the grant too (OAuth 2.1 §4.3.1). Those rules are
 * `domain/grants.ts`; the endpoints here read the request and the grant,
 * decide, append and answer.
 *
 * @module
 */
import type { SergoApp } from "../../app.ts";
import { ConcurrencyError } from "../../../events/store.ts";
import {
  getGrant,
  grantByAccessToken,
  grantByCode,
  grantByRefreshToken,
  grantOfSpentRefresh,
} from "../../../projections/oauth_grants.ts";
import { getAgentKey } from "../../../projections/key_scopes.ts";
import { hashSecret } from "../../domain/key_format.ts";
import { decide, type GrantDecision, type GrantState, type NewTokens } from "../../domain/grants.ts";
import {
  ACCESS_PREFIX,
  appendDecision,
  jsonAnswer,
  newSecret,
  oauthError,
  type OAuthSettings,
  readSmallBody,
  REFRESH_PREFIX,
} from "./_shared.ts";

const MAX_BODY_BYTES = 16 * 1024;

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
  /** Decides a token request about a grant, appends what it decided, and answers. */
  const answer = async (
    decision: GrantDecision,
    keyId: string | undefined,
    tokens: { access: string; refresh: string },
  ) => {
    await appendDecision(app, decision, `key-${keyId}`);
    if (!decision.ok) return oauthError(400, decision.error, decision.description);
    return jsonAnswer({
      access_token: tokens.access,
      token_type: "Bearer",
      expires_in: settings.accessTokenSeconds,
      refresh_token: tokens.refresh,
      scope: "mcp",
    });
  };

  return async (request) => {
    const params = await readParams(request);
    if (params instanceof Response) return params;
    const now = app.now();
    const clientId = params.get("client_id") ?? "";
    const grantType = params.get("grant_type");
    const access = newSecret(ACCESS_PREFIX);
    const refresh = newSecret(REFRESH_PREFIX);
    const tokens: NewTokens = {
      accessHash: access.hash,
      refreshHash: refresh.hash,
      accessSeconds: settings.accessTokenSeconds,
      refreshSeconds: settings.refreshTokenSeconds,
    };
    const values = { access: access.value, refresh: refresh.value };
    const resources = params.getAll("resource");
    try {
      if (grantType === "authorization_code") {
        const code = params.get("code") ?? "";
        const grant = grantByCode(app.db, hashSecret(code)) ?? null;
        const state: GrantState = {
          grant,
          keyExists: grant !== null && getAgentKey(app.db, grant.key_id) !== undefined,
        };
        const decision = decide(
          {
            type: "ExchangeCode",
            clientId,
            redirectUri: params.get("redirect_uri") ?? "",
            codeVerifier: params.get("code_verifier") ?? "",
            resources,
            tokens,
          },
          state,
          now,
        );
        return await answer(decision, grant?.key_id, values);
      }
      if (grantType === "refresh_token") {
        const hash = hashSecret(params.get("refresh_token") ?? "");
        let state: GrantState;
        const current = grantByRefreshToken(app.db, hash);
        if (current) {
          state = { grant: current, keyExists: getAgentKey(app.db, current.key_id) !== undefined };
        } else {
          const spent = grantOfSpentRefresh(app.db, hash);
          state = {
            grant: (spent ? getGrant(app.db, spent) : undefined) ?? null,
            spent: spent !== undefined,
          };
        }
        const decision = decide({ type: "RefreshTokens", clientId, resources, tokens }, state, now);
        return await answer(decision, state.grant?.key_id, values);
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
    const grant = grantByAccessToken(app.db, hash) ?? grantByRefreshToken(app.db, hash) ?? null;
    // Unknown tokens get 200 too (RFC 7009 §2.2): the decision appends nothing for them.
    const decision = decide(
      { type: "RevokeGrant", by: { clientId: params.get("client_id") } },
      { grant },
      app.now(),
    );
    await appendDecision(app, decision, `key-${grant?.key_id}`);
    return jsonAnswer({});
  };
}
