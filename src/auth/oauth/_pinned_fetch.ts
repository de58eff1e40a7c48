/**
 * One GET to the address that was checked: the connection goes to that IP
 * address (so a name that resolves elsewhere the second time — DNS rebinding —
 * changes nothing), while the Host header and the TLS server name (SNI and
 * the certificate check) stay the URL's host name. One deadline covers the
 * whole exchange, the body included, and the body is capped.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";

/** Why a pinned GET failed. */
export class PinnedFetchError extends Error {
  override name = "PinnedFetchError";
  constructor(readonly reason: "timeout" | "too_large" | "connection") {
    super(`The request failed: ${reason}.`);
  }
}

/** What a pinned GET answered: the body only for a 200. */
export interface PinnedAnswer {
  status: number;
  /** The `Cache-Control` header, if any. */
  cacheControl: string | null;
  body: Uint8Array;
}

/** Options of {@linkcode fetchPinned}. */
export interface PinnedOptions {
  /** The whole exchange, body included, in ms. */
  timeoutMs: number;
  /** The body's size at most, in bytes. */
  maxBytes: number;
  accept: string;
}

/** GETs `url` from `address` (an IP address the caller checked); throws a {@linkcode PinnedFetchError}. */
export function fetchPinned(url: URL, address: string, options: PinnedOptions): Promise<PinnedAnswer> {
  const family = address.includes(":") ? 6 : 4;
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  // Whatever the name, the connection goes to the checked address.
  const lookup =
    ((_host, opts, done) =>
      opts?.all ? done(null, [{ address, family }]) : done(null, address, family)) as LookupFunction;
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      action();
    };
    const fail = (reason: PinnedFetchError["reason"]) => {
      settle(() => reject(new PinnedFetchError(reason)));
      request.destroy();
    };
    const request = transport.request({
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: url.pathname + url.search,
      method: "GET",
      headers: { accept: options.accept, host: url.host },
      lookup,
      servername: /^[\d.]+$|:/.test(hostname) ? undefined : hostname,
      agent: false,
    }, (response) => {
      const status = response.statusCode ?? 0;
      const header = response.headers["cache-control"];
      const cacheControl = typeof header === "string" ? header : null;
      if (status !== 200) {
        settle(() => resolve({ status, cacheControl, body: new Uint8Array() }));
        request.destroy();
        return;
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      response.on("data", (chunk: Uint8Array) => {
        size += chunk.byteLength;
        if (size > options.maxBytes) return fail("too_large");
        chunks.push(chunk);
      });
      response.on("end", () => {
        const body = new Uint8Array(size);
        let at = 0;
        for (const chunk of chunks) {
          body.set(chunk, at);
          at += chunk.byteLength;
        }
        settle(() => resolve({ status, cacheControl, body }));
      });
      response.on("error", () => fail("connection"));
    });
    const timer = setTimeout(() => fail("timeout"), options.timeoutMs);
    request.on("error", () => fail("connection"));
    request.end();
  });
}
