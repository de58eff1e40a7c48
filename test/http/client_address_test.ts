/**
 * The client's address behind a load balancer: `X-Forwarded-For` counts only
 * when the connection comes from a trusted proxy, and then its last address
 * that is not a trusted proxy is the client (what a client writes further
 * left cannot make it someone else); `SERGO_TRUSTED_PROXIES` through main.ts
 * refuses what is not an IP address in one line.
 */
import assert from "node:assert/strict";
import { clientAddress } from "../../src/http/client_address.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const from = (hostname: string): Deno.ServeHandlerInfo =>
  ({
    remoteAddr: { transport: "tcp", hostname, port: 40000 },
    completed: Promise.resolve(),
  }) as Deno.ServeHandlerInfo;
const request = (forwarded?: string) =>
  new Request("http://sergo.example/sign-in", forwarded ? { headers: { "x-forwarded-for": forwarded } } : {});

Deno.test("client address: X-Forwarded-For counts only from a trusted proxy, from the right", () => {
  const trusted = new Set(["10.0.0.5", "10.0.0.6"]);
  // Not from a proxy: the peer, whatever the header says.
  assert.equal(clientAddress(request("198.51.100.7"), from("203.0.113.9"), trusted), "203.0.113.9");
  // From the balancer: the address it appended.
  assert.equal(clientAddress(request("203.0.113.9"), from("10.0.0.5"), trusted), "203.0.113.9");
  // A client's own made-up entries stay left of the one the balancer wrote.
  assert.equal(clientAddress(request("1.2.3.4, 203.0.113.9"), from("10.0.0.5"), trusted), "203.0.113.9");
  // Two trusted proxies in a row.
  assert.equal(clientAddress(request("203.0.113.9,10.0.0.6"), from("10.0.0.5"), trusted), "203.0.113.9");
  // From a proxy, without the header (its health check): the proxy.
  assert.equal(clientAddress(request(), from("10.0.0.5"), trusted), "10.0.0.5");
  assert.equal(clientAddress(request("10.0.0.6"), from("10.0.0.5"), trusted), "10.0.0.5");
  // Nothing trusted (the default): always the peer.
  assert.equal(clientAddress(request("203.0.113.9"), from("10.0.0.5"), new Set()), "10.0.0.5");
  assert.equal(clientAddress(request(), undefined, trusted), "unknown");
});

Deno.test("SERGO_TRUSTED_PROXIES through main.ts: a value that is not an IP address stops serve with one line", async () => {
  await using dir = await tempDir();
  for (
    const [value, shown] of [["10.0.0.5,balancer.internal", "balancer.internal"], [
      "10.0.0.256",
      "10.0.0.256",
    ]]
  ) {
    const result = await runCli(["serve", "--data", dir.path, "--port", "0"], {
      env: { SERGO_TRUSTED_PROXIES: value! },
    });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `SERGO_TRUSTED_PROXIES must list IP addresses such as 10.0.0.5,10.0.0.6, got "${shown}"\n`,
    );
  }
});
