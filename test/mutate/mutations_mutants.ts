/**
 * The planted bugs of issue 31 (a mutation pass whose survivors no test
 * caught), and the guards of the OAuth server, the SSE transport, the
 * Standard preset's limits, the console's CSRF, the PostgreSQL store's
 * catch-up and leases, the export's left-out fields and the PDF copy
 * worker's retries: each a small change of one line and the test files that
 * must fail with it. Run them with `deno task mutate --file mutations_mutants`.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const OAUTH_GUARDS = "test/auth/oauth_guards_test.ts";
const OAUTH_LIMITS = "test/auth/oauth_limits_test.ts";
const OAUTH_FLOW = "test/auth/oauth_flow_test.ts";
const SSE_GUARDS = "test/mcp/sse_guards_test.ts";
const TESSERACT_LIMITS = "test/processing/tesseract_limits_test.ts";
const TEXT_QUALITY = "test/processing/text_quality_test.ts";
const ANALYSIS = "test/analysis/analysis_test.ts";
const CSRF_FORMS = "test/console/csrf_forms_test.ts";
const PG_CATCH_UP = "test/events/postgres_catch_up_test.ts";
const LEASE_SYNC = "test/workers/lease_sync_test.ts";
const AUDIT_EXPORT = "test/audit/export_verify_test.ts";
const AUDIT_SECRETS = "test/audit/export_secrets_test.ts";
const COPY_RETRY = "test/workers/pdf_copy_retry_test.ts";
const WORD_COPY = "test/workers/word_copy_pages_test.ts";

/** Issue 31's planted bugs, then the guards around them. */
export const MUTATIONS_MUTANTS: Mutation[] = [
  // The ten bugs of issue 31 that the whole suite let through.
  {
    name: "oauth: a redirect URI accepted when it merely starts with a registered one",
    file: "src/auth/oauth/clients.ts",
    from: "if (client.redirect_uris.includes(redirectUri)) return true;",
    to: "if (client.redirect_uris.some((uri) => redirectUri.startsWith(uri))) return true;",
    tests: [OAUTH_GUARDS],
  },
  {
    name: "oauth: an authorization code exchanged by another app's client_id",
    file: "src/domain/grants.ts",
    from: "if (!grant || grant.client_id !== clientId) {",
    to: "if (!grant) {",
    tests: [OAUTH_GUARDS],
  },
  {
    name: "sse: GET /sse no longer checks Origin",
    file: "src/mcp/transports/sse.ts",
    from: "if (!originAllowed(request, deps.allowedOrigins)) {",
    to: "if (false) {",
    tests: [SSE_GUARDS],
  },
  {
    name: "standard: Tesseract run without prlimit (no memory, CPU or file-size limit)",
    file: "src/processing/transcribers/tesseract.ts",
    from: 'const argv = [...limits, "tesseract", ...args];',
    to: 'const argv = ["tesseract", ...args];',
    tests: [TESSERACT_LIMITS],
  },
  {
    name: "standard: a text layer judged garbage only from 31 words",
    file: "src/processing/text_quality.ts",
    from: "if (words >= GARBAGE_MIN_WORDS && share >= GARBAGE_WORD_SHARE)",
    to: "if (words > GARBAGE_MIN_WORDS && share >= GARBAGE_WORD_SHARE)",
    tests: [TEXT_QUALITY],
  },
  {
    name: "search: German text stemmed with the English stemmer",
    file: "src/analysis/analysis.ts",
    from: "  de: german,",
    to: "  de: english,",
    tests: [ANALYSIS],
  },
  {
    name: "console: the People page's posts (add person, reset link) taken without the CSRF token",
    file: "src/console/console.ts",
    from: "if (!checkOrigin(services, request) || !tokenOk || form.tooLarge) {",
    to: "if (!checkOrigin(services, request) || form.tooLarge) {",
    tests: [CSRF_FORMS],
  },
  {
    name: "postgres: a replica pulls only its first pulls of missing events and says it started while behind",
    file: "events/postgres/local_copy.ts",
    from: "if (rows.length < 2000) return;",
    to: "return;",
    tests: [PG_CATCH_UP],
  },
  {
    name: "leases: no log sync before the takeover check",
    file: "src/workers/_lease.ts",
    from: "await catchUp(this.#app);",
    to: "this.#app.catchUp();",
    // Since a refused group commit brings the copy up to date itself (events/postgres/local_copy.ts), the
    // lease's own sync is a second guard: the bug is both gone.
    also: [{
      file: "events/postgres/local_copy.ts",
      from: "      if (local.position < before.position) {",
      to: "      if (own.length > 0 && local.position < before.position) {",
    }, {
      file: "events/postgres/local_copy.ts",
      from: "        reached.position === before.position && reached.hash === before.hash &&",
      to: "        (!first || (reached.position === before.position && reached.hash === before.hash)) &&",
    }],
    tests: [LEASE_SYNC],
  },
  {
    name: "PostgreSQL store: a refused append leaves the copy behind the write that refused it",
    file: "events/postgres/local_copy.ts",
    from: "      if (local.position < before.position) {",
    to: "      if (own.length > 0 && local.position < before.position) {",
    // Also taken as done when nothing was written (the copy's own check would pull it up otherwise).
    also: [{
      file: "events/postgres/local_copy.ts",
      from: "        reached.position === before.position && reached.hash === before.hash &&",
      to: "        (!first || (reached.position === before.position && reached.hash === before.hash)) &&",
    }],
    tests: ["test/events/postgres/conflict_copy_test.ts"],
  },
  {
    name: "audit export: a deck's speaker notes exported",
    file: "src/audit/_record.ts",
    from: "const { text, chunks: _chunks, notes, ...rest } = page;",
    to: "const { text, chunks: _chunks, ...rest } = page;\n          const notes = undefined;",
    tests: [AUDIT_EXPORT],
  },

  // OAuth server
  {
    name: "oauth: a loopback redirect URI's port change taken for any path",
    file: "src/auth/oauth/clients.ts",
    from: "url.port = asked.port;",
    to: "url.port = asked.port;\n      url.pathname = asked.pathname;",
    tests: [OAUTH_LIMITS],
  },
  {
    name: "oauth: a code exchanged without any client_id",
    file: "src/auth/oauth/token.ts",
    from: 'const clientId = params.get("client_id") ?? "";',
    to:
      'const clientId = params.get("client_id") ?? grantByCode(app.db, hashSecret(params.get("code") ?? ""))?.client_id ?? "";',
    tests: [OAUTH_GUARDS],
  },
  {
    name: "oauth: a spent refresh token used again does not end the app's access",
    file: "src/domain/grants.ts",
    from: "if (grant && grant.client_id === clientId) {",
    to: "if (false) {",
    tests: [OAUTH_FLOW],
  },
  {
    name: "oauth: the consent form taken from another site's page",
    file: "src/auth/oauth/authorize.ts",
    from: "(origin !== null && !ownOrigins.includes(origin)) || csrf.fresh ||",
    to: "csrf.fresh ||",
    tests: [OAUTH_GUARDS],
  },
  {
    name: "oauth: the consent form taken without its CSRF token",
    file: "src/auth/oauth/authorize.ts",
    from: 'params.get("csrf") !== readCookie(request, CSRF_COOKIE)',
    to: "false",
    tests: [OAUTH_LIMITS],
  },
  {
    name: "oauth: an app revoked from the key's page without the page's CSRF token",
    file: "src/auth/oauth/mod.ts",
    from: 'cookie === null || form.get("csrf") !== cookie ||',
    to: "cookie === null ||",
    tests: [OAUTH_GUARDS],
  },
  {
    name: "oauth: an app revoked from another site's page",
    file: "src/auth/oauth/mod.ts",
    from: "(origin !== null && origin !== new URL(request.url).origin)",
    to: "false",
    tests: [OAUTH_GUARDS],
  },

  // SSE transport
  {
    name: "sse: a stream opened for a client that accepts no event stream",
    file: "src/mcp/transports/sse.ts",
    from: 'if (!acceptsEventStream(request.headers.get("accept"))) {',
    to: "if (false) {",
    tests: [SSE_GUARDS],
  },
  {
    name: "sse: streams opened while the server stops",
    file: "src/mcp/transports/sse.ts",
    from: 'if (closed) return rpcError(503, "The server is stopping: connect again in a moment.");',
    to: "",
    tests: [SSE_GUARDS],
  },

  // Standard preset: the limits Tesseract runs in, and the text-layer rules on both sides
  {
    name: "standard: Tesseract's memory limit twice the setting",
    file: "src/processing/transcribers/tesseract.ts",
    from: "`--as=${memoryMb * 1024 * 1024}`,",
    to: "`--as=${memoryMb * 2048 * 1024}`,",
    tests: [TESSERACT_LIMITS],
  },
  {
    name: "standard: Tesseract's CPU limit a second past the timeout's",
    file: "src/processing/transcribers/tesseract.ts",
    from: "`--cpu=${Math.ceil(timeoutMs / 1000) + 1}`,",
    to: "`--cpu=${Math.ceil(timeoutMs / 1000) + 2}`,",
    tests: [TESSERACT_LIMITS],
  },
  {
    name: "standard: Tesseract without a file-size limit",
    file: "src/processing/transcribers/tesseract.ts",
    from: "`--fsize=${256 * 1024 * 1024}`,",
    to: "",
    tests: [TESSERACT_LIMITS],
  },
  {
    name: "standard: Tesseract with 640 open files",
    file: "src/processing/transcribers/tesseract.ts",
    from: '"--nofile=64",',
    to: '"--nofile=640",',
    tests: [TESSERACT_LIMITS],
  },
  {
    name: "standard: a text layer judged garbage from 29 words",
    file: "src/processing/text_quality.ts",
    from: "export const GARBAGE_MIN_WORDS = 30;",
    to: "export const GARBAGE_MIN_WORDS = 29;",
    tests: [TEXT_QUALITY],
  },
  {
    name: "standard: a text layer of exactly 35% odd words kept",
    file: "src/processing/text_quality.ts",
    from: "share >= GARBAGE_WORD_SHARE) return",
    to: "share > GARBAGE_WORD_SHARE) return",
    tests: [TEXT_QUALITY],
  },

  // Console: the CSRF token and the origin on every form
  {
    name: "console: the People page's posts taken from another site's page",
    file: "src/console/console.ts",
    from: "if (!checkOrigin(services, request) || !tokenOk || form.tooLarge) {",
    to: "if (!tokenOk || form.tooLarge) {",
    tests: [CSRF_FORMS],
  },
  {
    name: "console: sign-in and sign-out taken without the CSRF token",
    file: "src/console/console.ts",
    from: "if (!sameOrigin || !tokenOk || form.tooLarge) {",
    to: "if (!sameOrigin || form.tooLarge) {",
    tests: [CSRF_FORMS],
  },
  {
    name: "console: sign-in and sign-out taken from another site's page",
    file: "src/console/console.ts",
    from: "if (!sameOrigin || !tokenOk || form.tooLarge) {",
    to: "if (!tokenOk || form.tooLarge) {",
    tests: [CSRF_FORMS],
  },
  {
    name: "console: the password and setup pages taken without the CSRF token",
    file: "src/console/console.ts",
    from: "const expired = !checkOrigin(services, request) || !tokenOk || form.tooLarge",
    to: "const expired = !checkOrigin(services, request) || form.tooLarge",
    tests: [CSRF_FORMS],
  },
  {
    name: "console: the password and setup pages taken from another site's page",
    file: "src/console/console.ts",
    from: "const expired = !checkOrigin(services, request) || !tokenOk || form.tooLarge",
    to: "const expired = !tokenOk || form.tooLarge",
    tests: [CSRF_FORMS],
  },
  {
    name: "api: a change made with the session cookie and no CSRF header",
    file: "src/api/mod.ts",
    from: 'if (auth.viaCookie && request.method !== "GET" && !services.checkCsrf(request)) {',
    to: "if (false) {",
    tests: [CSRF_FORMS],
  },
  {
    name: "api: any CSRF header taken beside a session cookie",
    file: "src/auth/csrf.ts",
    from: "return cookie !== null && cookie.length >= 16 && header === cookie;",
    to: "return cookie !== null && header !== null;",
    tests: [CSRF_FORMS],
  },

  // PostgreSQL: a replica's catch-up, and leases
  {
    name: "postgres: a replica's pulls of 1,000 events taken for the last one",
    file: "events/postgres/local_copy.ts",
    from: "ORDER BY position LIMIT ${check ? 2001 : 2000}) e ON true",
    to: "ORDER BY position LIMIT ${check ? 2001 : 1000}) e ON true",
    tests: [PG_CATCH_UP],
  },

  {
    name:
      "leases: events that leave a lease alone not counted, so a moved document's result is never recorded",
    file: "src/workers/_lease.ts",
    from: "this.#version += between.length;",
    to: "",
    tests: [LEASE_SYNC],
  },

  // Audit export: the fields that never leave the install
  {
    name: "audit export: invitation and reset links' token hashes exported",
    file: "src/audit/_record.ts",
    from: '  PasswordLinkIssued: ["token_hash"],',
    to: "",
    tests: [AUDIT_SECRETS],
  },
  {
    name: "audit export: console sign-ins' token hashes exported",
    file: "src/audit/_record.ts",
    from: '  LoginTokenIssued: ["token_hash"],',
    to: "",
    tests: [AUDIT_SECRETS],
  },
  {
    name: "audit export: personal keys' hashes exported",
    file: "src/audit/_record.ts",
    from: '  PersonalKeyCreated: ["key_hash"],',
    to: "",
    tests: [AUDIT_SECRETS],
  },
  {
    name: "audit export: a rolled key's new hash exported",
    file: "src/audit/_record.ts",
    from: '  AgentKeyRolled: ["key_hash"],',
    to: "",
    tests: [AUDIT_SECRETS],
  },
  {
    name: "audit export: OAuth codes' hashes and challenges exported",
    file: "src/audit/_record.ts",
    from: '  OAuthGranted: ["code_hash", "code_challenge"],',
    to: "",
    tests: [OAUTH_FLOW],
  },
  {
    name: "audit export: OAuth tokens' hashes exported",
    file: "src/audit/_record.ts",
    from: '  OAuthTokensIssued: ["access_hash", "refresh_hash"],',
    to: "",
    tests: [OAUTH_FLOW],
  },
  {
    name: "audit export: a Word file's chunks exported beside its pages' hashes",
    file: "src/audit/_record.ts",
    from: "const { text, chunks: _chunks, notes, ...rest } = page;",
    to: "const { text, notes, ...rest } = page;",
    tests: [AUDIT_SECRETS],
  },

  // PDF copies: a copy that fails the same way every time is not made again and again
  {
    name: "PDF copies: a copy whose text cannot be placed retried at every kick",
    file: "src/workers/pdf_copy_worker.ts",
    from: "        return this.#copyEvents(current, made);\n      } catch (error) {",
    to:
      "        return this.#copyEvents(current, made);\n      } catch (error) {\n        if (error) throw error;",
    tests: [COPY_RETRY],
  },
  {
    name: "PDF copies: a copy whose outcome cannot be recorded tried without a cap",
    file: "src/workers/pdf_copy_worker.ts",
    from: "export const COPY_TRIES = 3;",
    to: "export const COPY_TRIES = 1_000;",
    tests: [COPY_RETRY],
  },
  {
    name: "PDF copies: the next try of a copy whose outcome could not be recorded does not wait",
    file: "src/workers/pdf_copy_worker.ts",
    from: "if (tries.tries < COPY_TRIES) return Date.now() < tries.notBefore;",
    to: "if (tries.tries < COPY_TRIES) return false;",
    tests: [COPY_RETRY],
  },
  {
    name:
      "PDF copies: a TypeError in page placing (the issue's hang) fails the Word copy test instead of hanging",
    file: "src/pdf_copy/page_placing.ts",
    from: "      marked: page.marked,",
    to: "      marked: (page as unknown as { x: { y: boolean } }).x.y,",
    tests: [WORD_COPY],
  },
];
