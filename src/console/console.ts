/**
 * The console: the web pages where people manage their documents, keys and
 * the audit. Pages are rendered on the server from the projections; small
 * client scripts call the REST API for changes.
 *
 * Its routes are a table (`ROUTES`: path pattern, methods, who may open it →
 * handler), like the REST API's; each handler is a function of its own.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import {
  anyPerson,
  type DocumentRow,
  getPages,
  getPerson,
  getProgress,
  isAdministrator,
  listDocuments,
  listFolders,
  listPeople,
  passwordLinksOf,
  type Person,
  rootLabel,
} from "../../projections/catalogue.ts";
import { listAgentKeys, personalKeys } from "../../projections/key_scopes.ts";
import { activeGrantsOfKey } from "../../projections/oauth_grants.ts";
import { readCookie } from "../auth/api_auth.ts";
import { hashSecret } from "../domain/key_format.ts";
import { passwordProblem } from "../domain/password_policy.ts";
import { hashPassword } from "../auth/passwords.ts";
import { issueLoginToken, LOGIN_TOKEN_LIFETIME_MS } from "../domain/keys.ts";
import {
  addFirstAdministrator,
  addPerson,
  findPasswordLink,
  issuePasswordLink,
  usePasswordLink,
} from "../domain/people.ts";
import { PasswordPage, PeoplePage, SetupPage } from "./pages/people_page.tsx";
import { SearchPage } from "./pages/search_page.tsx";
import {
  installedDictionaries,
  installedDictionariesProblem,
  installedDictionariesReading,
} from "../search/installed_dictionaries.ts";
import { ApiDocsPage } from "./pages/api_docs_page.tsx";
import { vendorFiles } from "./vendor.ts";
import { consoleSearch } from "./search.ts";
import { maskKey } from "../domain/key_format.ts";
import { DomainError } from "../domain/errors.ts";
import { requireDocument } from "../domain/documents.ts";
import { requireFolder } from "../domain/folders.ts";
import { requireAgentKey } from "../domain/keys.ts";
import type { ConsoleDeps } from "./deps.ts";
import { CSRF_COOKIE, csrfCookie, csrfToken } from "../auth/csrf.ts";
import { type Assets, loadAssets } from "./assets.ts";
import { auditPageData } from "./audit_data.ts";
import { documentFolders, keyView, pickableDocuments, stdioPaths } from "./page_data.ts";
import { AuditPage } from "./pages/audit_page.tsx";
import { DocumentPage } from "./pages/document_page.tsx";
import { DocumentsPage } from "./pages/documents_page.tsx";
import { KeyPage, KeysPage } from "./pages/keys_page.tsx";
import type { PageContext } from "./pages/layout.tsx";
import { NotFoundPage } from "./pages/not_found_page.tsx";
import { PersonalKeysPage } from "./pages/personal_keys_page.tsx";
import { SignInPage } from "./pages/sign_in_page.tsx";
import { currentSession, isSecure, pageHeaders, publicUrl, sessionCookie } from "./session.ts";
import { safeNext, signIn, signOut } from "./sign_in.ts";
import type { SignInCounter } from "./sign_in_throttle.ts";
import { clientAddress } from "../http/client_address.ts";
import { DATABASE_UNREACHABLE, databaseUnreachable } from "../http/unavailable.ts";

/** The console's request handler. */
export type ConsoleHandler = (request: Request, info?: Deno.ServeHandlerInfo) => Promise<Response>;

/** Options of {@linkcode createConsole}. */
export interface ConsoleOptions {
  /** The sign-in throttle; tests pass one with short waits. */
  throttle?: SignInCounter;
  /** The first-run setup token `serve` printed (while nobody exists); `/setup` takes only it, once. */
  setupToken?: string | null;
}

const DOCUMENTS_PER_PAGE = 100;
const PAGES_PER_VIEW = 50;
const MAX_FORM_BYTES = 16 * 1024;

/** What a console outlives requests with: the sign-in throttle, the setup token, the password links in use. */
interface ConsoleState {
  throttle: SignInCounter;
  /** The hash of the first-run setup token, while it still works. */
  setupHash: string | null;
  /** Password links whose new password is being stored now (a second post of one waits its turn). */
  linksInUse: Set<string>;
}

/** One request to a console route, with what every page needs to answer it. */
interface Visit {
  services: ConsoleDeps;
  state: ConsoleState;
  request: Request;
  info?: Deno.ServeHandlerInfo;
  url: URL;
  path: string;
  /** The path pattern's groups (`/documents/:id`). */
  params: Record<string, string>;
  /** The CSRF token of the form it renders; fresh when the browser has no cookie yet. */
  csrf: { token: string; fresh: boolean };
  secure: boolean;
  assetVersion: string;
  /** An HTML page (setting the CSRF cookie when it is fresh). */
  render(page: VNode, status?: number, extra?: Record<string, string>): Response;
  /** A 303 to `location`, setting these cookies. */
  redirect(location: string, cookies?: string[]): Response;
}

/** A request of a signed-in person. */
interface PersonVisit extends Visit {
  person: Person;
  admin: boolean;
  db: DatabaseSync;
  context: PageContext;
}

/**
 * A console route: a path pattern, the methods it answers (another gets 405),
 * who may open it, and its handler. `anyone` routes answer without a session;
 * `person` routes need one (without it, a redirect to the sign-in page), and
 * `administrator` routes hide from everyone else as a path that does not
 * exist would.
 */
type ConsoleRoute =
  | {
    access: "anyone";
    pattern: URLPattern;
    methods: readonly string[];
    handle(visit: Visit): Promise<Response>;
  }
  | {
    access: "person" | "administrator";
    pattern: URLPattern;
    methods: readonly string[];
    /** Where the page of a "not found" error links back to; without it, the error is not caught. */
    back?: string;
    handle(visit: PersonVisit): Promise<Response>;
  };

const READ = ["GET", "HEAD"] as const;

function openRoute(
  path: string,
  methods: readonly string[],
  handle: (visit: Visit) => Promise<Response>,
): ConsoleRoute {
  return { access: "anyone", pattern: new URLPattern({ pathname: path }), methods, handle };
}

function pageRoute(
  path: string,
  handle: (visit: PersonVisit) => Promise<Response>,
  options: { access?: "person" | "administrator"; methods?: readonly string[]; back?: string } = {},
): ConsoleRoute {
  return {
    access: options.access ?? "person",
    pattern: new URLPattern({ pathname: path }),
    methods: options.methods ?? READ,
    ...(options.back !== undefined ? { back: options.back } : {}),
    handle,
  };
}

/** An id in a page's path. */
const ID = "([A-Za-z0-9_-]{1,64})";

/** The console's routes, matched in order. */
const ROUTES: readonly ConsoleRoute[] = [
  openRoute("/sign-in", ["GET", "POST"], (v) => v.request.method === "GET" ? signInPage(v) : signInOrOut(v)),
  openRoute("/sign-out", ["POST"], signInOrOut),
  openRoute(
    "/setup",
    ["GET", "POST"],
    (v) => v.request.method === "GET" ? setupPage(v) : setupOrPasswordPost(v),
  ),
  openRoute(
    "/password",
    ["GET", "POST"],
    (v) => v.request.method === "GET" ? passwordPage(v) : setupOrPasswordPost(v),
  ),
  openRoute("/", READ, home),
  pageRoute("/documents", documentsPage, { back: "/documents" }),
  pageRoute("/search", searchPage, { back: "/documents" }),
  pageRoute(`/documents/:id${ID}`, documentPage, { back: "/documents" }),
  pageRoute("/keys", keysPage, { back: "/keys" }),
  pageRoute(`/keys/:id${ID}`, keyPage, { back: "/keys" }),
  pageRoute("/personal-keys", personalKeysPage, { back: "/documents" }),
  pageRoute("/api-docs", (v) => Promise.resolve(v.render(ApiDocsPage({ context: v.context }))), {
    back: "/documents",
  }),
  pageRoute("/audit", auditPage, { back: "/documents" }),
  pageRoute("/people", peoplePage, { access: "administrator", methods: [...READ, "POST"] }),
];

/**
 * Builds the console over the server's services. It answers `/`, the sign-in
 * and sign-out routes, the pages and `/console/assets/…`; any other path gets
 * a bare 404 so the server can answer its JSON 404.
 *
 * @example
 * ```ts
 * services.console = createConsole(services);
 * ```
 */
export function createConsole(services: ConsoleDeps, options: ConsoleOptions = {}): ConsoleHandler {
  const state: ConsoleState = {
    throttle: options.throttle ?? services.signInThrottle,
    setupHash: options.setupToken ? hashSecret(options.setupToken) : null,
    linksInUse: new Set<string>(),
  };
  let assets: Promise<Assets> | null = null;
  const vendor = vendorFiles();
  /** The folders of files the console serves, by path prefix (GET and HEAD only). */
  const files: Array<[prefix: string, serve: (name: string) => Promise<Response | null>]> = [
    ["/console/assets/", async (name) => (await (assets ??= loadAssets())).serve(name)],
    ["/console/vendor/", (name) => vendor.serve(name)],
  ];
  // The shared database out of reach (an append, a stored file): a page saying so, 503, not the server's JSON 500.
  return async (request, info) => {
    try {
      const path = new URL(request.url).pathname;
      const loaded = await (assets ??= loadAssets());
      for (const [prefix, serve] of files) {
        if (!path.startsWith(prefix)) continue;
        if (request.method !== "GET" && request.method !== "HEAD") return notHere();
        return await serve(path.slice(prefix.length)) ?? notHere();
      }
      return await answer(services, state, loaded, request, info);
    } catch (error) {
      if (!databaseUnreachable(error)) throw error;
      const path = new URL(request.url).pathname;
      const context = pageContext(
        csrfToken(request).token,
        null,
        path,
        (await (assets ??= loadAssets())).version,
      );
      const headers = pageHeaders("text/html; charset=utf-8");
      const page = NotFoundPage({
        context,
        title: "Sergo cannot reach its database",
        message: DATABASE_UNREACHABLE,
        back: path,
      });
      return new Response(`<!doctype html>${renderToString(page)}`, { status: 503, headers });
    }
  };
}

/** Finds the request's route and answers it, checking its method and who may open it. */
async function answer(
  services: ConsoleDeps,
  state: ConsoleState,
  loaded: Assets,
  request: Request,
  info: Deno.ServeHandlerInfo | undefined,
): Promise<Response> {
  const url = new URL(request.url);
  const path = url.pathname;
  let found: { route: ConsoleRoute; params: Record<string, string> } | null = null;
  for (const route of ROUTES) {
    const match = route.pattern.exec({ pathname: path });
    if (match) {
      found = { route, params: match.pathname.groups as Record<string, string> };
      break;
    }
  }
  if (!found) return notHere();
  const { route, params } = found;
  const csrf = csrfToken(request);
  const secure = isSecure(services, request);
  const visit: Visit = {
    services,
    state,
    request,
    info,
    url,
    path,
    assetVersion: loaded.version,
    params,
    csrf,
    secure,
    render: (page: VNode, status = 200, extra: Record<string, string> = {}): Response => {
      const headers = pageHeaders("text/html; charset=utf-8");
      if (csrf.fresh) headers.append("set-cookie", csrfCookie(csrf.token, secure));
      for (const [name, value] of Object.entries(extra)) headers.append(name, value);
      return new Response(`<!doctype html>${renderToString(page)}`, { status, headers });
    },
    redirect: (location: string, cookies: string[] = []): Response => {
      const headers = pageHeaders("text/plain; charset=utf-8");
      headers.set("location", location);
      for (const cookie of cookies) headers.append("set-cookie", cookie);
      return new Response(null, { status: 303, headers });
    },
  };
  if (route.access === "anyone") {
    return route.methods.includes(request.method) ? await route.handle(visit) : methodNotAllowed();
  }
  if (route.access === "person" && !route.methods.includes(request.method)) return methodNotAllowed();
  const session = currentSession(services, request);
  if (!session) return visit.redirect(`/sign-in?next=${encodeURIComponent(path + url.search)}`);
  const person = session.person;
  const db = services.app.db;
  const admin = isAdministrator(db, person.person_id);
  // Anyone else finds no such page, exactly as for a path that does not exist.
  if (route.access === "administrator" && !admin) return notHere();
  if (!route.methods.includes(request.method)) return methodNotAllowed();
  const context = pageContext(csrf.token, { ...person, admin }, path, loaded.version);
  try {
    return await route.handle({ ...visit, person, admin, db, context });
  } catch (error) {
    if (route.back === undefined || !(error instanceof DomainError) || error.code !== "not_found") {
      throw error;
    }
    return visit.render(NotFoundPage({ context, message: error.message, back: route.back }), 404);
  }
}

/** `GET /sign-in`: the sign-in page, or where a signed-in person was going. */
function signInPage(v: Visit): Promise<Response> {
  const { services, request, url, csrf } = v;
  if (currentSession(services, request)) {
    return Promise.resolve(v.redirect(safeNext(url.searchParams.get("next") ?? "")));
  }
  const context = pageContext(csrf.token, null, v.path, v.assetVersion);
  const notice = url.searchParams.get("signed-out") === "1" ? "You are signed out." : undefined;
  return Promise.resolve(
    v.render(SignInPage({ context, notice, next: url.searchParams.get("next") ?? undefined })),
  );
}

/** `POST /sign-in` and `POST /sign-out`: their forms, checked alike. */
async function signInOrOut(v: Visit): Promise<Response> {
  const { services, request, path, csrf, secure } = v;
  const form = await readForm(request);
  const sameOrigin = checkOrigin(services, request);
  const tokenOk = !csrf.fresh && form.get("csrf") === readCookie(request, CSRF_COOKIE);
  const context = pageContext(csrf.token, null, "/sign-in", v.assetVersion);
  if (!sameOrigin || !tokenOk || form.tooLarge) {
    if (path === "/sign-out") return v.redirect("/sign-in");
    return v.render(
      SignInPage({ context, email: form.get("email"), error: "This form has expired — try again." }),
      403,
    );
  }
  if (path === "/sign-out") return v.redirect("/sign-in?signed-out=1", [await signOut(services, request)]);
  const result = await signIn(services, {
    email: form.get("email"),
    password: form.get("password"),
    next: form.get("next"),
  }, {
    address: clientAddress(request, v.info, services.config.trustedProxies),
    secure,
    throttle: v.state.throttle,
  });
  if (result.ok) return v.redirect(result.next, [result.cookie]);
  const next = form.get("next") || undefined;
  return v.render(SignInPage({ context, email: result.email, error: result.message, next }), result.status);
}

/** The page of a setup address or password link that does not work (any more). */
function invalidLink(v: Visit): Response {
  return v.render(
    NotFoundPage({
      context: pageContext(v.csrf.token, null, v.path, v.assetVersion),
      message: v.path === "/setup"
        ? "This setup address is not valid: it works once, while Sergo has nobody, from the line serve printed."
        : "This link is not valid: it works once and expires. Ask an administrator for a new one.",
      back: "/sign-in",
    }),
    404,
  );
}

/** Whether the first-run setup address with this token works now: once, while nobody exists. */
function setupOpen(v: Visit, token: string): boolean {
  const { services, state } = v;
  return state.setupHash !== null && !anyPerson(services.app.db) && hashSecret(token) === state.setupHash;
}

/** `GET /setup?token=`: the form that makes the first administrator. */
function setupPage(v: Visit): Promise<Response> {
  const context = pageContext(v.csrf.token, null, v.path, v.assetVersion);
  const token = v.url.searchParams.get("token") ?? "";
  return Promise.resolve(setupOpen(v, token) ? v.render(SetupPage({ context, token })) : invalidLink(v));
}

/** `GET /password?token=`: the form of a password link (an invitation or a reset). */
function passwordPage(v: Visit): Promise<Response> {
  const context = pageContext(v.csrf.token, null, v.path, v.assetVersion);
  const token = v.url.searchParams.get("token") ?? "";
  const link = findPasswordLink(v.services.app, token);
  if (!link) return Promise.resolve(invalidLink(v));
  return Promise.resolve(
    v.render(PasswordPage({ context, token, ...personOf(link), purpose: link.purpose })),
  );
}

/** `POST /setup` and `POST /password`: a new password, then signed in. */
async function setupOrPasswordPost(v: Visit): Promise<Response> {
  const { services, request, path, csrf, secure, state } = v;
  const context = pageContext(csrf.token, null, path, v.assetVersion);
  const invalid = () => invalidLink(v);
  const form = await readForm(request);
  const tokenOk = !csrf.fresh && form.get("csrf") === readCookie(request, CSRF_COOKIE);
  const token = form.get("token");
  const expired = !checkOrigin(services, request) || !tokenOk || form.tooLarge
    ? "This form has expired — try again."
    : null;
  const signedIn = async (personId: string) => {
    const login = await issueLoginToken(services.app, { personId }, `person-${personId}`);
    return v.redirect("/documents", [
      sessionCookie(login.value, { secure, maxAgeSeconds: LOGIN_TOKEN_LIFETIME_MS / 1000 }),
    ]);
  };
  if (path === "/setup") {
    if (!setupOpen(v, token)) return invalid();
    const name = form.get("name");
    const email = form.get("email").trim();
    const again = (error: string, status = 400) =>
      v.render(SetupPage({ context, token, name, email, error }), status);
    if (expired) return again(expired, 403);
    if (name.trim() === "") return again("Enter your name.");
    if (email === "") return again("Enter your email.");
    const problem = await passwordsProblem(form.get("password"), form.get("password2"), email);
    if (problem) return again(problem);
    const hash = await hashPassword(form.get("password"));
    if (!setupOpen(v, token)) return invalid();
    state.setupHash = null; // once: a second post with the same token finds it gone
    try {
      const person = await addFirstAdministrator(services.app, { name, email, passwordHash: hash });
      return await signedIn(person.person_id);
    } catch (error) {
      const unreachable = databaseUnreachable(error);
      if (!(error instanceof DomainError) && !unreachable) throw error;
      // Another replica's setup address made the first person a moment before: as if it had been this one's.
      if (error instanceof DomainError && error.code === "conflict") return invalid();
      // Refused, or not written: the setup address works again.
      if (!anyPerson(services.app.db)) state.setupHash = hashSecret(token);
      return unreachable ? again(DATABASE_UNREACHABLE, 503) : again(`${(error as Error).message}.`);
    }
  }
  const link = findPasswordLink(services.app, token);
  if (!link || state.linksInUse.has(link.linkId)) return invalid();
  const again = (error: string, status = 400) =>
    v.render(PasswordPage({ context, token, ...personOf(link), purpose: link.purpose, error }), status);
  if (expired) return again(expired, 403);
  const problem = await passwordsProblem(form.get("password"), form.get("password2"), link.person.email);
  if (problem) return again(problem);
  if (state.linksInUse.has(link.linkId)) return invalid(); // taken while the password was checked
  state.linksInUse.add(link.linkId);
  try {
    const hash = await hashPassword(form.get("password"));
    await usePasswordLink(services.app, {
      personId: link.person.person_id,
      linkId: link.linkId,
      passwordHash: hash,
    });
  } finally {
    state.linksInUse.delete(link.linkId);
  }
  return await signedIn(link.person.person_id);
}

/** `/`: the documents when signed in, else the sign-in page (or, before anyone exists, how to set up). */
function home(v: Visit): Promise<Response> {
  const { services, request } = v;
  if (currentSession(services, request)) return Promise.resolve(v.redirect("/documents"));
  if (!anyPerson(services.app.db)) {
    return Promise.resolve(v.render(NotFoundPage({
      context: pageContext(v.csrf.token, null, v.path, v.assetVersion),
      title: "Sergo is not set up yet",
      message:
        "Nobody uses this Sergo yet: open the setup address that serve printed when it started (a line with /setup?token=), or add a person with the CLI.",
      // A first visit: there is no page to go back to, and nobody can sign in yet.
      back: null,
    })));
  }
  return Promise.resolve(v.redirect("/sign-in"));
}

/** `/people` (administrators): everyone, and the forms that add a person or make a password link. */
async function peoplePage(v: PersonVisit): Promise<Response> {
  const { services, request, csrf, db, context, person } = v;
  const people = () =>
    listPeople(db).map((p) => ({
      person_id: p.person_id,
      name: p.name,
      email: p.email,
      admin: isAdministrator(db, p.person_id),
      hasPassword: p.password_hash !== null,
      linkUntil: passwordLinksOf(db, p.person_id).at(-1)?.expires_at ?? null,
    }));
  if (request.method === "GET" || request.method === "HEAD") {
    return v.render(PeoplePage({ context, people: people() }));
  }
  const form = await readForm(request);
  const tokenOk = !csrf.fresh && form.get("csrf") === readCookie(request, CSRF_COOKIE);
  const name = form.get("name");
  const email = form.get("email").trim();
  const again = (error: string, status = 400) =>
    v.render(PeoplePage({ context, people: people(), error, name, email }), status);
  if (!checkOrigin(services, request) || !tokenOk || form.tooLarge) {
    return again("This form has expired — try again.", 403);
  }
  const actor = `person-${person.person_id}`;
  const base = publicUrl(services, request);
  try {
    if (form.get("action") === "add") {
      if (name.trim() === "") return again("Enter the person's name.");
      if (email === "") return again("Enter the person's email.");
      const added = await addPerson(services.app, { name, email }, actor);
      const link = await issuePasswordLink(
        services.app,
        { personId: added.person_id, purpose: "invite" },
        actor,
      );
      return v.render(
        PeoplePage({
          context,
          people: people(),
          made: {
            name: added.name,
            url: `${base}/password?token=${link.token}`,
            purpose: "invite",
            expiresAt: link.expiresAt,
          },
        }),
        201,
      );
    }
    if (form.get("action") === "reset") {
      const target = getPerson(db, form.get("person_id"));
      if (!target) return again("No such person.", 404);
      const purpose = target.password_hash === null ? "invite" : "reset";
      const link = await issuePasswordLink(services.app, { personId: target.person_id, purpose }, actor);
      return v.render(PeoplePage({
        context,
        people: people(),
        made: {
          name: target.name,
          url: `${base}/password?token=${link.token}`,
          purpose,
          expiresAt: link.expiresAt,
        },
      }));
    }
    return again("Unknown action.");
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return again(`${error.message}.`, error.code === "conflict" ? 409 : 400);
  }
}

/** A document with how far its transcription has got, while it is processing. */
function withProgress(db: DatabaseSync, doc: DocumentRow): DocumentRow {
  return doc.status === "processing" ? { ...doc, progress: getProgress(db, doc.document_id) } : doc;
}

/** `/documents[?folder=&offset=]`: a folder's documents (everything inside it), a page at a time. */
function documentsPage(v: PersonVisit): Promise<Response> {
  const { services, url, db, person, context } = v;
  const root = rootLabel(person.name);
  const folderId = url.searchParams.get("folder");
  const current = folderId ? requireFolder(db, person.person_id, folderId) : null;
  const folders = listFolders(db, person.person_id);
  const scope = {
    personId: person.person_id,
    folderIds: current ? documentFolders(db, current.folder_id) : null,
    documentIds: [],
  };
  const offset = Math.max(0, Math.trunc(Number(url.searchParams.get("offset") ?? 0)) || 0);
  const { total, items } = listDocuments(db, scope, { limit: DOCUMENTS_PER_PAGE, offset });
  return Promise.resolve(v.render(DocumentsPage({
    context,
    rootLabel: root,
    folders,
    current,
    documents: items.map((doc) => withProgress(db, doc)),
    total,
    offset,
    perPage: DOCUMENTS_PER_PAGE,
    folderPaths: new Map(folders.map((f) => [f.folder_id, `${root}/${f.path}`])),
    maxUploadBytes: services.config.maxUploadBytes,
    keys: listAgentKeys(db, person.person_id).map((k) => ({ id: k.key_id, name: k.name })),
  })));
}

/** `/search[?q=&as=&offset=]`: the search tool's answer, over the person's documents or as a key. */
async function searchPage(v: PersonVisit): Promise<Response> {
  const { services, url, db, person, context } = v;
  const keys = listAgentKeys(db, person.person_id).map((k) => ({ id: k.key_id, name: k.name }));
  const query = (url.searchParams.get("q") ?? "").trim();
  const translations = installedDictionaries().pairs().map(({ pair }) => pair);
  const translationsOff = translationsOffSentence(services.config.dictionaryDir);
  if (query === "") {
    return v.render(SearchPage({ context, keys, result: null, translations, translationsOff }));
  }
  const offset = Math.max(
    0,
    Math.min(80, Math.trunc(Number(url.searchParams.get("offset") ?? 0)) || 0),
  );
  const result = await consoleSearch(services, person, {
    query,
    asKeyId: url.searchParams.get("as") || null,
    offset,
  });
  return v.render(SearchPage({ context, keys, result, translations, translationsOff }));
}

/** Why no language pair is on, as the search page says it: turned off, still reading, or failed. */
function translationsOffSentence(dictionaryDir: string | null): string | undefined {
  if (dictionaryDir === null) return "Cross-language search is off: SERGO_DICTIONARIES is set to off.";
  const problem = installedDictionariesProblem();
  if (problem !== null) {
    return `Cross-language search is off: the dictionaries in ${dictionaryDir} could not be read (${
      problem.replace(/^They could not be read: /, "").replace(/\.$/, "")
    }).`;
  }
  if (installedDictionariesReading()) {
    return "Cross-language search is not on yet: the installed dictionaries are still being read.";
  }
  return undefined;
}

/** `/documents/:id[?page=]`: one document, fifty pages at a time. */
function documentPage(v: PersonVisit): Promise<Response> {
  const { url, db, person, context } = v;
  const root = rootLabel(person.name);
  const doc = withProgress(db, requireDocument(db, person.person_id, v.params.id!));
  const folders = listFolders(db, person.person_id);
  const folder = folders.find((f) => f.folder_id === doc.folder_id);
  const pictures = doc.type === "pdf" || doc.pdf_copy_status === "made";
  const range = pageWindow(url.searchParams.get("page"), doc.page_count ?? 0);
  return Promise.resolve(v.render(DocumentPage({
    context,
    doc,
    folderLabel: folder ? `${root}/${folder.path}` : root,
    folderHref: folder ? `/documents?folder=${encodeURIComponent(folder.folder_id)}` : "/documents",
    folders,
    rootLabel: root,
    pages: getPages(db, doc.document_id, range.from, range.to),
    window: range,
    pictures,
    ...(url.searchParams.has("page") ? { focusPage: Math.trunc(Number(url.searchParams.get("page"))) } : {}),
    noPictures: doc.pdf_copy_status === "pending"
      ? "The PDF copy is being made — the page pictures appear when it is ready."
      : doc.type === "txt" || doc.type === "md"
      ? "A text file has no page pictures of its own: “Make a PDF copy” (under Actions) gives it some."
      : "Page pictures come from a PDF copy — use “Make a PDF copy” to get them.",
  })));
}

/** `/keys`: the person's agent keys, and the form that makes one. */
async function keysPage(v: PersonVisit): Promise<Response> {
  const { services, request, db, person, context, admin } = v;
  const root = rootLabel(person.name);
  const keys = await Promise.all(listAgentKeys(db, person.person_id).map((k) => keyView(services, k, root)));
  return v.render(KeysPage({
    context,
    keys,
    folders: listFolders(db, person.person_id),
    documents: pickableDocuments(db, person.person_id),
    rootLabel: root,
    publicUrl: publicUrl(services, request),
    oauth: services.config.oauth,
    // Paths of this machine: for administrators, who run commands on it.
    stdio: admin ? stdioPaths(services) : undefined,
  }));
}

/** `/keys/:id`: one agent key, with the apps signed in with it. */
async function keyPage(v: PersonVisit): Promise<Response> {
  const { services, request, db, person, context, admin } = v;
  const root = rootLabel(person.name);
  const folders = listFolders(db, person.person_id);
  const documents = pickableDocuments(db, person.person_id);
  const base = publicUrl(services, request);
  const key = requireAgentKey(db, person.person_id, v.params.id!);
  const view = await keyView(services, key, root);
  return v.render(KeyPage({
    context,
    view,
    folders,
    documents,
    rootLabel: root,
    publicUrl: base,
    oauth: services.config.oauth,
    apps: activeGrantsOfKey(db, key.key_id),
    // Paths of this machine: for administrators, who run commands on it.
    stdio: admin ? stdioPaths(services) : undefined,
  }));
}

/** `/personal-keys`: the person's personal keys, masked. */
function personalKeysPage(v: PersonVisit): Promise<Response> {
  const { services, request, db, person, context } = v;
  const keys = personalKeys(db, person.person_id).map((k) => ({
    id: k.key_id,
    masked: maskKey("personal", k.last4),
    created: k.created_at,
  }));
  return Promise.resolve(
    v.render(PersonalKeysPage({ context, keys, publicUrl: publicUrl(services, request) })),
  );
}

/** `/audit[?filters]`: the person's audit entries, newest first. */
async function auditPage(v: PersonVisit): Promise<Response> {
  const { services, url, db, person, context } = v;
  services.app.settle(); // every audit entry committed so far is in the view
  const data = await auditPageData(db, services.app.auditCalls, person.person_id, url);
  return v.render(AuditPage({ context, ...data }));
}

/** The window of pages shown on a document's page: the 50 that hold `page` (default the first). */
function pageWindow(page: string | null, count: number): { from: number; to: number; count: number } {
  const n = Math.max(1, Math.trunc(Number(page ?? 1)) || 1);
  const from = Math.floor((Math.min(n, Math.max(count, 1)) - 1) / PAGES_PER_VIEW) * PAGES_PER_VIEW + 1;
  return { from, to: Math.min(from + PAGES_PER_VIEW - 1, Math.max(count, from)), count };
}

function pageContext(
  csrf: string,
  person: PageContext["person"],
  path: string,
  assetVersion: string,
): PageContext {
  return {
    csrf,
    person: person && { name: person.name, email: person.email, admin: person.admin ?? false },
    path,
    assetVersion,
  };
}

/** The name and email a password link's page shows. */
function personOf(link: { person: { name: string; email: string } }): { name: string; email: string } {
  return { name: link.person.name, email: link.person.email };
}

/** Why two typed passwords are refused, in one sentence, or null. */
async function passwordsProblem(password: string, again: string, email: string): Promise<string | null> {
  if (password === "") return "Enter a password.";
  if (password !== again) return "The two passwords differ — type the same one twice.";
  const problem = await passwordProblem(password, email);
  return problem ? `${problem}.` : null;
}

/** A bare 404: the server then answers its JSON 404. */
function notHere(): Response {
  return new Response(null, { status: 404 });
}

function methodNotAllowed(): Response {
  return new Response("Method not allowed", {
    status: 405,
    headers: { allow: "GET", "content-type": "text/plain" },
  });
}

/** Whether a form post comes from this server's pages (Origin, when the browser sends it). */
function checkOrigin(services: ConsoleDeps, request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return origin === null;
  const own = new URL(request.url).origin;
  const configured = services.config.publicUrl ? new URL(services.config.publicUrl).origin : null;
  return origin === own || origin === configured;
}

/** A small urlencoded form, read with a size limit. */
async function readForm(request: Request): Promise<{ get(name: string): string; tooLarge: boolean }> {
  const type = request.headers.get("content-type") ?? "";
  let text = "";
  let tooLarge = false;
  if (type.startsWith("application/x-www-form-urlencoded") && request.body) {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of request.body) {
      size += chunk.byteLength;
      if (size > MAX_FORM_BYTES) {
        tooLarge = true;
        break;
      }
      chunks.push(chunk);
    }
    if (!tooLarge) text = new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
  }
  const params = new URLSearchParams(text);
  return { get: (name) => params.get(name) ?? "", tooLarge };
}
