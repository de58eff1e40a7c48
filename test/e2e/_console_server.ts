/**
 * Servers for the console's tests: the real `serve` (workers, MCP, API) on
 * port 0 over a fresh data directory, or the HTTP surface called without a
 * port; each with a person who has a console password.
 *
 * @module
 */
import { openApp, type SergoApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { createServices } from "../../src/server/services.ts";
import { startServer } from "../../src/cli/serve.ts";
import { createApi } from "../../src/api/mod.ts";
import { createHandler } from "../../src/http/server.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import type { RunningServer } from "../../src/cli/serve.ts";
import { createConsole } from "../../src/console/mod.ts";
import { SignInThrottle } from "../../src/console/sign_in_throttle.ts";

/** A running server for the console test. */
export interface ConsoleServer extends AsyncDisposable {
  /** The URL the browser uses. */
  url: string;
  running: RunningServer;
  dir: string;
  email: string;
  password: string;
  /** Moves the sign-in throttle's clock on (it stands still otherwise, so no wait runs out by itself). */
  advanceSignInClock(ms: number): void;
}

/** Starts the server and adds Ava Bennett with a password. */
export async function startConsoleServer(): Promise<ConsoleServer> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-e2e-" });
  const config = { ...loadConfig(["--data", dir, "--port", "0"]) };
  // The throttle's clock stands still unless the test moves it: a slow machine cannot
  // let a wait run out between two clicks.
  let clock = Date.now();
  const throttle = new SignInThrottle({ freeFailures: 3, firstWaitMs: 2000, now: () => clock });
  const running = await startServer(config, { quiet: true, signInThrottle: throttle });
  const email = "ava@example.com";
  const password = "correct horse battery staple";
  const person = await addPerson(running.app, { name: "Ava Bennett", email });
  await setPasswordHash(running.app, person.person_id, await hashPassword(password));
  // Until `serve` mounts the console itself, serve the same services with it on a second port.
  let url = running.url;
  let front: Deno.HttpServer | null = null;
  if (!running.services.console) {
    const handler = createHandler({
      app: running.app,
      mcp: createMcpEndpoint(running.services.mcpDeps),
      api: createApi(running.services),
      console: createConsole(running.services, { throttle }),
      health: running.services.health,
    });
    const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
    front = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: (addr) => resolve(addr as Deno.NetAddr) },
      handler,
    );
    const addr = await promise;
    url = `http://127.0.0.1:${addr.port}`;
  }
  return {
    url,
    running,
    dir,
    email,
    password,
    advanceSignInClock(ms) {
      clock += ms;
    },
    async [Symbol.asyncDispose]() {
      await front?.shutdown();
      await running.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The console and API over a fresh data directory, called without a port. */
export interface ConsoleUnderTest extends AsyncDisposable {
  app: SergoApp;
  personId: string;
  email: string;
  password: string;
  /** Sends a request to the whole HTTP surface. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Builds the HTTP surface with the console (no workers, no port), with Ava Bennett and her password. */
export async function consoleUnderTest(
  options: { publicUrl?: string; origin?: string } = {},
): Promise<ConsoleUnderTest> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-console-" });
  const app = await openApp(dir);
  const config = { ...loadConfig(["--data", dir]), publicUrl: options.publicUrl ?? null };
  const services = await createServices(app, config);
  const handler = createHandler({
    app,
    api: createApi(services),
    console: createConsole(services, {
      throttle: new SignInThrottle({ freeFailures: 2, firstWaitMs: 60_000 }),
    }),
  });
  const email = "ava@example.com";
  const password = "correct horse battery staple";
  const person = await addPerson(app, { name: "Ava Bennett", email });
  await setPasswordHash(app, person.person_id, await hashPassword(password));
  const origin = options.origin ?? "http://127.0.0.1:8787";
  return {
    app,
    personId: person.person_id,
    email,
    password,
    fetch: (path, init) => handler(new Request(`${origin}${path}`, { redirect: "manual", ...init })),
    async [Symbol.asyncDispose]() {
      await services.close();
      await app.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
