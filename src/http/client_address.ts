/**
 * The address a request came from, for the limits counted per address (the
 * console's sign-in throttle, OAuth client registration). Behind a load
 * balancer every connection comes from the balancer, so when the peer is one
 * of `SERGO_TRUSTED_PROXIES` the client is the last address in
 * `X-Forwarded-For` that is not a trusted proxy (addresses further left were
 * written by whoever sent the request, and may be made up). Otherwise, and
 * when there is no such header, it is the peer.
 *
 * @module
 */

/** The client's address, as a string ("unknown" for a peer that is not an IP connection). */
export function clientAddress(
  request: Request,
  info: Deno.ServeHandlerInfo | undefined,
  trustedProxies: ReadonlySet<string>,
): string {
  const addr = info?.remoteAddr;
  const peer = addr && "hostname" in addr ? addr.hostname : "unknown";
  if (!trustedProxies.has(peer)) return peer;
  const forwarded = (request.headers.get("x-forwarded-for") ?? "").split(",").map((part) => part.trim())
    .filter((part) => part !== "");
  for (let i = forwarded.length - 1; i >= 0; i--) {
    if (!trustedProxies.has(forwarded[i]!)) return forwarded[i]!;
  }
  return peer;
}
