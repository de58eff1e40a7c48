/**
 * Who an app is: a client registered here (RFC 7591), or a client whose id
 * is the URL of its metadata document (Client ID Metadata Documents), fetched
 * with a short timeout for the whole answer, a size cap, no redirects and
 * never from a private address (SSRF) — except http on loopback when
 * `SERGO_OAUTH_LOOPBACK_CLIENTS` allows it, for development. The host is
 * resolved once, and the fetch connects to the address that was checked.
 * Documents and failures are cached, and fetches per host are limited.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { getOAuthClient } from "../../../projections/oauth_grants.ts";
import { isLoopbackHost, redirectUriProblem } from "../../domain/grants.ts";
import type { OAuthSettings } from "./_shared.ts";
import { fetchPinned, type PinnedAnswer, PinnedFetchError } from "./_pinned_fetch.ts";

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
const DEFAULT_CACHE_MS = 5 * 60_000;
const MIN_CACHE_MS = 60_000;
const MAX_CACHE_MS = 10 * 60_000;
const FAILURE_CACHE_MS = 30_000;
/** Fetches of metadata documents from one host per minute at most. */
export const HOST_FETCHES_PER_MINUTE = 10;
const MAX_CACHED = 1000;

/** Whether an IPv4 address (four numbers) is private, loopback, link-local or otherwise not public. */
function isPrivateV4(a: number, b: number, c: number): boolean {
  return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113);
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail included); null when it is not one. */
function ipv6Groups(ip: string): number[] | null {
  let text = ip;
  const tail = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const bytes = tail.slice(2).map(Number);
    if (bytes.some((n) => n > 255)) return null;
    text = `${tail[1]}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${
      ((bytes[2]! << 8) | bytes[3]!).toString(16)
    }`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const part = (half: string) => half === "" ? [] : half.split(":");
  const head = part(halves[0]!);
  const rest = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/**
 * Whether an IP address is private, loopback, link-local or otherwise not on
 * the public internet. IPv6 forms that carry an IPv4 address (IPv4-mapped and
 * -compatible, NAT64, 6to4, Teredo) are refused whatever the IPv4 address, as
 * is anything that is not an address at all.
 */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, "").toLowerCase();
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    return [a, b, c, d].some((n) => n > 255) || isPrivateV4(a, b, c);
  }
  const g = ipv6Groups(ip);
  if (!g) return true; // not an address at all: refuse
  const [g0, g1] = g as [number, number];
  // Only global unicast (2000::/3) is public: this refuses ::, ::1, IPv4-mapped (::ffff:a.b.c.d),
  // -compatible and -translated forms, NAT64 (64:ff9b::/96), unique local, link-local and multicast.
  if ((g0 & 0xe000) !== 0x2000) return true;
  return (g0 === 0x2001 && g1 === 0) || // Teredo 2001::/32 (carries an IPv4 address)
    (g0 === 0x2001 && g1 === 0xdb8) || // documentation 2001:db8::/32
    g0 === 0x2002; // 6to4 2002::/16 (carries an IPv4 address)
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

/** Resolves a host name to its IP addresses (A and AAAA). */
export type Resolver = (host: string) => Promise<string[]>;

async function resolveDns(host: string): Promise<string[]> {
  if (host.toLowerCase() === "localhost") return ["127.0.0.1"]; // not asked of DNS servers
  const found = await Promise.allSettled([Deno.resolveDns(host, "A"), Deno.resolveDns(host, "AAAA")]);
  return found.flatMap((r) => r.status === "fulfilled" ? r.value : []);
}

/**
 * The address to fetch a metadata document from: the host's (resolved once),
 * refused when any of its addresses is not public — except loopback ones when
 * the settings allow loopback clients. The fetch then connects to exactly this
 * address, so the name is never resolved a second time.
 */
async function checkedAddress(settings: OAuthSettings, url: URL, resolve: Resolver): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIpLiteral(url.hostname) ? [host] : await resolve(host);
  if (addresses.length === 0) throw new ClientError(`The host of "${url.href}" does not resolve.`);
  if (settings.loopbackClients && addresses.every(isLoopbackHost)) return addresses[0]!;
  if (addresses.some(isLoopbackHost)) {
    throw new ClientError(`The client metadata URL "${url.href}" points at this machine.`);
  }
  if (addresses.some(isPrivateAddress)) {
    throw new ClientError(`The client metadata URL "${url.href}" resolves to a private address.`);
  }
  return addresses[0]!;
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

/** A fetched document's client, and how long it is kept. */
interface Fetched {
  client: ClientInfo;
  lifetimeMs: number;
}

/** Options of a {@linkcode ClientDirectory}, for tests. */
export interface ClientDirectoryOptions {
  /** Resolves host names; default the system's DNS. */
  resolve?: Resolver;
  /** The clock, in ms. */
  nowMs?: () => number;
}

/**
 * How long a fetched document is kept: its `Cache-Control: max-age`, between
 * one and ten minutes (one for `no-store` or `no-cache`); five minutes without one.
 */
export function documentLifetimeMs(cacheControl: string | null): number {
  const header = cacheControl ?? "";
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)/i.exec(header)?.[1];
  const noStore = /(?:^|,)\s*no-(?:store|cache)\b/i.test(header);
  const seconds = noStore ? 0 : maxAge === undefined ? DEFAULT_CACHE_MS / 1000 : Number(maxAge);
  return Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, seconds * 1000));
}

/**
 * Finds apps by client id: registered ones in the projections, metadata
 * documents over the network. A document is fetched once however many ask at
 * the same moment, kept for {@linkcode documentLifetimeMs}; a failure is kept
 * for 30 s; and one host's documents are fetched at most 10 times a minute.
 */
export class ClientDirectory {
  readonly #db: DatabaseSync;
  readonly #settings: OAuthSettings;
  readonly #resolve: Resolver;
  readonly #now: () => number;
  readonly #cache = new Map<string, { answer: Promise<Fetched>; until: number }>();
  readonly #hostFetches = new Map<string, number[]>();

  constructor(db: DatabaseSync, settings: OAuthSettings, options: ClientDirectoryOptions = {}) {
    this.#db = db;
    this.#settings = settings;
    this.#resolve = options.resolve ?? resolveDns;
    this.#now = options.nowMs ?? Date.now;
  }

  /** The app with this client id; throws a {@linkcode ClientError} saying why it cannot be used. */
  find(clientId: string): Promise<ClientInfo> {
    if (clientId === "") return Promise.reject(new ClientError("The request names no client_id."));
    if (!isMetadataUrl(clientId)) {
      const registered = getOAuthClient(this.#db, clientId);
      if (!registered) {
        return Promise.reject(new ClientError(`No app is registered with client id "${clientId}".`));
      }
      return Promise.resolve({ ...registered, metadata_url: null });
    }
    const now = this.#now();
    const cached = this.#cache.get(clientId);
    if (cached && cached.until > now) return cached.answer.then((found) => found.client);
    const entry = { answer: this.#fetchDocument(clientId), until: Infinity }; // until it settles
    if (this.#cache.size >= MAX_CACHED) this.#evict(now);
    this.#cache.delete(clientId);
    this.#cache.set(clientId, entry);
    entry.answer.then(
      (found) => entry.until = this.#now() + found.lifetimeMs,
      () => entry.until = this.#now() + FAILURE_CACHE_MS,
    );
    return entry.answer.then((found) => found.client);
  }

  /** Drops expired entries, then the oldest ones, so the cache stays under its size. */
  #evict(now: number): void {
    for (const [id, entry] of this.#cache) if (entry.until <= now) this.#cache.delete(id);
    for (const id of this.#cache.keys()) {
      if (this.#cache.size < MAX_CACHED) break;
      this.#cache.delete(id);
    }
  }

  /** Takes one fetch from the host's allowance; false when it is spent for this minute. */
  #takeHostFetch(host: string): boolean {
    const now = this.#now();
    const times = (this.#hostFetches.get(host) ?? []).filter((t) => t > now - 60_000);
    if (times.length >= HOST_FETCHES_PER_MINUTE) return false;
    times.push(now);
    this.#hostFetches.set(host, times);
    if (this.#hostFetches.size > MAX_CACHED) {
      for (const [h, t] of this.#hostFetches) {
        if (t.every((x) => x <= now - 60_000)) this.#hostFetches.delete(h);
      }
    }
    return true;
  }

  async #fetchDocument(clientId: string): Promise<Fetched> {
    const url = checkMetadataUrl(this.#settings, clientId);
    if (!this.#takeHostFetch(url.host)) {
      throw new ClientError(
        `Client metadata documents from ${url.host} were fetched ${HOST_FETCHES_PER_MINUTE} times this minute: try again in a minute.`,
      );
    }
    const address = await checkedAddress(this.#settings, url, this.#resolve);
    let answer: PinnedAnswer;
    try {
      answer = await fetchPinned(url, address, {
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_DOCUMENT_BYTES,
        accept: "application/json",
      });
    } catch (error) {
      if (!(error instanceof PinnedFetchError)) throw error;
      const why = error.reason === "timeout"
        ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s`
        : error.reason === "too_large"
        ? `it is larger than ${MAX_DOCUMENT_BYTES / 1024} KB`
        : "the connection failed";
      throw new ClientError(`The client metadata document at "${clientId}" could not be read: ${why}.`);
    }
    if (answer.status !== 200) {
      const why = answer.status >= 300 && answer.status < 400
        ? "it redirects, and redirects are not followed"
        : `HTTP ${answer.status}`;
      throw new ClientError(`The client metadata document at "${clientId}" could not be read: ${why}.`);
    }
    const text = new TextDecoder().decode(answer.body);
    return {
      client: parseClientDocument(clientId, text),
      lifetimeMs: documentLifetimeMs(answer.cacheControl),
    };
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
