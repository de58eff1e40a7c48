/**
 * `sergo serve`: opens the data directory, keeps the projections up to date
 * with the log, runs the background workers and serves HTTP (or HTTPS).
 * SIGINT/SIGTERM finish in-flight requests and work (transcriptions are
 * stopped, their leases given back, to be read again at the next start), then close the
 * databases cleanly.
 *
 * @module
 */
import { join } from "node:path";
import { openApp, type SergoApp } from "../app.ts";
import type { Config } from "../config.ts";
import { createExtractionPool } from "../processing/worker_pool.ts";
import { ProcessingWorker } from "../workers/processing_worker.ts";
import { EmbeddingWorker } from "../workers/embedding_worker.ts";
import { openStandard } from "../processing/transcribers/choose.ts";
import { createServices, openRateLimiter, type Services } from "../server/services.ts";
import { composeEdges } from "../server/edges.ts";
import { createConsole } from "../console/mod.ts";
import type { SignInThrottle } from "../console/sign_in_throttle.ts";
import { ensureSigningKey } from "../audit/signing_key.ts";
import { anyPerson } from "../../projections/catalogue.ts";
import { randomId } from "../domain/ids.ts";
import { progress, progressDone } from "./_command.ts";
import { lockForServe } from "./data_lock.ts";
import type { EventType } from "../../events/types.ts";

/**
 * The events after which a worker may find something to do: a document to read
 * (uploaded, or asked to be read again), a PDF copy to make (asked for, or its
 * document's reading finished or failed), or a slot that a deleted document freed.
 */
const WORK_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  "DocumentUploaded",
  "ProcessingRequested",
  "ProcessingFailed",
  "DocumentProcessed",
  "PdfCopyRequested",
  "DocumentDeleted",
]);

/** How often workers look for documents whose lease (another process's) has run out. */
const LEASE_CHECK_MS = 5_000;

/** How long stopping waits for requests in flight before it closes without them. */
export const STOP_REQUESTS_MS = 10_000;

/** A running server: its address, and how to stop it. */
export interface RunningServer {
  app: SergoApp;
  services: Services;
  /** Computes passage vectors, where an embedding model is configured. */
  embeddings: EmbeddingWorker | null;
  url: string;
  /** The first-run setup address, when nobody existed at start. */
  setupUrl: string | null;
  /** Stops accepting, finishes in-flight work and closes everything. */
  stop(): Promise<void>;
  finished: Promise<void>;
}

/** Starts the server with a configuration; tests use it too, with port 0. */
export async function startServer(
  config: Config,
  options: { now?: () => Date; quiet?: boolean; signInThrottle?: SignInThrottle } = {},
): Promise<RunningServer> {
  const started = performance.now();
  const lock = lockForServe(config.dataDir);
  try {
    return await startLocked(config, { ...options, started, lock });
  } catch (error) {
    lock.close();
    throw error;
  }
}

async function startLocked(
  config: Config,
  options: {
    now?: () => Date;
    quiet?: boolean;
    signInThrottle?: SignInThrottle;
    started: number;
    lock: Deno.FsFile;
  },
): Promise<RunningServer> {
  const { started, lock } = options;
  // Tesseract's check is a subprocess: it runs while the data directory opens, and is waited for below.
  const standardOpened = openStandard(config.transcribe);
  // On PostgreSQL, the shared rate limits' connection opens beside the log's.
  const limiterOpened = openRateLimiter(config);
  limiterOpened.catch(() => {}); // its failure is met below, where it is waited for
  let app: SergoApp;
  try {
    app = await openApp(config.dataDir, {
      databaseUrl: config.databaseUrl,
      now: options.now,
      writer: "thread",
      onProgress: (position, head) => progress(`rebuilding projections: ${position}/${head} events`),
    });
  } catch (error) {
    (await standardOpened).close();
    await (await limiterOpened.catch(() => null))?.close();
    throw error;
  }
  progressDone();
  app.watch(250);
  await ensureSigningKey(config.dataDir);
  const pool = createExtractionPool();
  const workerId = await serveWorkerId(config);
  // PDF copies of Word files are read in the same sandboxed readers as uploads.
  const services = await createServices(app, config, {
    copyReader: pool,
    workerId,
    limiter: limiterOpened,
    dictionariesLater: true,
  });
  // First run: nobody to sign in as, so one random address (printed below) creates the first person.
  const setupToken = anyPerson(app.db) ? null : randomId(43);
  services.console = createConsole(services, { setupToken, throttle: options.signInThrottle });
  const standard = await standardOpened;
  services.transcriber = standard.reading.transcriber?.label ?? null;
  services.transcriberMissing = standard.missing;
  const worker = new ProcessingWorker(app, pool, {
    workerId,
    leaseMs: config.workLeaseMs,
    standard: standard.reading,
  });
  const embeddings = services.semantic ? new EmbeddingWorker(app, services.semantic) : null;
  // Workers look for work when an event can make some (not on every MCP call's audit
  // entry), and every few seconds for leases another process left to expire.
  const kick = () => {
    worker.kick();
    services.kick();
    embeddings?.kick();
  };
  app.onApplied((events) => {
    if (events.some((event) => WORK_EVENTS.has(event.type))) kick();
  });
  const leaseCheck = setInterval(kick, LEASE_CHECK_MS);
  kick();

  const edges = composeEdges(services);
  let open = 0;
  const handler = async (request: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
    open++;
    try {
      return await edges.handler(request, info);
    } finally {
      open--;
    }
  };
  const tls = config.certFile && config.keyFile
    ? { cert: await Deno.readTextFile(config.certFile), key: await Deno.readTextFile(config.keyFile) }
    : null;
  let resolveListening: (addr: Deno.NetAddr) => void;
  const listening = new Promise<Deno.NetAddr>((resolve) => (resolveListening = resolve));
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    ...(tls ?? {}),
    onListen: (addr) => resolveListening(addr as Deno.NetAddr),
  }, handler);
  const addr = await listening;
  // Nothing waits for the dictionaries: their subprocess starts once this process has started.
  services.readDictionaries();
  const scheme = tls ? "https" : "http";
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const url = `${scheme}://${host}:${addr.port}`;
  if (!options.quiet) {
    console.log(
      `Sergo is serving ${config.dataDir} at ${url} (ready in ${Math.round(performance.now() - started)} ms)`,
    );
  }
  const setupUrl = setupToken
    ? `${(config.publicUrl ?? url).replace(/\/+$/, "")}/setup?token=${setupToken}`
    : null;
  if (setupUrl && !options.quiet) {
    console.log(`First run: open ${setupUrl} to create the first person (an administrator); it works once.`);
  }
  let stopping: Promise<void> | null = null;
  const stop = () =>
    stopping ??= (async () => {
      clearInterval(leaseCheck);
      // Transcriptions stop at once (a long scan would hold the shutdown for hours), while requests finish.
      const workerStopped = worker.stop();
      edges.closeStreams(); // open streams would hold the shutdown forever
      // Every request has deadlines of its own; this one is for what they missed.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const drained = await Promise.race([
        server.shutdown().then(() => true),
        new Promise<false>((resolve) => timer = setTimeout(resolve, STOP_REQUESTS_MS, false)),
      ]);
      clearTimeout(timer);
      if (!drained && !options.quiet) {
        console.log(
          `Stopping without ${open} request(s) still open after ${STOP_REQUESTS_MS / 1000} s.`,
        );
      }
      await workerStopped;
      await embeddings?.stop();
      await services.close();
      await pool.close();
      standard.close();
      await app.close();
      lock.close();
    })();
  return { app, services, embeddings, url, setupUrl, stop, finished: server.finished };
}

/**
 * Who this server is in its work leases. Embedded, `serve` (one server per
 * data directory). On PostgreSQL each replica is `serve-<id>`, the id kept in
 * its data directory (`replica-id`), so replicas never take each other's
 * leases before they expire, and a replica restarted on its directory takes
 * its own back at once.
 */
export async function serveWorkerId(config: Config): Promise<string> {
  if (!config.databaseUrl) return "serve";
  const path = join(config.dataDir, "replica-id");
  try {
    const id = (await Deno.readTextFile(path)).trim();
    if (/^[A-Za-z0-9_-]{1,40}$/.test(id)) return `serve-${id}`;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const id = randomId(10);
  await Deno.writeTextFile(path, `${id}\n`);
  return `serve-${id}`;
}

/** The start of the line {@linkcode keepServingThroughStrayErrors} prints. */
export const STRAY_ERROR = "An error nothing handled was kept from ending the server";

/**
 * The last line of defence, for `sergo serve` only: an error that nothing
 * handled (a rejection no code waited for, an exception thrown in a timer,
 * such as the one the `postgres` driver throws when it writes to a connection
 * that was lost) would end the process and with it every request; it is
 * logged in one line instead and the server goes on. Each is a bug to fix
 * where it starts: the restart test fails on this line as on an uncaught one.
 */
function keepServingThroughStrayErrors(): void {
  const describe = (error: unknown) =>
    error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    console.error(`${STRAY_ERROR}: ${describe(event.reason)}`);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    console.error(`${STRAY_ERROR}: ${describe(event.error)}`);
  });
}

/** Runs the server until SIGINT or SIGTERM. */
export async function serveUntilSignalled(config: Config): Promise<number> {
  keepServingThroughStrayErrors();
  const running = await startServer(config);
  const { promise, resolve } = Promise.withResolvers<void>();
  const onSignal = () => resolve();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  await promise;
  console.log("Stopping: finishing in-flight requests; transcriptions stop and resume at the next start…");
  await running.stop();
  console.log("Stopped cleanly.");
  return 0;
}
