/**
 * Composes the OAuth server: handed the app, the network settings and the
 * console's consent and refusal pages, so OAuth itself only speaks the
 * protocol. (Apart from `services.ts`, so `mcp-stdio`, which builds the
 * services, does not load the console's pages.)
 *
 * @module
 */
import { createOAuth, type OAuthServer } from "../auth/oauth/mod.ts";
import { oauthPages } from "../console/mod.ts";
import type { Services } from "./services.ts";

/** The OAuth server of a running Sergo over its services (off with `SERGO_OAUTH=off`). */
export function createOAuthServer(services: Services): OAuthServer {
  const { app, config } = services;
  return createOAuth({
    app,
    trustedProxies: config.trustedProxies,
    sharedCounts: services.sharedCounts,
    pages: oauthPages(services),
  }, {
    enabled: config.oauth,
    publicUrl: config.publicUrl,
    loopbackClients: config.oauthLoopbackClients,
  });
}
