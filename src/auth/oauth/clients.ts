/**
 * Who an app is: a client registered here (RFC 7591), or a client whose id
 * is the URL of its metadata document (Client ID Metadata Documents), fetched
 * with a short timeout, a size cap, no redirects and never from a private
 * address (SSRF) — except http on loopback when `SERGO_OAUTH_LOOPBACK_CLIENTS`
 * allows it, for development.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { getOAuthClient } from "../../../projections/oauth_grants.ts";
import { isLoopbackHost, type OAuthSettings } from "./_shared.ts";
import { redirectUriProblem } from "./registration.ts";

/** An app as the consent page shows it and the endpoints check it. */
export interface ClientInfo {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  /** The metadata document's URL; null for a registered client. */
  metadata_url: string | null;
}

/** The error raised when a client cannot be used; its message says why, in one sentence. */
export class ClientError extends Error {
  override name = "ClientError";
}

const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 64 * 1024;
const CACHE_MS = 5 * 60_000;
const MAX_CACHED = 1000;

/** Whether an IP address is private, loopback, link-local or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, "").toLowerCase();
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
      (a === 192 && b === 0 && Number(v4[3]) === 0) || (a === 198 && (b === 18 || b === 19));
  }
  if (!ip.includes(":")) return true; // not an address at all: refuse
  return ip === "::" || ip === "::1" || /^f[cd]/.test(ip) || /^fe[89ab]/.test(ip) || ip.startsWith("ff") ||
    ip.startsWith("::ffff:");
}

function isIpLiteral(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith("[");
}

/** Whether a client id is the URL of a metadata document (as opposed to a registered id). */
export function isMetadataUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/** Checks a metadata document URL's form; throws a {@linkcode ClientError}. */
export function checkMetadataUrl(settings: OAuthSettings, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ClientError(`The client id "${raw}" is not a URL.`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback && settings.loopbackClients)) {
    throw new ClientError(`The client metadata document must be at an https URL, not "${raw}".`);
  }
  if (url.username || url.password || url.hash || url.pathname === "/" || url.href !== raw) {
    throw new ClientError(
      `The client metadata URL "${raw}" must have a path and no credentials or fragment.`,
    );
  }
  if (loopback && !settings.loopbackClients) {
    throw new ClientError(`The client metadata URL "${raw}" points at this machine.`);
  }
  return url;
}

async function checkAddresses(settings: OAuthSettings, url: URL): Promise<void> {
  const host = url.hostname;
  if (isLoopbackHost(host)) {
    if (settings.loopbackClients) return;
    throw new ClientError(`The client metadata URL "${url.href}" points at this machine.`);
  }
  let addresses: string[];
  if (isIpLiteral(host)) {
    addresses = [host];
  } else {
    const found = await Promise.allSettled([Deno.resolveDns(host, "A"), Deno.resolveDns(host, "AAAA")]);
    addresses = found.flatMap((r) => r.status === "fulfilled" ? r.value : []);
    if (addresses.length === 0) throw new ClientError(`The host of "${url.href}" does not resolve.`);
  }
  if (addresses.some(isPrivateAddress)) {
    throw new ClientError(`The client metadata URL "${url.href}" resolves to a private address.`);
  }
}

function strings(value: unknown, max: number): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > max) return null;
  return value.every((v) => typeof v === "string" && v.length > 0 && v.length <= 2000) ? value : null;
}

/** Reads a client metadata document's fields; throws a {@linkcode ClientError}. */
export function parseClientDocument(url: string, text: string): ClientInfo {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ClientError(`The client metadata document at "${url}" is not JSON.`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new ClientError(`The client metadata document at "${url}" is not a JSON object.`);
  }
  if (doc.client_id !== url) {
    throw new ClientError(`The client metadata document at "${url}" names another client_id.`);
  }
  const redirects = strings(doc.redirect_uris, 10);
  if (!redirects) throw new ClientError(`The client metadata document at "${url}" lists no redirect_uris.`);
  // The same rules as registration: https, http on loopback, or an app's own scheme.
  for (const uri of redirects) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      throw new ClientError(
        `The client metadata document at "${url}" lists a redirect URI that cannot be used: ${problem}.`,
      );
    }
  }
  const method = doc.token_endpoint_auth_method ?? "none";
  if (method !== "none") {
    throw new ClientError(`Sergo takes public clients only: token_endpoint_auth_method must be "none".`);
  }
  const name = typeof doc.client_name === "string" && doc.client_name.trim() !== ""
    ? doc.client_name.trim().slice(0, 200)
    : new URL(url).host;
  return { client_id: url, client_name: name, redirect_uris: redirects, metadata_url: url };
}

/** Finds apps by client id: registered ones in the projections, metadata documents over the network (cached). */
export class ClientDirectory {
  readonly #db: DatabaseSync;
  readonly #settings: OAuthSettings;
  readonly #cache = new Map<string, { client: ClientInfo; until: number }>();

  constructor(db: DatabaseSync, settings: OAuthSettings) {
    this.#db = db;
    this.#settings = settings;
  }

  /** The app with this client id; throws a {@linkcode ClientError} saying why it cannot be used. */
  async find(clientId: string): Promise<ClientInfo> {
    if (clientId === "") throw new ClientError("The request names no client_id.");
    if (!isMetadataUrl(clientId)) {
      const registered = getOAuthClient(this.#db, clientId);
      if (!registered) throw new ClientError(`No app is registered with client id "${clientId}".`);
      return { ...registered, metadata_url: null };
    }
    const cached = this.#cache.get(clientId);
    if (cached && cached.until > Date.now()) return cached.client;
    const client = await this.#fetchDocument(clientId);
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    this.#cache.set(clientId, { client, until: Date.now() + CACHE_MS });
    return client;
  }

  async #fetchDocument(clientId: string): Promise<ClientInfo> {
    const url = checkMetadataUrl(this.#settings, clientId);
    await checkAddresses(this.#settings, url);
    let response: Response;
    try {
      response = await fetch(url, {
        redirect: "manual",
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      const why = error instanceof DOMException && error.name === "TimeoutError"
        ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s`
        : "the connection failed";
      throw new ClientError(`The client metadata document at "${clientId}" could not be read: ${why}.`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      const why = response.status >= 300 && response.status < 400
        ? "it redirects, and redirects are not followed"
        : `HTTP ${response.status}`;
      throw new ClientError(`The client metadata document at "${clientId}" could not be read: ${why}.`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_DOCUMENT_BYTES) {
        throw new ClientError(
          `The client metadata document at "${clientId}" is larger than ${MAX_DOCUMENT_BYTES / 1024} KB.`,
        );
      }
      chunks.push(chunk);
    }
    const text = new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
    return parseClientDocument(clientId, text);
  }
}

/**
 * Whether `redirectUri` is one of the client's: exactly, or — for a loopback
 * redirect (RFC 8252 §7.3) — the same but for the port.
 */
export function redirectAllowed(client: ClientInfo, redirectUri: string): boolean {
  if (client.redirect_uris.includes(redirectUri)) return true;
  let asked: URL;
  try {
    asked = new URL(redirectUri);
  } catch {
    return false;
  }
  if (asked.protocol !== "http:" || !isLoopbackHost(asked.hostname)) return false;
  return client.redirect_uris.some((registered) => {
    try {
      const url = new URL(registered);
      url.port = asked.port;
      return url.protocol === "http:" && isLoopbackHost(url.hostname) && url.href === asked.href;
    } catch {
      return false;
    }
  });
}
