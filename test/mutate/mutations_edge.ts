/**
 * The planted bugs for the guards of the edge hardening (issue 26, items 3 and
 * 5–9): the SSE unread bound, the authorization endpoint's pages instead of
 * redirects, client metadata documents (redirect URIs, private addresses, the
 * pinned connection, the whole-answer deadline, caching and limits), and the
 * sessions a new password ends. Same shape and rules as `mutations.ts`.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const SSE_UNREAD = "test/e2e/sse_unread_test.ts";
const OPEN_REDIRECT = "test/auth/oauth_open_redirect_test.ts";
const DOCUMENTS = "test/auth/oauth_client_documents_test.ts";
const OAUTH_LIMITS = "test/auth/oauth_limits_test.ts";
const SESSIONS = "test/console/password_ends_sessions_test.ts";

/** The edge hardening's planted bugs. */
export const MUTATIONS_EDGE: Mutation[] = [
  {
    name: "SSE: answers wait unread on a stream without bound",
    file: "src/mcp/transports/sse.ts",
    from: "if (waitingBytes > 0 && waitingBytes + bytes.byteLength > maxUnread) {",
    to: "if (false) {",
    tests: [SSE_UNREAD],
  },
  {
    name: "SSE: the answer that did not fit is reported accepted",
    file: "src/mcp/transports/sse.ts",
    from: "if (!session.send(text)) {",
    to: "if (!session.send(text) && false) {",
    tests: [SSE_UNREAD],
  },
  {
    name: "OAuth authorize: response_type other than code goes on",
    file: "src/auth/oauth/authorize.ts",
    from: 'if (params.get("response_type") !== "code") {',
    to: "if (false) {",
    tests: [OPEN_REDIRECT, OAUTH_LIMITS],
  },
  {
    name: "OAuth authorize: an error page offers no link back to the app",
    file: "src/auth/oauth/authorize.ts",
    from: "return await refuse(checked.message, 400, checked.back);",
    to: "return await refuse(checked.message, 400);",
    tests: [OPEN_REDIRECT, OAUTH_LIMITS],
  },
  {
    name: "OAuth authorize: no limit of requests per address",
    file: "src/auth/oauth/authorize.ts",
    from: "if (!perAddress.take(address, Date.now())) {",
    to: "if (false) {",
    tests: [DOCUMENTS],
  },
  {
    name: "OAuth client documents: redirect URIs not checked",
    file: "src/auth/oauth/clients.ts",
    from: "for (const uri of redirects) {",
    to: "for (const uri of [] as string[]) {",
    tests: [OPEN_REDIRECT],
  },
  {
    name: "SSRF: IPv6 outside global unicast (mapped, compatible, NAT64) passes",
    file: "src/auth/oauth/clients.ts",
    from: "if ((g0 & 0xe000) !== 0x2000) return true;",
    to: "",
    tests: [DOCUMENTS],
  },
  {
    name: "SSRF: 6to4 passes",
    file: "src/auth/oauth/clients.ts",
    from: "g0 === 0x2002; // 6to4",
    to: "false; // 6to4",
    tests: [DOCUMENTS],
  },
  {
    name: "SSRF: the fetch resolves the name again instead of using the checked address",
    file: "src/auth/oauth/_pinned_fetch.ts",
    from: "      lookup,\n",
    to: "",
    tests: [DOCUMENTS],
  },
  {
    name: "client documents: the deadline stops at the headers, a trickling body is waited for",
    file: "src/auth/oauth/_pinned_fetch.ts",
    from: 'const timer = setTimeout(() => fail("timeout"), options.timeoutMs);',
    to: "const timer = setTimeout(() => {}, options.timeoutMs);",
    tests: [DOCUMENTS],
  },
  {
    name: "client documents: failures are not kept",
    file: "src/auth/oauth/clients.ts",
    from: "() => entry.until = this.#now() + FAILURE_CACHE_MS,",
    to: "() => entry.until = 0,",
    tests: [DOCUMENTS],
  },
  {
    name: "client documents: requests at the same moment each fetch",
    file: "src/auth/oauth/clients.ts",
    from: "until: Infinity }; // until it settles",
    to: "until: 0 }; // until it settles",
    tests: [DOCUMENTS],
  },
  {
    name: "client documents: no limit of fetches per host",
    file: "src/auth/oauth/clients.ts",
    from: "if (times.length >= HOST_FETCHES_PER_MINUTE) return false;",
    to: "",
    tests: [DOCUMENTS],
  },
  {
    name: "client documents: max-age ignored",
    file: "src/auth/oauth/clients.ts",
    from: "return Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, seconds * 1000));",
    to: "return DEFAULT_CACHE_MS;",
    tests: [DOCUMENTS],
  },
  {
    name: "sessions: a new password leaves the sessions signed in before it",
    file: "projections/key_scopes.ts",
    from: "DELETE FROM key_values WHERE kind = 'login' AND person_id = ?",
    to: "DELETE FROM key_values WHERE kind = 'none' AND person_id = ?",
    tests: [SESSIONS],
  },
  {
    name: "sessions: removed administrator rights leave the sessions signed in before",
    file: "projections/key_scopes.ts",
    from: '      case "PersonAdministratorRemoved":\n        // A new password, or rights taken away',
    to: "        // A new password, or rights taken away",
    tests: [SESSIONS],
  },
  {
    name: "administrators: removed rights kept",
    file: "projections/catalogue.ts",
    from: 'statement(db, "DELETE FROM cat_admins WHERE person_id = ?").run(event.data.person_id);',
    to: "",
    tests: [SESSIONS],
  },
  {
    name: "administrators: the last one's rights may be removed",
    file: "src/domain/people_decide.ts",
    from: "if (state.administrators <= 1) {",
    to: "if (false) {",
    tests: [SESSIONS, "test/domain/people_decide_test.ts"],
  },
];
