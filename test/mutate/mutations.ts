/**
 * The small bugs `deno task mutate` plants one at a time: each a named change
 * of one piece of one line (a boundary, a comparison, a rounding, a removed
 * guard) and the test files that must fail with it. `from` must occur exactly
 * once in `file`; when code moves, the run says which entries are stale and
 * their `from` is updated here. Add an entry for every limit and guard you add.
 *
 * @module
 */

/** One planted bug. */
export interface Mutation {
  name: string;
  file: string;
  from: string;
  to: string;
  tests: string[];
  /**
   * The same bug's other places, planted with it: for a promise kept in two
   * places on purpose (each alone is redundant, so removing one is no bug).
   */
  also?: { file: string; from: string; to: string }[];
}

const LIMITS = "test/mcp/limits_test.ts";
const SEARCH = "test/mcp/search_test.ts";
const DOCUMENTS = "test/mcp/documents_test.ts";
const ABUSE = "test/mcp/abuse_test.ts";
const RENDER_POOL = "test/render/render_pool_test.ts";
const RENDER_PNG = "test/render/render_png_test.ts";
const SETTINGS = "test/e2e/settings_test.ts";
const CLI = "test/e2e/cli_commands_test.ts";
const REPLAY = "test/projections/replay_search_test.ts";
const RANKING_SCOPE = "test/search/ranking_scope_test.ts";
const SEARCH_LANGUAGES = "test/mcp/search_languages_test.ts";
const ANALYSIS = "test/analysis/analysis_test.ts";
const OAUTH_LIMITS = "test/auth/oauth_limits_test.ts";
const OAUTH_FLOW = "test/auth/oauth_flow_test.ts";
const SSE = "test/mcp/sse_test.ts";
const CONSOLE_NEWCOMER = "test/e2e/console_newcomer_test.ts";
const SIGN_IN = "test/console/sign_in_test.ts";
const PASSWORD_LINKS = "test/console/password_links_test.ts";
const SEMANTIC = "test/search/semantic_test.ts";
const TEXT_QUALITY = "test/processing/text_quality_test.ts";
const REQUEST_SHAPES = "test/mcp/request_shapes_test.ts";
const ARGUMENT_LIMITS = "test/mcp/argument_limits_test.ts";
const AUDIT_EXPORT = "test/audit/export_verify_test.ts";
const AUDIT_CLI = "test/audit/cli_routes_test.ts";
const AUDIT_VIEW = "test/projections/audit_view_test.ts";
const API = "test/api/api_test.ts";
const KEYS = "test/domain/keys_test.ts";
const KEY_LIMITS = "test/domain/key_limits_test.ts";
const FOLDERS = "test/domain/folders_test.ts";
const GUARDS = "test/processing/guards_test.ts";
const PASSWORDS = "test/domain/password_policy_test.ts";
const REQUEST_LIMITS = "test/http/request_limits_test.ts";

export const MUTATIONS: Mutation[] = [
  // The six bugs issue 20 found that no test caught.
  {
    name: "read_document: the whole-document cap cut from 24,000 to 12,000 characters",
    file: "src/mcp/texts.ts",
    from: "readCharacters: 24_000,",
    to: "readCharacters: 12_000,",
    tests: [LIMITS],
  },
  {
    name: "search: the per-document cap rounded down instead of up",
    file: "src/mcp/tools/search.ts",
    from: "const cap = Math.ceil(limit / 2);",
    to: "const cap = Math.floor(limit / 2);",
    tests: [LIMITS],
  },
  {
    name: "origin: the loopback-Host check (DNS-rebinding defence) removed",
    file: "src/mcp/endpoint.ts",
    from: "return loopbackHost(host) && (origin === ",
    to: "return (origin === ",
    tests: [ABUSE],
  },
  {
    name: "rate limit: the bucket never refills",
    file: "src/mcp/rate_limit.ts",
    from: "bucket.tokens + ((nowMs - bucket.at) / 1000) * this.#perSecond",
    to: "bucket.tokens",
    tests: [ABUSE],
  },
  {
    name: "view_page: always draws page 1",
    file: "src/mcp/tools/view_page.ts",
    from: "context.pageViews.view(source.sha256, page, format)",
    to: "context.pageViews.view(source.sha256, 1, format)",
    tests: [LIMITS],
  },
  {
    name: "render pool: 16 workers instead of its concurrency",
    file: "src/render/render_pool.ts",
    from: "const concurrency = Math.max(1, Math.floor(options.concurrency ?? 2));",
    to: "const concurrency = 16;",
    tests: [RENDER_POOL],
  },

  // search
  {
    name: "search: limit up to 19",
    file: "src/mcp/texts.ts",
    from: "searchLimitMax: 20,",
    to: "searchLimitMax: 19,",
    tests: [LIMITS],
  },
  {
    name: "search: limit up to 21",
    file: "src/mcp/texts.ts",
    from: "searchLimitMax: 20,",
    to: "searchLimitMax: 21,",
    tests: [LIMITS],
  },
  {
    name: "search: offset up to 79",
    file: "src/mcp/texts.ts",
    from: "searchOffsetMax: 80,",
    to: "searchOffsetMax: 79,",
    tests: [LIMITS],
  },
  {
    name: "search: offset up to 81",
    file: "src/mcp/texts.ts",
    from: "searchOffsetMax: 80,",
    to: "searchOffsetMax: 81,",
    tests: [LIMITS],
  },
  {
    name: "search: the next offset offered past 80",
    file: "src/mcp/tools/search.ts",
    from: "if (more && next <= LIMITS.searchOffsetMax) {",
    to: "if (more) {",
    tests: [LIMITS],
  },
  {
    name: "search: the next offset not offered when it is exactly 80",
    file: "src/mcp/tools/search.ts",
    from: "if (more && next <= LIMITS.searchOffsetMax) {",
    to: "if (more && next < LIMITS.searchOffsetMax) {",
    tests: [LIMITS],
  },
  {
    name: "search: default limit 9",
    file: "src/mcp/texts.ts",
    from: "searchLimitDefault: 10,",
    to: "searchLimitDefault: 9,",
    tests: [LIMITS],
  },
  {
    name: "search: the depth setting ignored",
    file: "src/mcp/tools/search.ts",
    from: "depth: context.settings.searchDepth,",
    to: "depth: 50,",
    tests: [SEARCH],
  },

  // list_documents
  {
    name: "list_documents: limit up to 99",
    file: "src/mcp/texts.ts",
    from: "listLimitMax: 100,",
    to: "listLimitMax: 99,",
    tests: [LIMITS],
  },
  {
    name: "list_documents: limit up to 101",
    file: "src/mcp/texts.ts",
    from: "listLimitMax: 100,",
    to: "listLimitMax: 101,",
    tests: [LIMITS],
  },
  {
    name: "list_documents: default limit 49",
    file: "src/mcp/texts.ts",
    from: "listLimitDefault: 50,",
    to: "listLimitDefault: 49,",
    tests: [LIMITS],
  },
  {
    name: "list_documents: next_offset also when nothing is left",
    file: "src/mcp/tools/list_documents.ts",
    from: "...(next < total ? { next_offset: next } : {}),",
    to: "...(next <= total ? { next_offset: next } : {}),",
    tests: [LIMITS, DOCUMENTS],
  },
  {
    name: "list_documents: offset ignored",
    file: "src/mcp/tools/list_documents.ts",
    from: "}, { limit, offset });",
    to: "}, { limit, offset: 0 });",
    tests: [LIMITS, DOCUMENTS],
  },

  // tool descriptions
  {
    name: "folder names: 19 listed",
    file: "src/mcp/texts.ts",
    from: "export const MAX_FOLDER_NAMES = 20;",
    to: "export const MAX_FOLDER_NAMES = 19;",
    tests: [LIMITS],
  },
  {
    name: "folder names: … after exactly 20",
    file: "src/mcp/texts.ts",
    from: "return names.length > MAX_FOLDER_NAMES ?",
    to: "return names.length >= MAX_FOLDER_NAMES ?",
    tests: [LIMITS],
  },

  // read_document
  {
    name: "read_document: a single page longer than the cap is not cut",
    file: "src/mcp/tools/read_document.ts",
    from: "if (text.length > limit) text = ",
    to: "if (false) text = ",
    tests: [LIMITS],
  },
  {
    name: "read_document: a whole read cuts its first long page at half the cap",
    file: "src/mcp/tools/read_document.ts",
    from: "return { text: `${piece.slice(0, limit)}",
    to: "return { text: `${piece.slice(0, limit / 2)}",
    tests: [LIMITS],
  },
  {
    name: "read_document: a whole read stops a page early",
    file: "src/mcp/tools/read_document.ts",
    from: "if (joined.length > limit) {",
    to: "if (joined.length > limit - 3000) {",
    tests: [LIMITS],
  },
  {
    name: "read_document: the still-processing answer removed",
    file: "src/mcp/tools/read_document.ts",
    from: 'if (document.status === "processing" && document.page_count === null) return fail(',
    to: "if (false) return fail(",
    tests: [LIMITS],
  },
  {
    name: "read_document: an empty page not called empty",
    file: "src/mcp/tools/read_document.ts",
    from: 'let text = row && row.text.trim() !== "" ? row.text : MESSAGES.nothingOnPage;',
    to: "let text = row ? row.text : MESSAGES.nothingOnPage;",
    tests: [LIMITS],
  },
  {
    name: "read_document: to_page before page allowed",
    file: "src/mcp/tools/read_document.ts",
    from: "if (page !== undefined && toPage !== undefined && toPage < page) return fail(",
    to: "if (false) return fail(",
    tests: [DOCUMENTS],
  },
  {
    name: "read_document: the last page taken for past the end",
    file: "src/mcp/tools/read_document.ts",
    from: "if (page !== undefined && page > pages && ",
    to: "if (page !== undefined && page >= pages && ",
    tests: [DOCUMENTS, LIMITS],
  },

  // view_page and drawing
  {
    name: "view_page: a page past the end drawn",
    file: "src/mcp/tools/view_page.ts",
    from: "if (page > source.pages) return",
    to: "if (page > source.pages + 1) return",
    tests: [DOCUMENTS],
  },
  {
    name: "drawing: longer side up to 1,600 px",
    file: "src/render/render_png.ts",
    from: "export const MAX_PAGE_SIDE_PX = 1568;",
    to: "export const MAX_PAGE_SIDE_PX = 1600;",
    tests: [LIMITS],
  },
  {
    name: "drawing: 100 dpi",
    file: "src/render/page_drawing.ts",
    from: "export const PAGE_DPI = 110;",
    to: "export const PAGE_DPI = 100;",
    tests: [LIMITS],
  },
  {
    name: "drawing: a page too large is not scaled down",
    file: "src/render/render_png.ts",
    from: "if (longest * scale > MAX_PAGE_SIDE_PX) scale = MAX_PAGE_SIDE_PX / longest;",
    to: "",
    tests: [LIMITS, RENDER_PNG],
  },

  // the endpoint's guards
  {
    name: "origin: any Origin may call",
    file: "src/mcp/endpoint.ts",
    from: "if (!originAllowed(request, settings.allowedOrigins)) {",
    to: "if (false) {",
    tests: [ABUSE],
  },
  {
    name: "rate limit: one call more than the burst",
    file: "src/mcp/rate_limit.ts",
    from: "bucket = { tokens: this.#burst, at: nowMs };",
    to: "bucket = { tokens: this.#burst + 1, at: nowMs };",
    tests: [ABUSE],
  },
  {
    name: "rate limit: refills past the burst",
    file: "src/mcp/rate_limit.ts",
    from: "bucket.tokens = Math.min(this.#burst, ",
    to: "bucket.tokens = Math.min(Infinity, ",
    tests: [ABUSE],
  },
  {
    name: "rate limit: never refuses",
    file: "src/mcp/rate_limit.ts",
    from: "if (bucket.tokens >= 1) {",
    to: "if (true) {",
    tests: [ABUSE],
  },
  {
    name: "X-Sergo-End-User: 199 characters at most",
    file: "src/mcp/settings.ts",
    from: "maxEndUserLength: 200,",
    to: "maxEndUserLength: 199,",
    tests: [ABUSE],
  },
  {
    name: "batches: the size check removed",
    file: "src/mcp/endpoint.ts",
    from: "if (messages.length > settings.maxBatch) {",
    to: "if (false) {",
    tests: [ABUSE],
  },
  {
    name: "batches: 51 messages taken",
    file: "src/mcp/endpoint.ts",
    from: "if (messages.length > settings.maxBatch) {",
    to: "if (messages.length > settings.maxBatch + 1) {",
    tests: [ABUSE],
  },
  {
    name: "credentials: expired ones accepted",
    file: "projections/key_scopes.ts",
    from: "return credential.expires_at === null || Date.parse(credential.expires_at) > now.getTime();",
    to: "return true;",
    tests: ["test/http/mcp_auth_test.ts", "test/domain/keys_test.ts"],
  },

  // settings, through main.ts
  {
    name: "settings: SERGO_RATE_LIMIT ignored",
    file: "src/config.ts",
    from: 'integer("SERGO_RATE_LIMIT", env("SERGO_RATE_LIMIT") ?? "50", 1, 1_000_000)',
    to: 'integer("SERGO_RATE_LIMIT", "50", 1, 1_000_000)',
    tests: [SETTINGS],
  },
  {
    name: "settings: SERGO_SEARCH_DEPTH from 1",
    file: "src/config.ts",
    from: 'env("SERGO_SEARCH_DEPTH") ?? "50", 10, 1000)',
    to: 'env("SERGO_SEARCH_DEPTH") ?? "50", 1, 1000)',
    tests: [SETTINGS],
  },
  {
    name: "settings: SERGO_MAX_UPLOAD_MB ignored",
    file: "src/config.ts",
    from: "maxUploadBytes: maxUploadMb * 1024 * 1024,",
    to: "maxUploadBytes: 200 * 1024 * 1024,",
    tests: [SETTINGS],
  },

  {
    name: "settings: SERGO_PUBLIC_URL ignored by the console",
    file: "src/console/session.ts",
    from: "return (services.config.publicUrl ?? new URL(request.url).origin)",
    to: "return (new URL(request.url).origin)",
    tests: [SETTINGS],
  },
  {
    name: "settings: SERGO_ALLOWED_ORIGINS keeps only the first origin",
    file: "src/config.ts",
    from: '.split(",").map((o) => o.trim()).filter(Boolean);',
    to: '.split(",").map((o) => o.trim()).filter(Boolean).slice(0, 1);',
    tests: [SETTINGS],
  },

  // CLI commands
  {
    name: "cli: document list oldest first",
    file: "projections/catalogue.ts",
    from: "ORDER BY uploaded_position DESC",
    to: "ORDER BY uploaded_position ASC",
    tests: [CLI, DOCUMENTS],
  },

  // domain rules
  {
    name: "folders: names up to 201 characters",
    file: "src/domain/rules.ts",
    from: "export const MAX_FOLDER_NAME = 200;",
    to: "export const MAX_FOLDER_NAME = 201;",
    tests: ["test/domain/folders_test.ts"],
  },
  {
    name: "keys: descriptions up to 1,001 characters",
    file: "src/domain/rules.ts",
    from: "export const MAX_DESCRIPTION = 1000;",
    to: "export const MAX_DESCRIPTION = 1001;",
    tests: ["test/domain/keys_test.ts"],
  },
  {
    name: "keys: names up to 33 characters",
    file: "src/domain/rules.ts",
    from: "/^[a-z][a-z0-9-]{1,31}$/",
    to: "/^[a-z][a-z0-9-]{1,32}$/",
    tests: ["test/domain/keys_test.ts"],
  },

  // processing guards
  {
    name: "processing: the PDF page-count guard removed",
    file: "src/processing/pdf_extract.ts",
    from: "if (count > MAX_PDF_PAGES) {",
    to: "if (false) {",
    tests: ["test/processing/guards_test.ts"],
  },
  {
    name: "processing: the zip entry-count guard removed",
    file: "src/processing/_zip.ts",
    from: "if (entries.size >= MAX_ZIP_ENTRIES) {",
    to: "if (false) {",
    tests: ["test/processing/guards_test.ts"],
  },
  {
    name: "processing: 10,001 zip entries taken",
    file: "src/processing/_zip.ts",
    from: "if (entries.size >= MAX_ZIP_ENTRIES) {",
    to: "if (entries.size > MAX_ZIP_ENTRIES) {",
    tests: ["test/processing/guards_test.ts"],
  },

  // more limits and guards
  {
    name: "uploads: 5 arriving at once per person",
    file: "src/api/uploads.ts",
    from: "export const MAX_UPLOADS_PER_PERSON = 4;",
    to: "export const MAX_UPLOADS_PER_PERSON = 5;",
    tests: ["test/api/upload_limits_test.ts"],
  },
  {
    name: "uploads: the size limit not given to the parser",
    file: "src/api/uploads.ts",
    from: "limits: { fileSize: maxBytes,",
    to: "limits: { fileSize: Infinity,",
    tests: ["test/api/api_test.ts", SETTINGS],
  },
  {
    name: "key cap: creations at the same moment are not taken back",
    file: "src/domain/keys.ts",
    from: "  return live.filter((id) => createdAt(id) < mine).length < cap;",
    to: "  return true;",
    tests: ["test/domain/key_limits_test.ts"],
  },
  {
    name: "key names: creations or renames to one name at the same moment all kept",
    file: "src/domain/keys.ts",
    from: "if (holders.length <= 1) return true;",
    to: "return true;",
    tests: ["test/domain/key_names_test.ts"],
  },
  {
    name: "folder names: creations, renames or moves to one name in one place at the same moment all kept",
    file: "src/domain/folders.ts",
    from: "return first === undefined || first.folder_id === folder.folder_id;",
    to: "return true;",
    tests: ["test/domain/folder_names_test.ts"],
  },
  {
    name:
      "duplicate uploads: the same bytes refused in one folder kept twice when two replicas record them at once",
    file: "src/domain/documents.ts",
    from: "if (first === undefined || first.document_id === made.document_id) return made;",
    to: "return made;",
    tests: ["test/e2e/postgres_names_test.ts"],
  },
  {
    name: "sign-in throttle: counted in each replica's memory on PostgreSQL",
    file: "src/server/services.ts",
    from: "signInThrottle: limiter ? new SharedSignInThrottle(limiter.pool) : new SignInThrottle(),",
    to: "signInThrottle: new SignInThrottle(),",
    tests: ["test/e2e/postgres_sign_in_test.ts"],
  },
  {
    name: "OAuth registrations: the limit counted per replica on PostgreSQL",
    file: "src/auth/oauth/registration.ts",
    from: "const limit: RegistrationCounter = shared",
    to: "const limit: RegistrationCounter = null",
    tests: ["test/e2e/postgres_sign_in_test.ts"],
  },
  {
    name: "shared registration limit: registrations older than an hour never forgotten",
    file: "src/auth/oauth/registration_limit.ts",
    from: "FROM unnest(r.times) AS t WHERE t > now_ms - window_ms ORDER BY t",
    to: "FROM unnest(r.times) AS t ORDER BY t",
    tests: ["test/e2e/postgres_sign_in_test.ts"],
  },
  {
    name: "PostgreSQL unreachable: a sign-in whose count cannot be checked answered 500",
    file: "src/console/sign_in.ts",
    from: "return { ok: false, status: 503, message: LIMIT_UNCHECKED, email };",
    to: "throw error;",
    tests: ["test/e2e/postgres_outage_test.ts"],
  },
  {
    name: "PostgreSQL unreachable: an API change answered the generic 500",
    file: "src/http/json.ts",
    from: 'if (databaseUnreachable(error)) return errorResponse(503, "unavailable", DATABASE_UNREACHABLE);',
    to: "",
    tests: ["test/e2e/postgres_outage_test.ts"],
  },
  {
    name: "PostgreSQL unreachable: a console change answered the server's JSON 500",
    file: "src/console/console.ts",
    from: "if (!databaseUnreachable(error)) throw error;",
    to: "throw error;",
    tests: ["test/e2e/postgres_outage_test.ts"],
  },
  {
    name: "shared sign-in throttle: an address the account signed in from held by the account's count",
    file: "src/console/shared_sign_in_throttle.ts",
    from: "IF EXISTS (SELECT 1 FROM sergo_sign_in_counts WHERE key = known_key) THEN n := n - 1; END IF;",
    to: "",
    tests: ["test/e2e/postgres_sign_in_test.ts"],
  },
  {
    name: "shared sign-in throttle: failures never forgotten",
    file: "src/console/shared_sign_in_throttle.ts",
    from: "SET count = CASE WHEN now_ms - s.last_ms > forget_ms THEN 1 ELSE s.count + 1 END",
    to: "SET count = s.count + 1",
    tests: ["test/e2e/postgres_sign_in_test.ts"],
  },
  {
    name: "folder paths: a path made twice at once fails where the other process made the folder first",
    file: "src/domain/folders.ts",
    from: "return { folder: first, made: false };",
    to: "throw nameTaken(input.name);",
    tests: ["test/domain/folder_names_test.ts"],
  },
  {
    name: "folder moves: two moves at once that nest two folders in each other both kept",
    file: "src/domain/folders.ts",
    from: "return Math.max(...members.map(parentSetAt)) === position;",
    to: "return false;",
    tests: ["test/domain/folder_names_test.ts"],
  },
  {
    name: "catalogue: a cycle of folders walked forever when paths are recomputed",
    file: "projections/catalogue.ts",
    from: "if (visited.has(folderId)) return;",
    to: "",
    tests: ["test/domain/folder_names_test.ts"],
  },
  {
    name: "claims: a live lease of another worker taken",
    file: "projections/catalogue.ts",
    from: "processing_lease_until IS NULL OR processing_lease_until <= ?",
    to: "processing_lease_until IS NULL OR processing_lease_until <= ? OR 1",
    tests: ["test/workers/processing_worker_test.ts"],
  },
  {
    name: "claims: an expired lease never taken over",
    file: "projections/catalogue.ts",
    from: "processing_lease_until IS NULL OR processing_lease_until <= ?",
    to: "processing_lease_until IS NULL OR (processing_lease_until <= ? AND 0)",
    tests: ["test/workers/processing_worker_test.ts"],
  },
  {
    name: "claims: serve does not take its own leases back after a restart",
    file: "projections/catalogue.ts",
    from: "            OR processing_worker = ?)",
    to: "            OR (processing_worker = ? AND 0))",
    tests: ["test/workers/processing_worker_test.ts"],
  },
  {
    name: "PDF copies: the converter's search path ignored",
    file: "src/pdf_copy/libreoffice.ts",
    from: "const env = options.searchPath === undefined ? undefined : { PATH: options.searchPath };",
    to: "const env = undefined;",
    tests: [DOCUMENTS],
  },
  {
    name: "search: an excerpt a page repeats given again",
    file: "src/mcp/tools/search.ts",
    from: "    if (seen.has(id)) return false;",
    to: "",
    tests: ["test/mcp/folders_and_excerpts_test.ts"],
  },
  {
    name: "people: a later addition of an email in use taken for a person",
    file: "src/domain/people.ts",
    from:
      '    if (!person) throw new DomainError("conflict", `A person with email "${email}" already exists`);\n    return person;\n  });\n}\n\n/** Finds',
    to: "    return person!;\n  });\n}\n\n/** Finds",
    tests: ["test/domain/email_race_test.ts"],
  },
  {
    name: "login tokens: 8 days instead of 7",
    file: "src/domain/keys_decide.ts",
    from: "export const LOGIN_TOKEN_LIFETIME_MS = 7 * 86_400_000;",
    to: "export const LOGIN_TOKEN_LIFETIME_MS = 8 * 86_400_000;",
    tests: [CLI, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "key roll: a 1h grace lasts 2h",
    file: "src/domain/rules.ts",
    from: '"1h": 3_600_000,',
    to: '"1h": 7_200_000,',
    tests: ["test/domain/keys_test.ts"],
  },
  {
    name: "MCP: request bodies up to 1 GB",
    file: "src/mcp/settings.ts",
    from: "maxBodyBytes: 1_000_000,",
    to: "maxBodyBytes: 1_000_000_000,",
    tests: ["test/http/mcp_auth_test.ts", "test/e2e/hostile_requests_test.ts"],
  },

  // replay
  {
    name: "replay digest: the full-text index left out",
    file: "projections/search_index.ts",
    from: '"search_vocab", "search_fts_sizes"]',
    to: "]",
    tests: [REPLAY],
  },

  // search ranking isolation (issue 13, item 5)
  {
    name: "search: document frequencies counted over the whole index, not the scope",
    file: "src/search/lexical.ts",
    from: "    const df = found.length;",
    to: "    const df = matchingRowids(db, { match: expression, limit: DF_CAP }).length;",
    tests: [RANKING_SCOPE],
  },
  {
    name: "search: an index built with another analysis is kept",
    file: "projections/search_index.ts",
    from: "if (named?.version === version) return;",
    to: "if (named) return;",
    tests: [RANKING_SCOPE],
  },
  {
    name: "search: a Chinese passage's length counts its two-character tokens",
    file: "projections/search_index.ts",
    from: "length: options.halfUnspacedLength ? bodyLength(body) : body.length,",
    to: "length: body.length,",
    tests: [RANKING_SCOPE],
  },
  {
    name: "search: Russian stemming off by default",
    file: "src/analysis/analysis.ts",
    from: "  russianStemming: true,",
    to: "  russianStemming: false,",
    tests: [SEARCH_LANGUAGES],
  },
  {
    name: "search: Russian words not stemmed",
    file: "src/analysis/analysis.ts",
    from: 'if (options.russianStemming && CYRILLIC.test(word)) return stem("ru", word);',
    to: "if (options.russianStemming && CYRILLIC.test(word)) return word;",
    tests: [SEARCH_LANGUAGES, ANALYSIS],
  },
  {
    name: "search: a Russian stem not indexed stemmed again (romanam meets roman no more)",
    file: "src/analysis/analysis.ts",
    from: "  return again === term ? null : again;",
    to: "  return null;",
    tests: [ANALYSIS],
  },
  {
    name: "search: a document's scope token without its person",
    file: "src/analysis/scope.ts",
    from: "return `\\ue0003${digits(`${personId}/${documentId}`)}`;",
    to: "return `\\ue0003${digits(documentId)}`;",
    tests: [RANKING_SCOPE],
  },
  // Limits and guards of the 2026-12-01 session (issue 20, item 5).
  // OAuth
  {
    name: "oauth: the code_verifier not compared with the code_challenge",
    file: "src/domain/grants.ts",
    from: "if (!VERIFIER.test(verifier) || s256(verifier) !== grant.code_challenge) {",
    to: "if (!VERIFIER.test(verifier)) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: code_challenge_method other than S256 taken",
    file: "src/auth/oauth/authorize.ts",
    from: 'if (params.get("code_challenge_method") !== "S256" || !CHALLENGE.test(challenge)) {',
    to: "if (!CHALLENGE.test(challenge)) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: any redirect_uri allowed at authorization",
    file: "src/auth/oauth/authorize.ts",
    from: "if (!redirectAllowed(client, redirectUri)) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: the token request's redirect_uri not compared",
    file: "src/domain/grants.ts",
    from: "if (command.redirectUri !== grant.redirect_uri) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: an expired code exchanged",
    file: "src/domain/grants.ts",
    from: "if (Date.parse(grant.code_expires_at) <= now.getTime()) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: a code exchanged twice",
    file: "src/domain/grants.ts",
    from: "if (grant.code_used || grant.revoked !== null) {",
    to: "if (grant.revoked !== null) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: an expired access token accepted",
    file: "src/auth/oauth/mod.ts",
    from: "Date.parse(grant.access_expires_at) <= now.getTime()",
    to: "false",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: an expired refresh token accepted",
    file: "src/domain/grants.ts",
    from: "Date.parse(grant.refresh_expires_at) <= now.getTime()) {",
    to: "false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: a refresh token used by another app",
    file: "src/domain/grants.ts",
    from: "if (grant.client_id !== clientId) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: the token request's resource indicator not checked",
    file: "src/domain/grants.ts",
    from: "if (resources.length > 1 || (resources.length === 1 && resources[0] !== grant.resource)) {",
    to: "if (resources.length > 1) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: the authorization's resource indicator not checked",
    file: "src/auth/oauth/authorize.ts",
    from: "if (resources.length > 1 || (resources.length === 1 && !ours.includes(resources[0]!))) {",
    to: "if (resources.length > 1) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW],
  },
  {
    name: "oauth: an access token used at another resource",
    file: "src/auth/oauth/mod.ts",
    from: "if (grant.resource !== resourceOf(settings, request)) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS, OAUTH_FLOW, SSE],
  },
  {
    name: "oauth: client metadata documents of any size",
    file: "src/auth/oauth/_pinned_fetch.ts",
    from: 'if (size > options.maxBytes) return fail("too_large");',
    to: 'if (false) return fail("too_large");',
    tests: [OAUTH_LIMITS],
  },
  {
    name: "oauth: client metadata URLs resolving to private addresses fetched",
    file: "src/auth/oauth/clients.ts",
    from: "if (addresses.some(isPrivateAddress)) {",
    to: "if (false) {",
    tests: [OAUTH_LIMITS],
  },

  // SSE
  {
    name: "sse: one session more than the per-key cap",
    file: "src/mcp/transports/sse.ts",
    from: "if (count >= maxPerKey) {",
    to: "if (count > maxPerKey) {",
    tests: [SSE],
  },
  {
    name: "sse: a session's messages taken with another key",
    file: "src/mcp/transports/sse.ts",
    from: "if (!session || session.keyId !== auth.key.key_id) {",
    to: "if (!session) {",
    tests: [SSE],
  },
  {
    name: "sse: open sessions not ended when their key stops working",
    file: "src/mcp/transports/sse.ts",
    from: "if (!auth.ok || auth.key.key_id !== session.keyId) session.end();",
    to: "if (false) session.end();",
    tests: [SSE],
  },

  // console
  {
    name: "console: /people open to people who are not administrators",
    file: "src/console/console.ts",
    from: 'if (route.access === "administrator" && !admin) return notHere();',
    to: "",
    tests: [CONSOLE_NEWCOMER],
  },
  {
    name: "console: the setup address works after the first person exists",
    file: "src/console/console.ts",
    from: "state.setupHash !== null && !anyPerson(services.app.db) && hashSecret(token) === state.setupHash;",
    to: "state.setupHash !== null && hashSecret(token) === state.setupHash;",
    tests: ["test/console/setup_once_test.ts", CONSOLE_NEWCOMER],
  },
  {
    name: "console: an invitation link works twice",
    file: "projections/catalogue.ts",
    from: 'statement(db, "DELETE FROM cat_password_links WHERE link_id = ?").run(event.data.link_id);',
    to: "",
    tests: [CONSOLE_NEWCOMER],
  },
  {
    name: "console: an expired invitation link works",
    file: "src/domain/people.ts",
    from: "if (!link || Date.parse(link.expires_at) <= app.now().getTime()) return null;",
    to: "if (!link) return null;",
    tests: [PASSWORD_LINKS, CONSOLE_NEWCOMER],
  },
  {
    name: "console: forms of another content type read",
    file: "src/console/console.ts",
    from: 'if (type.startsWith("application/x-www-form-urlencoded") && request.body) {',
    to: "if (request.body) {",
    tests: [PASSWORD_LINKS, "test/console/sign_in_test.ts"],
  },
  {
    name: "uploads: a duplicate kept when duplicates are refused",
    file: "src/domain/documents.ts",
    from: "if (!input.refuseDuplicate) return await record();",
    to: "return await record();",
    tests: ["test/api/upload_limits_test.ts", "test/api/api_test.ts"],
  },
  {
    name: "api: a body sent as another content type read as JSON",
    file: "src/api/mod.ts",
    from: 'if (!type.includes("application/json")) {',
    to: "if (false) {",
    tests: ["test/api/api_test.ts", "test/api/upload_limits_test.ts"],
  },
  {
    name: "mcp: a body sent as another content type read as JSON",
    file: "src/mcp/endpoint.ts",
    from: 'if (!isJsonContentType(request.headers.get("content-type"))) {',
    to: "if (false) {",
    tests: ["test/mcp/endpoint_test.ts", "test/http/mcp_auth_test.ts", "test/e2e/hostile_requests_test.ts"],
  },
  {
    name: "passwords: the most common ones taken",
    file: "src/domain/password_policy.ts",
    from: "if ((await commonPasswords()).has(lower)) {",
    to: "if (false) {",
    tests: ["test/domain/password_policy_test.ts"],
  },
  {
    name: "passwords: 7 characters taken",
    file: "src/domain/password_policy.ts",
    from: "export const MIN_PASSWORD_LENGTH = 8;",
    to: "export const MIN_PASSWORD_LENGTH = 7;",
    tests: ["test/domain/password_policy_test.ts"],
  },

  // sign-in throttle
  {
    name: "sign-in: one failure more before the first wait",
    file: "src/console/sign_in_throttle.ts",
    from: "if (entry.count < rule.free) return 0;",
    to: "if (entry.count <= rule.free) return 0;",
    tests: [SIGN_IN],
  },
  {
    name: "sign-in: the wait does not double",
    file: "src/console/sign_in_throttle.ts",
    from: "this.#first * 2 ** (entry.count - rule.free)",
    to: "this.#first",
    tests: [SIGN_IN],
  },
  {
    name: "sign-in: an account's failures over all addresses not counted",
    file: "src/console/sign_in_throttle.ts",
    from: "if (!this.#known.has(pair)) {",
    to: "if (false) {",
    tests: [SIGN_IN],
  },

  // PostgreSQL
  {
    name: "postgres: an append at a stale expected version taken",
    file: "events/postgres/group_commit_sql.ts",
    from: '(typeof expected === "number" && current === expected);',
    to: '(typeof expected === "number");',
    tests: ["test/events/store_test.ts"],
  },
  {
    name: "postgres: no_stream taken for a stream that exists",
    file: "events/postgres/group_commit_sql.ts",
    from: '(expected === "no_stream" && current === null) ||',
    to: '(expected === "no_stream") ||',
    tests: ["test/events/store_test.ts"],
  },
  {
    name: "postgres: sergo_append takes a stale expected version",
    file: "events/postgres/group_commit_sql.ts",
    from: "OR (jsonb_typeof(expected) = 'number' AND current_version = (expected #>> '{}')::integer)) THEN",
    to: "OR (jsonb_typeof(expected) = 'number')) THEN",
    tests: ["test/events/store_test.ts"],
  },
  {
    name: "postgres: a replica's copy of the log taken though its last event has another hash",
    file: "events/postgres/local_copy.ts",
    from: "if (!head || Number(head.position) !== check.position || head.hash !== check.hash) {",
    to: "if (!head || Number(head.position) !== check.position) {",
    tests: ["test/events/postgres_start_test.ts"],
  },
  {
    name: "postgres: a replica's copy of the log longer than the database's taken",
    file: "events/postgres/local_copy.ts",
    from: "if (!head || Number(head.position) !== check.position || head.hash !== check.hash) {",
    to: "if (head && (Number(head.position) !== check.position || head.hash !== check.hash)) {",
    tests: ["test/events/postgres_start_test.ts"],
  },
  {
    name: "postgres: another version's function taken as this code's at start-up",
    file: "events/postgres/schema.ts",
    from: "bool_and(p.prosrc IS NOT NULL AND p.prosrc = f.body)",
    to: "bool_and(p.prosrc IS NOT NULL)",
    tests: ["test/events/postgres_start_test.ts"],
  },
  {
    name: "leases: a worker whose lease was taken over still records its result",
    file: "src/workers/_lease.ts",
    from: "if (taken) {",
    to: "if (false) {",
    tests: ["test/workers/leases_test.ts"],
  },
  {
    name: "leases: never renewed",
    file: "src/workers/_lease.ts",
    from: "lease.#timer = setInterval(() => lease.#renew(), Math.max(1000, Math.floor(leaseMs / 3)));",
    to: "lease.#timer = setInterval(() => lease.#renew(), leaseMs * 100);",
    tests: ["test/workers/leases_test.ts"],
  },
  {
    name: "rate limit: each replica counts a key's calls alone",
    file: "src/mcp/endpoint.ts",
    from: "const limiter: KeyRateLimit = deps.limiter ??",
    to: "const limiter: KeyRateLimit = undefined ??",
    tests: ["test/e2e/postgres_work_test.ts"],
  },
  {
    name: "postgres: a group commit writes an append whose key's rate bucket is empty",
    file: "events/postgres/group_commit_sql.ts",
    from: "      IF have < 1 THEN",
    to: "      IF false THEN",
    tests: ["test/events/postgres_takes_test.ts", "test/mcp/shared_rate_limit_test.ts"],
  },
  {
    name: "rate limit: a request that wrote no audit entry never takes its shared token",
    file: "src/mcp/endpoint.ts",
    from: "    if (state.token) {",
    to: "    if (false) {",
    tests: ["test/mcp/shared_rate_limit_test.ts"],
  },
  {
    name: "rate limit: the calls of a batch after its refused one still run and are audited",
    file: "src/mcp/server.ts",
    from: "if (state.refusedForSeconds) break;",
    to: "if (false) break;",
    tests: ["test/mcp/shared_rate_limit_test.ts"],
  },
  {
    name: "rate limit: a key known to be empty here never refills here",
    file: "src/mcp/shared_rate_limit.ts",
    from: "known.tokens + (Math.max(0, performance.now() - known.at) / 1000) * this.#perSecond,",
    to: "known.tokens,",
    tests: ["test/mcp/shared_rate_limit_test.ts"],
  },
  {
    name: "rate limit: a key known to be empty is asked of the database every time",
    file: "src/mcp/shared_rate_limit.ts",
    from: "    if (tokens >= 1) return null;",
    to: "    return null;",
    tests: ["test/mcp/shared_rate_limit_test.ts"],
  },
  {
    name: "mcp: a call whose audit entry could not be written answered 200",
    file: "src/mcp/endpoint.ts",
    from: "status: state.auditFailure === null ? 200 : 503,",
    to: "status: 200,",
    tests: ["test/e2e/postgres_outage_test.ts", "test/mcp/audit_settle_test.ts", "test/mcp/endpoint_test.ts"],
  },
  {
    name:
      "mcp: under 2026-07-28 a call whose audit entry could not be written answered as the SDK answered it",
    file: "src/mcp/endpoint.ts",
    from: "if (state.auditFailure === null) return response;",
    to: "return response;",
    tests: ["test/mcp/endpoint_test.ts"],
  },

  // search
  {
    name: "semantic search: the key's folders ignored",
    file: "projections/search_vectors.ts",
    from: "sql: `d.person_id = ? AND (d.folder_id IN (SELECT value FROM json_each(?))",
    to: "sql: `d.person_id = ? AND (d.folder_id IN (SELECT value FROM json_each(?)) OR 1",
    tests: [SEMANTIC],
  },
  {
    // (Over a key's own folders the person check is redundant: folder ids are one person's. Over all of a
    // person's folders it is the only check.)
    name: "semantic search: another person's documents searched",
    file: "projections/search_vectors.ts",
    from: '"d.person_id = ? AND (d.folder_id IS NOT NULL OR',
    to: '"(d.person_id = ? OR 1) AND (d.folder_id IS NOT NULL OR',
    tests: ["test/search/semantic_scope_test.ts"],
  },
  {
    name: "semantic search: the similarity floor ignored",
    file: "src/search/semantic.ts",
    from: "(near) => near.similarity >= fusion.minSimilarity",
    to: "() => true",
    tests: ["test/search/similarity_floor_test.ts"],
  },
  {
    name: "semantic search: SERGO_EMBEDDINGS_MIN_SIMILARITY not passed to search",
    file: "src/server/services.ts",
    from:
      "config.embeddings.minSimilarity === undefined ? {} : { minSimilarity: config.embeddings.minSimilarity },",
    to: "{},",
    tests: ["test/search/embeddings_settings_test.ts"],
  },

  // Standard
  {
    name: "standard: a garbage text layer kept",
    file: "src/processing/text_quality.ts",
    from: 'if (words >= GARBAGE_MIN_WORDS && share >= GARBAGE_WORD_SHARE) return "garbage";',
    to: "",
    tests: [TEXT_QUALITY],
  },
  {
    name: "standard: garbage only from 60% odd words",
    file: "src/processing/text_quality.ts",
    from: "export const GARBAGE_WORD_SHARE = 0.35;",
    to: "export const GARBAGE_WORD_SHARE = 0.6;",
    tests: [TEXT_QUALITY],
  },
  {
    name: "standard: a tiny text layer kept",
    file: "src/processing/text_quality.ts",
    from: "if (chars < TINY_TEXT_CHARS && ",
    to: "if (false && ",
    tests: [TEXT_QUALITY],
  },

  {
    name: "standard: 25 characters beside a picture still tiny",
    file: "src/processing/text_quality.ts",
    from: "if (chars < TINY_TEXT_CHARS && ",
    to: "if (chars <= TINY_TEXT_CHARS && ",
    tests: [TEXT_QUALITY],
  },
  {
    name: "standard: a picture of exactly 12% not counted as large",
    file: "src/processing/text_quality.ts",
    from: "layout.largestPicture >= 0.12",
    to: "layout.largestPicture > 0.12",
    tests: [TEXT_QUALITY],
  },

  // depth limits
  {
    name: "events: data of any depth recorded",
    file: "events/types.ts",
    from:
      "if (nestsDeeperThan(event.data, MAX_EVENT_DEPTH) || nestsDeeperThan(event.metadata, MAX_EVENT_DEPTH)) {",
    to: "if (false) {",
    tests: ["test/events/writer_limits_test.ts"],
  },
  {
    name: "mcp: messages of any depth parsed",
    file: "src/mcp/endpoint.ts",
    from: "if (nestsDeeperThan(body, MAX_MESSAGE_DEPTH)) {",
    to: "if (false) {",
    tests: [REQUEST_SHAPES, ARGUMENT_LIMITS],
  },
  {
    name: "mcp: arguments of any depth taken",
    file: "src/mcp/limits.ts",
    from: "if (nestsDeeperThan(args, MAX_ARGUMENTS_DEPTH)) {",
    to: "if (false) {",
    tests: [ARGUMENT_LIMITS],
  },
  {
    name: "http: a body longer than the limit read",
    file: "src/http/read_body.ts",
    from: "if (size + next.value.byteLength > (whole?.byteLength ?? limit)) return null;",
    to: "",
    tests: ["test/http/slow_body_test.ts", "test/http/mcp_auth_test.ts", "test/e2e/hostile_requests_test.ts"],
  },
  {
    name: "http: a trickling body waited for forever",
    file: "src/http/read_body.ts",
    from: 'if (next === "late") throw slowBody(timeoutMs, "arrive in full");',
    to: "",
    tests: ["test/http/slow_body_test.ts"],
  },
  // the audit trail: what leaves the install, what verify catches, what the view shows
  {
    name: "audit export: an agent key's hash exported",
    file: "src/audit/_record.ts",
    from: '  AgentKeyCreated: ["key_hash"],',
    to: "  AgentKeyCreated: [],",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit export: the password hash exported",
    file: "src/audit/_record.ts",
    from: '  PersonPasswordSet: ["password_hash"],',
    to: "  PersonPasswordSet: [],",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit export: a page's text exported beside its hash",
    file: "src/audit/_record.ts",
    from: "text_sha256: sha256Hex(body),",
    to: "text_sha256: sha256Hex(body), text: body,",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit export: a record before a redacted one left without a proof",
    file: "src/audit/export.ts",
    from: "next.position === record.position + 1 && next.redacted === undefined;",
    to: "next.position === record.position + 1;",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit export: another person's entries included",
    file: "projections/audit_view.ts",
    from: 'const parts = ["person_id = ?"];',
    to: 'const parts = ["(person_id = ? OR 1)"];',
    tests: [AUDIT_EXPORT, AUDIT_CLI, AUDIT_VIEW],
  },
  {
    name: "audit verify: a record's content not compared with its hash",
    file: "src/audit/verify.ts",
    from: "if (hash !== r.hash) return fail(",
    to: "if (false) return fail(",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit verify: the link chain not checked",
    file: "src/audit/verify.ts",
    from: "if (computeLink() !== link) {",
    to: "if (false) {",
    tests: [AUDIT_EXPORT, AUDIT_CLI],
  },
  {
    name: "audit verify: record numbers not checked",
    file: "src/audit/verify.ts",
    from: "if (r.seq !== k) {",
    to: "if (false) {",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit verify: the record count not compared with the manifest",
    file: "src/audit/verify.ts",
    from: "if (count !== manifest.count) {",
    to: "if (false) {",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit verify: the manifest's signature not checked",
    file: "src/audit/verify.ts",
    from: "if (!verifySignature(publicKey, signedBytes(manifest), manifest.signature!.value)) {",
    to: "if (false) {",
    tests: [AUDIT_EXPORT],
  },
  {
    name: "audit view: the end user of a call not recorded",
    file: "projections/audit_view.ts",
    from: "entry.end_user ?? event.metadata.end_user ?? null,",
    to: "null,",
    tests: [AUDIT_VIEW],
  },
  {
    name: "audit view: a renamed key not found by its new name",
    file: "projections/_audit_describe.ts",
    from: "          rememberKeyName(db, row.person_id, d.name, d.key_id);",
    to: "",
    tests: [AUDIT_EXPORT, AUDIT_VIEW],
  },
  {
    name: "audit view: the roll's old value not named",
    file: "projections/_audit_describe.ts",
    from: "old_masked_key: oldMasked,",
    to: "old_masked_key: null,",
    tests: [AUDIT_VIEW],
  },
  {
    name: "audit view: a time range's end left out",
    file: "projections/audit_view.ts",
    from: 'parts.push("time_utc <= ?");',
    to: 'parts.push("time_utc < ?");',
    tests: [AUDIT_EXPORT, AUDIT_VIEW],
  },
  // caps, sizes and whose things a person can reach
  {
    name: "keys: a 101st agent key taken",
    file: "src/domain/keys_decide.ts",
    from: "if (state.agentKeys >= MAX_AGENT_KEYS) {",
    to: "if (state.agentKeys > MAX_AGENT_KEYS) {",
    tests: [KEY_LIMITS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "keys: a 21st personal key taken",
    file: "src/domain/keys_decide.ts",
    from: "if (state.personalKeys >= MAX_PERSONAL_KEYS) {",
    to: "if (state.personalKeys > MAX_PERSONAL_KEYS) {",
    tests: [KEY_LIMITS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "keys: another person's folder given to a key",
    file: "src/domain/keys_decide.ts",
    from: "if (!folder || folder.person_id !== personId) {",
    to: "if (!folder) {",
    tests: [KEYS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "keys: another person's document given to a key",
    file: "src/domain/keys_decide.ts",
    from: 'if (!doc || doc.person_id !== personId) throw new DomainError("invalid",',
    to: 'if (!doc) throw new DomainError("invalid",',
    tests: [KEYS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "keys: 1,001 folders given to a key",
    file: "src/domain/keys_decide.ts",
    from: "if (folders.length > 1000 || documents.length > 1000) {",
    to: "if (folders.length > 1001 || documents.length > 1000) {",
    tests: [KEY_LIMITS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "keys: another person's key found by its id",
    file: "src/domain/keys_decide.ts",
    from: "if (!key || key.person_id !== personId) {",
    to: "if (!key) {",
    tests: [API, KEYS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "folders: another person's folder found by its id",
    file: "src/domain/folders_decide.ts",
    from: "if (!folder || folder.person_id !== personId) {",
    to: "if (!folder) {",
    tests: [API, FOLDERS, "test/domain/folders_decide_test.ts"],
  },
  {
    name: "documents: another person's document found by its id",
    file: "src/domain/documents_decide.ts",
    from: "if (!doc || doc.person_id !== personId) {",
    to: "if (!doc) {",
    tests: [API, "test/domain/documents_decide_test.ts"],
  },
  {
    name: "api: an agent key taken for the REST API",
    file: "src/auth/api_auth.ts",
    from: 'if (credential.kind === "agent") {',
    to: "if (false) {",
    tests: [API],
  },
  {
    name: "api: JSON bodies over 1,000,000 bytes read",
    file: "src/api/mod.ts",
    from: "const MAX_JSON_BODY = 1_000_000;",
    to: "const MAX_JSON_BODY = 1_000_000_000;",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "uploads: 101 files in one upload taken",
    file: "src/api/uploads.ts",
    from: "export const MAX_FILES_PER_UPLOAD = 100;",
    to: "export const MAX_FILES_PER_UPLOAD = 101;",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "passwords: 1,025 characters taken",
    file: "src/domain/password_policy.ts",
    from: "if (length > MAX_PASSWORD_LENGTH) return",
    to: "if (length > MAX_PASSWORD_LENGTH + 1) return",
    tests: [PASSWORDS],
  },
  {
    name: "people: names up to 201 characters",
    file: "src/domain/rules.ts",
    from: "if (trimmed.length > MAX_PERSON_NAME) {",
    to: "if (trimmed.length > MAX_PERSON_NAME + 1) {",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "uploads: file names up to 256 characters",
    file: "src/domain/rules.ts",
    from: "if (base.length > MAX_FILE_NAME) {",
    to: "if (base.length > MAX_FILE_NAME + 1) {",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "mcp: 21 arguments taken",
    file: "src/mcp/limits.ts",
    from: "if (names.length > MAX_ARGUMENTS) {",
    to: "if (names.length > MAX_ARGUMENTS + 1) {",
    tests: [ARGUMENT_LIMITS],
  },
  {
    name: "mcp: a query of 4,001 characters taken",
    file: "src/mcp/limits.ts",
    from: 'return name === "query" ? MAX_QUERY_CHARS : MAX_STRING_CHARS;',
    to: 'return name === "query" ? MAX_QUERY_CHARS + 1 : MAX_STRING_CHARS;',
    tests: [ARGUMENT_LIMITS],
  },
  {
    name: "mcp: 51 folder names taken",
    file: "src/mcp/limits.ts",
    from: "if (value.length > MAX_FOLDERS) {",
    to: "if (value.length > MAX_FOLDERS + 1) {",
    tests: [ARGUMENT_LIMITS],
  },
  {
    name: "mcp: a folder name of 201 characters taken",
    file: "src/mcp/limits.ts",
    from: 'const long = value.find((item) => typeof item === "string" && item.length > MAX_STRING_CHARS);',
    to: 'const long = value.find((item) => typeof item === "string" && item.length > MAX_STRING_CHARS + 1);',
    tests: [ARGUMENT_LIMITS],
  },
  {
    name: "mcp: a failed call's audited error text not capped",
    file: "src/mcp/tool_call.ts",
    from: "return { ...details, error: text.slice(0, MAX_AUDITED_ERROR) };",
    to: "return { ...details, error: text };",
    tests: ["test/mcp/audit_error_test.ts"],
  },
  {
    name: "processing: a zip entry expanding more than 200 times read",
    file: "src/processing/_zip.ts",
    from: "if (file.originalSize > 1_000_000 && file.originalSize > file.size * MAX_ZIP_RATIO) {",
    to: "if (false) {",
    tests: [GUARDS, "test/processing/hostile_test.ts"],
  },
  {
    name: "processing: a zip entry over 200 MB read",
    file: "src/processing/_zip.ts",
    from: "if (file.originalSize > MAX_ZIP_ENTRY_BYTES) {",
    to: "if (file.originalSize > MAX_ZIP_ENTRY_BYTES * 10) {",
    tests: [GUARDS, "test/processing/hostile_test.ts"],
  },
  {
    name: "processing: zips expanding past 500 MB in all read",
    file: "src/processing/_zip.ts",
    from: "if (total > MAX_ZIP_TOTAL_BYTES) {",
    to: "if (total > MAX_ZIP_TOTAL_BYTES + 1) {",
    tests: [GUARDS, "test/processing/hostile_test.ts"],
  },
  {
    name: "personal keys: a deleted one keeps working",
    file: "projections/key_scopes.ts",
    from:
      'DELETE FROM key_personal WHERE key_id = ?").run(event.data.key_id);\n        statement(db, "DELETE FROM key_values WHERE id = ?").run(event.data.key_id);',
    to: 'DELETE FROM key_personal WHERE key_id = ?").run(event.data.key_id);',
    tests: [API],
  },
  {
    name: "login tokens: a revoked one keeps working",
    file: "projections/key_scopes.ts",
    from: 'statement(db, "DELETE FROM key_values WHERE id = ?").run(event.data.token_id);',
    to: "",
    tests: [API],
  },
  {
    name: "keys: a key that reads nothing made from the console",
    file: "src/domain/keys_decide.ts",
    from: "\n  if (command.requireScope) refuseEmptyScope(command.canRead);",
    to: "\n",
    tests: [API, KEYS, "test/domain/keys_decide_test.ts"],
  },
  {
    name: "console: forms over 16 KB read",
    file: "src/console/console.ts",
    from: "if (size > MAX_FORM_BYTES) {",
    to: "if (size > MAX_FORM_BYTES * 100) {",
    tests: [PASSWORD_LINKS],
  },
  {
    name: "oauth: token requests over 16 KB read",
    file: "src/auth/oauth/token.ts",
    from: "const text = await readSmallBody(request, MAX_BODY_BYTES);",
    to: "const text = await readSmallBody(request, MAX_BODY_BYTES * 100);",
    tests: [OAUTH_LIMITS],
  },
  {
    name: "oauth: registrations over 16 KB read",
    file: "src/auth/oauth/registration.ts",
    from: "const text = await readSmallBody(request, MAX_BODY_BYTES);",
    to: "const text = await readSmallBody(request, MAX_BODY_BYTES * 100);",
    tests: [OAUTH_LIMITS],
  },
  {
    name: "oauth: 21 registrations an hour from one address",
    file: "src/auth/oauth/_shared.ts",
    from: "if (times.length >= this.#limit) {",
    to: "if (times.length > this.#limit) {",
    tests: [OAUTH_LIMITS],
  },
  {
    name: "password links: a reset link works for 48 hours",
    file: "src/domain/people_decide.ts",
    from: "export const RESET_LIFETIME_MS = 24 * 3600_000;",
    to: "export const RESET_LIFETIME_MS = 48 * 3600_000;",
    tests: [PASSWORD_LINKS, "test/domain/people_decide_test.ts"],
  },
  {
    name: "people: email addresses of 321 characters taken",
    file: "src/domain/rules.ts",
    from: "trimmed.length > 320",
    to: "trimmed.length > 321",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "drawing: a PDF declaring an image past 64 million pixels drawn",
    file: "src/render/render_png.ts",
    from: "if (image && image.width * image.height > MAX_DECLARED_IMAGE_PIXELS) {",
    to: "if (false) {",
    tests: [RENDER_PNG],
  },
  {
    name: "api: searches of 501 characters taken",
    file: "src/api/search.ts",
    from: "q: z.string().trim().min(1).max(500).describe(",
    to: "q: z.string().trim().min(1).max(501).describe(",
    tests: [REQUEST_LIMITS],
  },
  {
    name: "console: a search query past 500 characters searched whole",
    file: "src/console/search.ts",
    from: "const query = input.query.slice(0, MAX_QUERY);",
    to: "const query = input.query;",
    tests: [REQUEST_LIMITS],
  },
];
