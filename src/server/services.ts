/**
 * The composition root: builds the services a running server shares between
 * the API, the MCP endpoint, the console and OAuth (page views, the PDF copy
 * worker, semantic search, the shared rate limits, health). Each edge declares
 * what it uses (`ApiDeps`, `ConsoleDeps`, `McpDeps`, `OAuthDeps`); the
 * services are all of them at once, and no edge imports this file.
 *
 * @module
 */
import {
  installedDictionaries,
  installedDictionariesProblem,
  releaseInstalledDictionaries,
  useInstalledDictionaries,
} from "../search/installed_dictionaries.ts";
import { join } from "node:path";
import type postgres from "postgres";
import { BlobStore } from "../blob_store.ts";
import type { SergoApp } from "../app.ts";
import type { Config } from "../config.ts";
import { carriesCsrfToken } from "../auth/csrf.ts";
import { pagePicture } from "../domain/page_pictures.ts";
import type { ApiDeps } from "../api/deps.ts";
import type { ConsoleDeps } from "../console/deps.ts";
import { converterAvailable } from "../pdf_copy/libreoffice.ts";
import { PageViews } from "../render/page_cache.ts";
import { createRenderPool, type RenderPool } from "../render/render_pool.ts";
import { type CopyReader, PdfCopyWorker } from "../workers/pdf_copy_worker.ts";
import { openSharedRateLimiter, type SharedRateLimiter } from "../mcp/shared_rate_limit.ts";
import { SharedSignInThrottle } from "../console/shared_sign_in_throttle.ts";
import { SignInThrottle } from "../console/sign_in_throttle.ts";
import { routeAudit } from "../audit/routes.ts";
import { dataPaths } from "../app.ts";
import type { McpDeps } from "../mcp/endpoint.ts";
import { mcpSettings } from "../mcp/settings.ts";
import { createEmbedder } from "../search/embedders/mod.ts";
import { SemanticSearch } from "../search/semantic.ts";

/** What the HTTP surface shares: what every edge declares it uses, and what `serve` runs. */
export interface Services extends ApiDeps, ConsoleDeps {
  app: SergoApp;
  config: Config;
  pageViews: PageViews;
  mcpDeps: McpDeps;
  /** Semantic search, where an embedding model is configured; null: search is lexical. */
  semantic: SemanticSearch | null;
  /** The Standard preset's transcriber, as the console names it; null when none is installed. */
  transcriber?: string | null;
  /** Why there is no transcriber. */
  transcriberMissing?: string | null;
  /** The pool of the counts replicas share in PostgreSQL (the rate limiter's); null embedded. */
  sharedCounts: postgres.Sql | null;
  /** The console, when it is mounted. */
  console?: (request: Request) => Promise<Response>;
  health(): Promise<Record<string, unknown>>;
  /** Looks for background work (PDF copies). */
  kick(): void;
  /** Starts reading the installed dictionaries, when `createServices` was told to leave it for later. */
  readDictionaries(): void;
  close(): Promise<void>;
}

/** Builds the services of a server over an open app. */
export async function createServices(
  app: SergoApp,
  config: Config,
  options: {
    renderPool?: RenderPool;
    copyReader?: CopyReader;
    workerId?: string;
    /** The shared rate limiter being opened already (serve opens it while the data directory opens). */
    limiter?: Promise<SharedRateLimiter | null>;
    /** Leave the dictionaries to {@linkcode Services.readDictionaries} (serve calls it once it listens). */
    dictionariesLater?: boolean;
  } = {},
): Promise<Services> {
  const pool = options.renderPool ?? createRenderPool();
  // Rendered pages live apart from originals and copies, so the cache folder can be deleted at any time.
  const pageViews = new PageViews(app.blobs, pool, { cache: new BlobStore(join(app.dataDir, "cache")) });
  const copies = new PdfCopyWorker(app, {
    reader: options.copyReader,
    workerId: options.workerId,
    leaseMs: config.workLeaseMs,
  });
  // Whether LibreOffice runs (`soffice --version`, a fifth of a second): only /healthz tells, so nothing
  // waits for it but /healthz (`serve` starts the check before it loads its modules).
  const converterChecked = converterAvailable();
  // The dictionaries are read in the background into a file of the data directory (on first start, or
  // when a dictionary changed: tens of seconds on a busy machine, in a subprocess) and looked up there:
  // until then, and without them, search is as without dictionaries. `serve` starts this once it
  // listens, so the subprocess's start is not on the same cores as its own.
  let dictionariesAsked = false;
  const readDictionaries = () => {
    if (config.dictionaryDir === null || dictionariesAsked) return;
    dictionariesAsked = true;
    useInstalledDictionaries({ dir: config.dictionaryDir, store: join(app.dataDir, DICTIONARY_FILE) })
      .catch(() => console.error(`Cross-language search is off. ${installedDictionariesProblem()}`));
  };
  if (!options.dictionariesLater) readDictionaries();
  const semantic = config.embeddings
    ? new SemanticSearch(
      await createEmbedder(config.embeddings),
      config.embeddings.minSimilarity === undefined ? {} : { minSimilarity: config.embeddings.minSimilarity },
    )
    : null;
  // Replicas on one database count each key's calls together there; embedded, this process counts them.
  const limiter = await (options.limiter ?? openRateLimiter(config));
  const services: Services = {
    app,
    config,
    pageViews,
    pagePicture: (doc, page, format) => pagePicture(pageViews, doc, { page, format }),
    audit(request, personId) {
      app.settle(); // every audit entry committed so far is in the view
      return routeAudit(request, personId, {
        projectionsDb: app.db,
        dataDir: app.dataDir,
        // The shared log has no events.db: its export reads the local copy, and its MCP calls from the database.
        ...(app.auditCalls
          ? { store: app.store, auditCalls: app.auditCalls }
          : { eventsDbPath: dataPaths(app.dataDir).events }),
      });
    },
    checkCsrf: carriesCsrfToken,
    mcpDeps: {
      db: app.db,
      store: app.store,
      now: app.now,
      settings: mcpSettings({
        allowedOrigins: config.allowedOrigins,
        rateLimitPerSecond: config.rateLimitPerSecond,
        rateLimitBurst: config.rateLimitBurst,
        searchDepth: config.searchDepth,
        toolTitles: config.mcpToolTitles,
        publicUrl: config.publicUrl,
      }),
      pageViews,
      ...(semantic ? { semantic } : {}),
      ...(limiter ? { limiter } : {}),
    },
    semantic,
    signInThrottle: limiter ? new SharedSignInThrottle(limiter.pool) : new SignInThrottle(),
    sharedCounts: limiter?.pool ?? null,
    health: async () => {
      const converter = await converterChecked;
      return {
        transcriber: services.transcriber
          ? {
            ok: true,
            engine: services.transcriber,
            ...transcribeLimits(config),
          }
          : { ok: false, detail: services.transcriberMissing ?? "none" },
        pdf_copies: converter.ok
          ? { converter: "libreoffice", ok: true }
          : { ok: false, converter: "missing", detail: converter.detail },
        search: semantic ? semantic.status(app.db) : { mode: "lexical" },
        dictionaries: dictionaryStatus(config),
      };
    },
    kick: () => copies.kick(),
    readDictionaries,
    async close() {
      // A subprocess still reading the dictionaries for this server alone ends with it.
      if (dictionariesAsked) releaseInstalledDictionaries();
      await copies.stop();
      pool.close();
      await semantic?.embedder.close();
      await limiter?.close();
    },
  };
  return services;
}

/** The file of the data directory the dictionaries are kept in (it can be deleted: it is made anew). */
export const DICTIONARY_FILE = "dictionaries.sqlite";

/** Which language pairs cross-language search translates through, for `/healthz` and the console. */
export function dictionaryStatus(config: Pick<Config, "dictionaryDir">): Record<string, unknown> {
  if (config.dictionaryDir === null) return { on: false, detail: "off (SERGO_DICTIONARIES=off)" };
  const pairs = installedDictionaries().pairs();
  const problem = installedDictionariesProblem();
  if (pairs.length > 0) {
    return { on: true, pairs: pairs.map(({ pair, source, words }) => ({ pair, source, words })) };
  }
  return problem === null
    ? { on: false, detail: `none read (yet) from ${config.dictionaryDir}` }
    : { on: false, detail: `none read from ${config.dictionaryDir}. ${problem}` };
}

/** The rate limits replicas on one database share (null embedded: each process counts its own). */
export function openRateLimiter(config: Config): Promise<SharedRateLimiter | null> {
  return config.databaseUrl
    ? openSharedRateLimiter(config.databaseUrl, {
      perSecond: config.rateLimitPerSecond,
      burst: config.rateLimitBurst,
    })
    : Promise.resolve(null);
}

/** The transcription settings `/healthz` shows (never the vision key). */
function transcribeLimits(config: Config): Record<string, number> {
  const t = config.transcribe;
  const vision = t.engine === "openai" || t.engine === "anthropic";
  return vision ? { timeout_s: t.timeoutMs / 1000, concurrency: t.concurrency ?? 4, retries: t.retries } : {
    dpi: t.dpi,
    timeout_s: t.timeoutMs / 1000,
    memory_mb: t.memoryMb,
    concurrency: t.concurrency ?? navigator.hardwareConcurrency,
  };
}
