/**
 * Discovery: protected resource metadata (RFC 9728) for `/mcp` and `/sse`,
 * and authorization server metadata (RFC 8414) for Sergo as its own
 * authorization server.
 *
 * @module
 */
import { issuerOf, jsonAnswer, type OAuthSettings, RESOURCE_PATHS } from "./_shared.ts";

/** The well-known paths answered here. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server";

/**
 * The protected resource metadata at `path`: the root form (of `/mcp`) and
 * the path-suffixed forms for `/mcp`, `/sse` and `/chatgpt/mcp`; null for
 * any other path.
 */
export function protectedResourceMetadata(
  settings: OAuthSettings,
  request: Request,
  path: string,
): Response | null {
  const suffix = path.slice(PROTECTED_RESOURCE_PATH.length);
  if (suffix !== "" && !(RESOURCE_PATHS as readonly string[]).includes(suffix)) return null;
  const issuer = issuerOf(settings, request);
  return jsonAnswer(
    {
      resource: `${issuer}${suffix === "" ? "/mcp" : suffix}`,
      authorization_servers: [issuer],
      bearer_methods_supported: ["header"],
      resource_name: "Sergo",
      resource_documentation: `${issuer}/keys`,
    },
    200,
    { "cache-control": "max-age=300" },
  );
}

/** The authorization server metadata (RFC 8414). */
export function authorizationServerMetadata(settings: OAuthSettings, request: Request): Response {
  const issuer = issuerOf(settings, request);
  return jsonAnswer(
    {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ["mcp"],
      service_documentation: `${issuer}/keys`,
    },
    200,
    { "cache-control": "max-age=300" },
  );
}
