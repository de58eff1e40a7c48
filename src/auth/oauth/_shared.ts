/**
 * What the OAuth endpoints share: settings, the issuer and resource URLs of
 * a request, secrets and their hashes, and small answers.
 *
 * @module
 */
import { hashSecret } from "../../domain/key_format.ts";
import { randomId } from "../../domain/ids.ts";
import { readBodyText } from "../../http/read_body.ts";
import type { SergoApp } from "../../app.ts";
import type { GrantDecision } from "../../domain/grants.ts";

/** The OAuth settings of an install. */
export interface OAuthSettings {
  /** Whether Sergo is an authorization server at all (`SERGO_OAUTH`). */
  enabled: boolean;
  /** The public URL (the issuer); default the request's origin. */
  publicUrl: string | null;
  /** Accept client metadata documents at http URLs on loopback (`SERGO_OAUTH_LOOPBACK_CLIENTS`): development only. */
  loopbackClients: boolean;
  /** How long an access token works, in seconds. */
  accessTokenSeconds: number;
  /** How long a refresh token works, in seconds. */
  refreshTokenSeconds: number;
  /** How long an authorization code works, in seconds. */
  codeSeconds: number;
  /** Registrations per client address per hour. */
  registrationsPerHour: number;
}

/** The defaults: on, one-hour access tokens, 30-day refresh tokens, one-minute codes. */
export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = {
  enabled: true,
  publicUrl: null,
  loopbackClients: false,
  accessTokenSeconds: 3600,
  refreshTokenSeconds: 30 * 24 * 3600,
  codeSeconds: 60,
  registrationsPerHour: 20,
};

/** The prefixes of Sergo's OAuth secrets. */
export const ACCESS_PREFIX = "sgo_at_";
export const REFRESH_PREFIX = "sgo_rt_";
export const CODE_PREFIX = "sgo_ac_";

/** A new random secret with a prefix (43 base62 characters, about 256 bits). */
export function newSecret(prefix: string): { value: string; hash: string } {
  const value = prefix + randomId(43);
  return { value, hash: hashSecret(value) };
}

/** The issuer of a request: the public URL, or the request's origin. */
export function issuerOf(settings: OAuthSettings, request: Request): string {
  return (settings.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, "");
}

/** The MCP endpoints a token can be for (the first is the default resource). */
export const RESOURCE_PATHS = ["/mcp", "/sse", "/chatgpt/mcp"] as const;

/** The MCP endpoint a request's path belongs to: `/sse/messages` belongs to `/sse`. */
function resourcePath(path: string): (typeof RESOURCE_PATHS)[number] {
  if (path.startsWith("/sse")) return "/sse";
  if (path.startsWith("/chatgpt/")) return "/chatgpt/mcp";
  return "/mcp";
}

/** The resource (RFC 8707) a request to an MCP endpoint is for. */
export function resourceOf(settings: OAuthSettings, request: Request): string {
  return issuerOf(settings, request) + resourcePath(new URL(request.url).pathname);
}

/** The protected resource metadata URL (RFC 9728) of a resource. */
export function resourceMetadataUrl(settings: OAuthSettings, request: Request): string {
  const path = resourcePath(new URL(request.url).pathname);
  return `${issuerOf(settings, request)}/.well-known/oauth-protected-resource${path}`;
}

/** A JSON answer that is never cached. */
export function jsonAnswer(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      "access-control-allow-origin": "*",
      ...headers,
    },
  });
}

/** An OAuth error answer (RFC 6749 §5.2). */
export function oauthError(status: number, error: string, description: string): Response {
  return jsonAnswer({ error, error_description: description }, status);
}

/**
 * Reads a small request body as text; null when it is larger than `limit`
 * bytes; a body that has not arrived in 30 s is answered 408 (see `read_body.ts`).
 */
export function readSmallBody(request: Request, limit: number): Promise<string | null> {
  return readBodyText(request, limit);
}

/** Appends what a grant command decided (nothing, when it decided nothing), with `actor` as who did it. */
export async function appendDecision(app: SergoApp, decision: GrantDecision, actor: string): Promise<void> {
  if (decision.events.length === 0) return;
  await app.append(
    decision.stream,
    decision.events.map((event) => ({ ...event, metadata: app.meta(actor) })),
    { expectedVersion: decision.expectedVersion },
  );
}

/** Counts events per key over a sliding hour (or another window), for rate limits. */
export class HourlyLimit {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #seen = new Map<string, number[]>();

  constructor(limit: number, windowMs = 3600_000) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** Takes one from `key`'s allowance at `nowMs`; false when the window's allowance is spent. */
  take(key: string, nowMs: number): boolean {
    const since = nowMs - this.#windowMs;
    const times = (this.#seen.get(key) ?? []).filter((t) => t > since);
    if (times.length >= this.#limit) {
      this.#seen.set(key, times);
      return false;
    }
    times.push(nowMs);
    this.#seen.set(key, times);
    if (this.#seen.size > 10_000) {
      for (const [k, v] of this.#seen) if (v.every((t) => t <= since)) this.#seen.delete(k);
    }
    return true;
  }
}
