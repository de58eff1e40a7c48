/**
 * A whole Sergo server for HTTP tests: real data directory, real services,
 * the handler called directly (no port) unless a test needs a socket.
 *
 * @module
 */
import { openApp, type SergoApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createApi } from "../../src/api/mod.ts";
import { createHandler, type Handler } from "../../src/http/server.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { createServices, type Services } from "../../src/server/services.ts";

/** A server under test. */
export interface TestServer extends AsyncDisposable {
  app: SergoApp;
  services: Services;
  handler: Handler;
  dir: string;
  /** Sends a request to the handler. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts a server over a fresh data directory with an optional clock. */
export async function testServer(
  options: { now?: () => Date; env?: Record<string, string>; prepare?: (dir: string) => Promise<void> } = {},
): Promise<TestServer> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-http-" });
  // What the data folder holds before the server opens it (removed with it).
  await options.prepare?.(dir);
  const app = await openApp(dir, { now: options.now });
  // Settings come from `env` alone, so the machine's own SERGO_* variables never leak in.
  const env = options.env ?? {};
  const config = loadConfig(["--data", dir], (name) => env[name]);
  const services = await createServices(app, config);
  const handler = createHandler({
    app,
    mcp: createMcpEndpoint(services.mcpDeps),
    api: createApi(services),
    health: services.health,
  });
  return {
    app,
    services,
    handler,
    dir,
    fetch: (path, init) => handler(new Request(`http://127.0.0.1:8787${path}`, init)),
    async [Symbol.asyncDispose]() {
      await services.close();
      await app.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
