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
import { decide, DEFAULT_GRANT_TYPES, NO_GRANT } from "../../domain/grants.ts";
import { appendDecision, jsonAnswer, oauthError, type OAuthSettings, readSmallBody } from "./_shared.ts";
import {
  LocalRegistrationLimit,
  type RegistrationCounter,
  SharedRegistrationLimit,
} from "./registration_limit.ts";
import { databaseUnreachable, LIMIT_UNCHECKED } from "../../http/unavailable.ts";

const MAX_BODY_BYTES = 16 * 1024;
/** Registrations over all addresses per hour, so a spread-out flood is bounded too. */
const GLOBAL_PER_HOUR = 1000;

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
    const clientId = `sgc_${randomId(24)}`;
    const decision = decide({ type: "RegisterClient", clientId, metadata: body }, NO_GRANT, now);
    if (!decision.ok) return oauthError(400, decision.error, decision.description);
    // (The database out of reach here is answered 503 by the OAuth server, mod.ts.)
    await appendDecision(app, decision, "system");
    const registered = decision.events[0];
    if (registered?.type !== "OAuthClientRegistered") throw new Error("A registration decided no client");
    const { client_name: clientName, redirect_uris: uris } = registered.data;
    const grants = body.grant_types ?? DEFAULT_GRANT_TYPES;
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
