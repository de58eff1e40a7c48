/**
 * Dynamic client registration (RFC 7591), the fallback for apps without a
 * client metadata document: public clients only (no secret), redirect URIs
 * that are https, http on loopback (RFC 8252) or an app's own scheme,
 * rate-limited per address. Each registration is an event.
 *
 * @module
 */
import type { SergoApp } from "../../app.ts";
import { randomId } from "../../domain/ids.ts";
import type postgres from "postgres";
import { isLoopbackHost, jsonAnswer, oauthError, type OAuthSettings, readSmallBody } from "./_shared.ts";
import {
  LocalRegistrationLimit,
  type RegistrationCounter,
  SharedRegistrationLimit,
} from "./registration_limit.ts";
import { databaseUnreachable, LIMIT_UNCHECKED } from "../../http/unavailable.ts";

const MAX_BODY_BYTES = 16 * 1024;
/** Registrations over all addresses per hour, so a spread-out flood is bounded too. */
const GLOBAL_PER_HOUR = 1000;

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

/**
 * Builds the registration endpoint. With `shared` (the pool of the counts
 * replicas share in PostgreSQL) the limits are counted there for every
 * replica; without, in this process.
 */
export function createRegistration(
  app: SergoApp,
  settings: OAuthSettings,
  shared: postgres.Sql | null = null,
): (request: Request, address: string) => Promise<Response> {
  const limit: RegistrationCounter = shared
    ? new SharedRegistrationLimit(shared, settings.registrationsPerHour, GLOBAL_PER_HOUR)
    : new LocalRegistrationLimit(settings.registrationsPerHour, GLOBAL_PER_HOUR);
  return async (request, address) => {
    if (request.method !== "POST") return oauthError(405, "invalid_request", "Register with POST.");
    const now = app.now();
    let allowed: boolean;
    try {
      allowed = await limit.take(address, now.getTime());
    } catch (error) {
      if (!databaseUnreachable(error)) throw error;
      return oauthError(503, "temporarily_unavailable", LIMIT_UNCHECKED);
    }
    if (!allowed) {
      return jsonAnswer(
        {
          error: "slow_down",
          error_description:
            `Too many registrations: at most ${settings.registrationsPerHour} an hour from one address — try again later.`,
        },
        429,
        { "retry-after": "3600" },
      );
    }
    const text = await readSmallBody(request, MAX_BODY_BYTES);
    if (text === null) {
      return oauthError(413, "invalid_client_metadata", `The registration is larger than 16 KB.`);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text);
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw new Error();
    } catch {
      return oauthError(400, "invalid_client_metadata", "Send the registration as a JSON object.");
    }
    const uris = body.redirect_uris;
    if (
      !Array.isArray(uris) || uris.length === 0 || uris.length > 10 ||
      !uris.every((u) => typeof u === "string" && u.length <= 2000)
    ) {
      return oauthError(400, "invalid_redirect_uri", "Give redirect_uris: 1 to 10 URLs.");
    }
    for (const uri of uris as string[]) {
      const problem = redirectUriProblem(uri);
      if (problem) {
        return oauthError(400, "invalid_redirect_uri", `This redirect URI cannot be used: ${problem}.`);
      }
    }
    const method = body.token_endpoint_auth_method ?? "none";
    if (method !== "none") {
      return oauthError(
        400,
        "invalid_client_metadata",
        `Sergo registers public clients only: token_endpoint_auth_method must be "none", not "${method}".`,
      );
    }
    const grants = body.grant_types ?? ["authorization_code", "refresh_token"];
    if (
      !Array.isArray(grants) || !grants.every((g) => g === "authorization_code" || g === "refresh_token")
    ) {
      return oauthError(
        400,
        "invalid_client_metadata",
        "grant_types may be authorization_code and refresh_token only.",
      );
    }
    const rawName = typeof body.client_name === "string" ? body.client_name.trim() : "";
    const hosts = (uris as string[]).map((u) => new URL(u).host || new URL(u).protocol);
    const clientName = (rawName || hosts[0] || "An app").slice(0, 200);
    const clientId = `sgc_${randomId(24)}`;
    // (The database out of reach here is answered 503 by the OAuth server, mod.ts.)
    await app.append(`client-${clientId}`, [{
      type: "OAuthClientRegistered",
      data: { client_id: clientId, client_name: clientName, redirect_uris: uris as string[] },
      metadata: app.meta("system"),
    }], { expectedVersion: "no_stream" });
    return jsonAnswer({
      client_id: clientId,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      client_name: clientName,
      redirect_uris: uris,
      grant_types: grants,
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }, 201);
  };
}
