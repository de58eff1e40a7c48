/**
 * Sergo as its own OAuth 2.1 authorization server for connector apps: the
 * discovery documents, registration, the consent page, the token and
 * revocation endpoints, the check of access tokens on `/mcp` and `/sse`,
 * and revoking an app from a key's page. Off (`SERGO_OAUTH=off`), none of
 * it answers and no 401 names resource metadata.
 *
 * @module
 */
import { getGrant, grantByAccessToken } from "../../../projections/oauth_grants.ts";
import { readCookie } from "../api_auth.ts";
import { hashSecret } from "../../domain/key_format.ts";
import { decide } from "../../domain/grants.ts";
import { authErrorResponse, OAUTH_TOKEN_ERRORS, type OAuthCheck } from "../mcp_auth.ts";
import { CSRF_COOKIE } from "../csrf.ts";
import { signedIn } from "../session.ts";
import type { OAuthDeps } from "./deps.ts";
import {
  ACCESS_PREFIX,
  appendDecision,
  DEFAULT_OAUTH_SETTINGS,
  oauthError,
  type OAuthSettings,
  readSmallBody,
  resourceMetadataUrl,
  resourceOf,
} from "./_shared.ts";
import { createAuthorize } from "./authorize.ts";
import { ClientDirectory } from "./clients.ts";
import {
  AUTHORIZATION_SERVER_PATH,
  authorizationServerMetadata,
  PROTECTED_RESOURCE_PATH,
  protectedResourceMetadata,
} from "./metadata.ts";
import { createRegistration } from "./registration.ts";
import { createRevocationEndpoint, createTokenEndpoint } from "./token.ts";
import { clientAddress } from "../../http/client_address.ts";
import { DATABASE_UNREACHABLE, databaseUnreachable } from "../../http/unavailable.ts";

export { DEFAULT_OAUTH_SETTINGS, type OAuthSettings } from "./_shared.ts";
export type { OAuthDeps, OAuthPages } from "./deps.ts";

/** The OAuth server of a running Sergo. */
export interface OAuthServer {
  /** Answers the OAuth paths; null for any other path (or every path when OAuth is off). */
  handle(request: Request, info?: Deno.ServeHandlerInfo): Promise<Response | null>;
  /** The check of access tokens for `/mcp` and `/sse`; undefined when OAuth is off. */
  check: OAuthCheck | undefined;
}

const CORS_PREFLIGHT = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "content-type, authorization, mcp-protocol-version",
  "access-control-max-age": "600",
};

/**
 * Builds the OAuth server over what it is handed (the app, and the pages the
 * console draws for it), with settings (default on).
 */
export function createOAuth(deps: OAuthDeps, partial: Partial<OAuthSettings> = {}): OAuthServer {
  const settings: OAuthSettings = { ...DEFAULT_OAUTH_SETTINGS, ...partial };
  if (!settings.enabled) return { handle: () => Promise.resolve(null), check: undefined };
  const app = deps.app;
  const clients = new ClientDirectory(app.db, settings);
  const authorize = createAuthorize(deps, settings, clients);
  const register = createRegistration(app, settings, deps.sharedCounts);
  const token = createTokenEndpoint(app, settings);
  const revoke = createRevocationEndpoint(app);

  const check: OAuthCheck = {
    owns: (value) => value.startsWith(ACCESS_PREFIX),
    challenge: (request) => resourceMetadataUrl(settings, request),
    token(value, request, now) {
      const grant = grantByAccessToken(app.db, hashSecret(value));
      const challenge = resourceMetadataUrl(settings, request);
      if (
        !grant || grant.revoked !== null || grant.access_expires_at === null ||
        Date.parse(grant.access_expires_at) <= now.getTime()
      ) {
        return authErrorResponse(OAUTH_TOKEN_ERRORS.unknown, true, challenge);
      }
      if (grant.resource !== resourceOf(settings, request)) {
        return authErrorResponse(OAUTH_TOKEN_ERRORS.audience, true, challenge);
      }
      return { keyId: grant.key_id, via: { grant_id: grant.grant_id, client_name: grant.client_name } };
    },
  };

  /** `POST /oauth/grants/<id>/revoke`, the button on a key's page. */
  async function revokeFromConsole(request: Request, grantId: string): Promise<Response> {
    const session = signedIn(app.db, request, app.now());
    if (!session) return new Response(null, { status: 303, headers: { location: "/sign-in" } });
    const text = await readSmallBody(request, 4096);
    const form = new URLSearchParams(text ?? "");
    const cookie = readCookie(request, CSRF_COOKIE);
    const origin = request.headers.get("origin");
    const grant = getGrant(app.db, grantId) ?? null;
    const decision = decide(
      { type: "RevokeGrant", by: { personId: session.person.person_id } },
      { grant },
      app.now(),
    );
    // Another person's grant looks exactly like a missing one.
    if (!decision.ok || !grant) {
      return new Response("No such app", { status: 404, headers: { "content-type": "text/plain" } });
    }
    if (
      cookie === null || form.get("csrf") !== cookie ||
      (origin !== null && origin !== new URL(request.url).origin)
    ) {
      return new Response("This form has expired — go back and try again.", {
        status: 403,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    }
    await appendDecision(app, decision, `person-${session.person.person_id}`);
    return new Response(null, { status: 303, headers: { location: `/keys/${grant.key_id}` } });
  }

  return {
    check,
    async handle(request, info) {
      try {
        return await route(request, info);
      } catch (error) {
        // The shared database out of reach (a grant or token to append): 503 in one sentence, not a JSON 500.
        if (!databaseUnreachable(error)) throw error;
        const path = new URL(request.url).pathname;
        if (path === "/oauth/token" || path === "/oauth/revoke" || path === "/oauth/register") {
          return oauthError(503, "temporarily_unavailable", DATABASE_UNREACHABLE);
        }
        return new Response(DATABASE_UNREACHABLE, {
          status: 503,
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
      }
    },
  };

  async function route(request: Request, info?: Deno.ServeHandlerInfo): Promise<Response | null> {
    const path = new URL(request.url).pathname;
    const oauthPath = path.startsWith("/oauth/") || path === AUTHORIZATION_SERVER_PATH ||
      path.startsWith(PROTECTED_RESOURCE_PATH);
    if (!oauthPath) return null;
    if (request.method === "OPTIONS" && path !== "/oauth/authorize") {
      return new Response(null, { status: 204, headers: CORS_PREFLIGHT });
    }
    if (path.startsWith(PROTECTED_RESOURCE_PATH)) {
      if (request.method !== "GET" && request.method !== "HEAD") return null;
      return protectedResourceMetadata(settings, request, path);
    }
    if (path === AUTHORIZATION_SERVER_PATH) {
      if (request.method !== "GET" && request.method !== "HEAD") return null;
      return authorizationServerMetadata(settings, request);
    }
    if (path === "/oauth/authorize") {
      return await authorize(request, clientAddress(request, info, deps.trustedProxies));
    }
    if (path === "/oauth/token") return await token(request);
    if (path === "/oauth/revoke") return await revoke(request);
    if (path === "/oauth/register") {
      return await register(request, clientAddress(request, info, deps.trustedProxies));
    }
    const revokeMatch = /^\/oauth\/grants\/([A-Za-z0-9]{1,64})\/revoke$/.exec(path);
    if (revokeMatch && request.method === "POST") return await revokeFromConsole(request, revokeMatch[1]!);
    return null;
  }
}
