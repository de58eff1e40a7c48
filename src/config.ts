/**
 * Configuration by flag or environment, checked at start-up: a bad value
 * stops the command with one clear line.
 *
 * @module
 */
import { join } from "node:path";

/** The settings of a Sergo install. */
export interface Config {
  /** The data directory: events.db, projections.db, blobs/. */
  dataDir: string;
  /** The shared log in PostgreSQL (`SERGO_DATABASE_URL`); null: the embedded SQLite log in the data directory. */
  databaseUrl: string | null;
  host: string;
  port: number;
  /** Largest upload in bytes. */
  maxUploadBytes: number;
  /** Origins allowed to call /mcp (none by default; requests without Origin are fine). */
  allowedOrigins: string[];
  /** MCP calls per second per key, and the burst. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** How many passages a search looks at. */
  searchDepth: number;
  /**
   * The folder of the bilingual dictionaries cross-language search reads (`SERGO_DICTIONARIES`, default
   * `/usr/share/dictd`, where Debian's FreeDict packages install them); null when set to `off`.
   */
  dictionaryDir: string | null;
  /**
   * How long a worker's claim on a document's processing or PDF copy keeps
   * other workers (replicas) away, in ms; renewed every third of it while the work goes on.
   */
  workLeaseMs: number;
  /** The console's public URL, for connection snippets; default the request's origin. */
  publicUrl: string | null;
  /** TLS certificate and key files for https. */
  certFile: string | null;
  keyFile: string | null;
  /** Load balancers whose `X-Forwarded-For` names the client (`SERGO_TRUSTED_PROXIES`, IP addresses). */
  trustedProxies: ReadonlySet<string>;
  /** Whether Sergo is an OAuth authorization server for connector apps (`SERGO_OAUTH`). */
  oauth: boolean;
  /** Accept client metadata documents at http URLs on loopback (development only). */
  oauthLoopbackClients: boolean;
  /** Whether `/mcp`'s tools carry `annotations.title` (`SERGO_MCP_TOOL_TITLES`, default off: the reference has none). */
  mcpToolTitles: boolean;
  /** The embedding model of semantic search; null: lexical search alone. */
  embeddings: EmbeddingsConfig | null;
  /** The Standard preset's transcriber. */
  transcribe: TranscribeConfig;
}

/** How the Standard preset transcribes pages. */
export interface TranscribeConfig {
  /** `auto`: Tesseract where installed; `none`: Standard is off. */
  engine: "auto" | "tesseract" | "openai" | "anthropic" | "none";
  /** Tesseract's languages (those installed are used). */
  languages: string[];
  /** Resolution pages are drawn at for Tesseract. */
  dpi: number;
  /** Time limit per page in milliseconds. */
  timeoutMs: number;
  /** Tesseract's memory limit per page in megabytes. */
  memoryMb: number;
  /** Pages read at once (Tesseract: default the cores; vision: default 4). */
  concurrency: number | null;
  /** The vision model's endpoint, model and key (from the environment only). */
  visionUrl: string | null;
  visionModel: string | null;
  visionApiKey: string;
  /** Retries of a failed vision request. */
  retries: number;
  /** Pages of one document Standard transcribes at most (`SERGO_STANDARD_MAX_PAGES`, default 500). */
  maxPages: number;
  /** Time Standard spends on one document at most, in ms (`SERGO_STANDARD_MAX_SECONDS`, default 1,800 s). */
  maxDocumentMs: number;
}

/** Where semantic search gets its vectors: an OpenAI-compatible endpoint or a local ONNX directory. */
export type EmbeddingsConfig =
  & {
    prefixes: { query: string; passage: string };
    /** The cosine a nearest passage needs to join the results (unset: the default of `semantic.ts`). */
    minSimilarity?: number;
  }
  & (
    | { provider: "openai"; url: string; model: string; apiKey: string | null }
    | { provider: "onnx"; dir: string }
  );

/** The error raised for a bad setting. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads a `--name value` or `--name=value` flag. */
export function flagValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `--${name}`) {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("--")) throw new ConfigError(`--${name} needs a value`);
      return next;
    }
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** Where settings are read from: the process's environment, or a test's own map. */
export type Environment = (name: string) => string | undefined;

function processEnvironment(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function onOff(name: string, raw: string): boolean {
  if (raw === "on") return true;
  if (raw === "off") return false;
  throw new ConfigError(`${name} must be "on" or "off", got "${raw}"`);
}

/** Builds the configuration from flags, then the environment, then defaults. */
export function loadConfig(
  args: readonly string[] = [],
  environment: Environment = processEnvironment,
): Config {
  const env = (name: string) => environment(name) || undefined;
  const dataDir = flagValue(args, "data") ?? env("SERGO_DATA") ?? "./data";
  if (dataDir.trim() === "") throw new ConfigError("The data directory cannot be empty");
  const host = flagValue(args, "host") ?? env("SERGO_HOST") ?? "127.0.0.1";
  if (!/^[A-Za-z0-9.:\-\[\]]+$/.test(host)) {
    throw new ConfigError(`Host "${host}" is not a host name or address`);
  }
  const port = integer("Port", flagValue(args, "port") ?? env("SERGO_PORT") ?? "8787", 0, 65535);
  const maxUploadMb = integer("SERGO_MAX_UPLOAD_MB", env("SERGO_MAX_UPLOAD_MB") ?? "200", 1, 100_000);
  const origins = (env("SERGO_ALLOWED_ORIGINS") ?? "").split(",").map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) {
      throw new ConfigError(`Allowed origin "${origin}" must look like https://host[:port]`);
    }
  }
  const publicUrl = env("SERGO_PUBLIC_URL") ?? null;
  if (publicUrl !== null && !/^https?:\/\/[^\s]+$/.test(publicUrl)) {
    throw new ConfigError(`SERGO_PUBLIC_URL "${publicUrl}" must be an http or https URL`);
  }
  const certFile = flagValue(args, "cert") ?? env("SERGO_TLS_CERT") ?? null;
  const keyFile = flagValue(args, "key") ?? env("SERGO_TLS_KEY") ?? null;
  if ((certFile === null) !== (keyFile === null)) {
    throw new ConfigError("Give both --cert and --key for https, or neither");
  }
  const transcribe = loadTranscribeConfig(env);
  const databaseUrl = env("SERGO_DATABASE_URL") ?? null;
  if (databaseUrl !== null) checkDatabaseUrl(databaseUrl);
  return {
    databaseUrl,
    trustedProxies: trustedProxies(env("SERGO_TRUSTED_PROXIES") ?? ""),
    oauth: onOff("SERGO_OAUTH", env("SERGO_OAUTH") ?? "on"),
    oauthLoopbackClients: onOff("SERGO_OAUTH_LOOPBACK_CLIENTS", env("SERGO_OAUTH_LOOPBACK_CLIENTS") ?? "off"),
    mcpToolTitles: onOff("SERGO_MCP_TOOL_TITLES", env("SERGO_MCP_TOOL_TITLES") ?? "off"),
    transcribe,
    dataDir,
    host,
    port,
    maxUploadBytes: maxUploadMb * 1024 * 1024,
    allowedOrigins: origins,
    rateLimitPerSecond: integer("SERGO_RATE_LIMIT", env("SERGO_RATE_LIMIT") ?? "50", 1, 1_000_000),
    rateLimitBurst: integer("SERGO_RATE_BURST", env("SERGO_RATE_BURST") ?? "200", 1, 10_000_000),
    searchDepth: integer("SERGO_SEARCH_DEPTH", env("SERGO_SEARCH_DEPTH") ?? "50", 10, 1000),
    dictionaryDir: (env("SERGO_DICTIONARIES") ?? "/usr/share/dictd") === "off"
      ? null
      : env("SERGO_DICTIONARIES") ?? "/usr/share/dictd",
    workLeaseMs: integer("SERGO_WORK_LEASE_S", env("SERGO_WORK_LEASE_S") ?? "60", 3, 3600) * 1000,
    publicUrl,
    certFile,
    keyFile,
    embeddings: embeddingsConfig(env),
  };
}

/** `SERGO_TRUSTED_PROXIES`: comma-separated IPv4 or IPv6 addresses, as the peer's address is written. */
function trustedProxies(value: string): ReadonlySet<string> {
  const addresses = value.split(",").map((part) => part.trim()).filter((part) => part !== "");
  for (const address of addresses) {
    const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
    const ok = v4 ? v4.slice(1).every((octet) => Number(octet) <= 255) : /^[0-9a-f:.]+$/i.test(address) &&
      address.includes(":");
    if (!ok) {
      throw new ConfigError(
        `SERGO_TRUSTED_PROXIES must list IP addresses such as 10.0.0.5,10.0.0.6, got "${
          address.slice(0, 60)
        }"`,
      );
    }
  }
  return new Set(addresses);
}

/**
 * Checks the shape of `SERGO_DATABASE_URL`; the message never repeats the
 * value, which may hold a password.
 */
function checkDatabaseUrl(raw: string): void {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // Reported below.
  }
  const ok = url !== null && (url.protocol === "postgres:" || url.protocol === "postgresql:") &&
    (url.hostname !== "" || url.searchParams.has("host")) && url.pathname.length > 1;
  if (!ok) {
    throw new ConfigError(
      "SERGO_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/sergo",
    );
  }
}

function embeddingsConfig(env: Environment): EmbeddingsConfig | null {
  const url = env("SERGO_EMBEDDINGS_URL");
  const model = env("SERGO_EMBEDDINGS_MODEL");
  const apiKey = env("SERGO_EMBEDDINGS_API_KEY") ?? null;
  const dir = env("SERGO_EMBEDDINGS_MODEL_DIR");
  const prefix = (name: string) => {
    const value = env(name) ?? "";
    if (value.length > 100) throw new ConfigError(`${name} must be at most 100 characters`);
    return value;
  };
  const prefixes = {
    query: prefix("SERGO_EMBEDDINGS_QUERY_PREFIX"),
    passage: prefix("SERGO_EMBEDDINGS_PASSAGE_PREFIX"),
  };
  if (url !== undefined && dir !== undefined) {
    throw new ConfigError("Set SERGO_EMBEDDINGS_URL or SERGO_EMBEDDINGS_MODEL_DIR, not both");
  }
  const rawFloor = env("SERGO_EMBEDDINGS_MIN_SIMILARITY");
  let minSimilarity: number | undefined;
  if (rawFloor !== undefined) {
    minSimilarity = Number(rawFloor);
    if (
      rawFloor.trim() === "" || !Number.isFinite(minSimilarity) || minSimilarity < -1 || minSimilarity > 1
    ) {
      throw new ConfigError(
        `SERGO_EMBEDDINGS_MIN_SIMILARITY must be a cosine similarity from -1 to 1, got "${rawFloor}"`,
      );
    }
    if (url === undefined && dir === undefined) {
      throw new ConfigError(
        "SERGO_EMBEDDINGS_MIN_SIMILARITY needs a model: SERGO_EMBEDDINGS_URL or SERGO_EMBEDDINGS_MODEL_DIR",
      );
    }
  }
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(url)) {
      throw new ConfigError(`SERGO_EMBEDDINGS_URL "${url}" must be an http or https URL`);
    }
    if (model === undefined) {
      throw new ConfigError(
        "SERGO_EMBEDDINGS_URL needs SERGO_EMBEDDINGS_MODEL, the model name the endpoint serves",
      );
    }
    if (model.length > 200) throw new ConfigError("SERGO_EMBEDDINGS_MODEL must be at most 200 characters");
    return { provider: "openai", url, model, apiKey, prefixes, ...floor(minSimilarity) };
  }
  if (model !== undefined || apiKey !== null) {
    throw new ConfigError("SERGO_EMBEDDINGS_MODEL and SERGO_EMBEDDINGS_API_KEY need SERGO_EMBEDDINGS_URL");
  }
  if (dir !== undefined) {
    let isDirectory = false;
    try {
      isDirectory = Deno.statSync(dir).isDirectory;
    } catch {
      // Reported below.
    }
    if (!isDirectory) throw new ConfigError(`SERGO_EMBEDDINGS_MODEL_DIR "${dir}" is not a directory`);
    if (onnxModelFile(dir) === null) {
      throw new ConfigError(
        `SERGO_EMBEDDINGS_MODEL_DIR "${dir}" has no onnx/model.onnx or onnx/model_quantized.onnx`,
      );
    }
    return { provider: "onnx", dir, prefixes, ...floor(minSimilarity) };
  }
  return null;
}

/** The similarity floor, when set. */
function floor(minSimilarity: number | undefined): { minSimilarity?: number } {
  return minSimilarity === undefined ? {} : { minSimilarity };
}

const ENGINES = ["auto", "tesseract", "openai", "anthropic", "none"] as const;

function loadTranscribeConfig(env: (name: string) => string | undefined): TranscribeConfig {
  const engine = (env("SERGO_TRANSCRIBER") ?? "auto").toLowerCase();
  if (!(ENGINES as readonly string[]).includes(engine)) {
    throw new ConfigError(`SERGO_TRANSCRIBER must be one of ${ENGINES.join(", ")}, got "${engine}"`);
  }
  const rawLanguages = env("SERGO_TESSERACT_LANGUAGES");
  const languages = rawLanguages === undefined
    ? ["eng", "rus", "chi_sim", "ara", "fas", "fra", "spa", "deu"]
    : rawLanguages.split(/[,+\s]+/).map((l) => l.trim()).filter(Boolean);
  for (const language of languages) {
    if (!/^[a-z]{3}(_[a-z]+)?$/.test(language)) {
      throw new ConfigError(
        `SERGO_TESSERACT_LANGUAGES must list Tesseract language codes such as eng,rus,chi_sim, got "${language}"`,
      );
    }
  }
  if (languages.length === 0) throw new ConfigError("SERGO_TESSERACT_LANGUAGES lists no language");
  const visionUrl = env("SERGO_VISION_URL") ?? null;
  const visionModel = env("SERGO_VISION_MODEL") ?? null;
  if (engine === "openai" || engine === "anthropic") {
    if (!visionUrl) {
      throw new ConfigError(`SERGO_TRANSCRIBER=${engine} needs SERGO_VISION_URL, the endpoint's URL`);
    }
    if (!visionModel) {
      throw new ConfigError(`SERGO_TRANSCRIBER=${engine} needs SERGO_VISION_MODEL, the model's name`);
    }
  }
  if (visionUrl !== null && !/^https?:\/\/[^\s]+$/.test(visionUrl)) {
    throw new ConfigError(`SERGO_VISION_URL "${visionUrl}" must be an http or https URL`);
  }
  const concurrency = env("SERGO_TRANSCRIBE_CONCURRENCY");
  return {
    engine: engine as TranscribeConfig["engine"],
    languages,
    dpi: integer("SERGO_TRANSCRIBE_DPI", env("SERGO_TRANSCRIBE_DPI") ?? "300", 100, 600),
    timeoutMs: integer("SERGO_TRANSCRIBE_TIMEOUT_S", env("SERGO_TRANSCRIBE_TIMEOUT_S") ?? "120", 1, 3600) *
      1000,
    memoryMb: integer("SERGO_TESSERACT_MEMORY_MB", env("SERGO_TESSERACT_MEMORY_MB") ?? "1536", 128, 65536),
    concurrency: concurrency === undefined
      ? null
      : integer("SERGO_TRANSCRIBE_CONCURRENCY", concurrency, 1, 64),
    visionUrl,
    visionModel,
    visionApiKey: env("SERGO_VISION_API_KEY") ?? "",
    retries: integer("SERGO_VISION_RETRIES", env("SERGO_VISION_RETRIES") ?? "3", 0, 10),
    maxPages: integer("SERGO_STANDARD_MAX_PAGES", env("SERGO_STANDARD_MAX_PAGES") ?? "500", 1, 100_000),
    maxDocumentMs:
      integer("SERGO_STANDARD_MAX_SECONDS", env("SERGO_STANDARD_MAX_SECONDS") ?? "1800", 1, 7 * 86_400) *
      1000,
  };
}

/** The model file a directory offers, full precision first; null when it has none. */
export function onnxModelFile(dir: string): { file: string; dtype: "fp32" | "q8" } | null {
  for (const [file, dtype] of [["model.onnx", "fp32"], ["model_quantized.onnx", "q8"]] as const) {
    try {
      if (Deno.statSync(join(dir, "onnx", file)).isFile) return { file: join(dir, "onnx", file), dtype };
    } catch {
      // Try the next.
    }
  }
  return null;
}
