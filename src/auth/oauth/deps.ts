/**
 * What the OAuth server is handed when the server is composed: the app (its
 * log and projections), the network settings it needs, and the pages a
 * person sees during an authorization — drawn by the console, which sits
 * above OAuth, so OAuth itself only speaks the protocol.
 *
 * @module
 */
import type postgres from "postgres";
import type { Person } from "../../../projections/catalogue.ts";
import type { SergoApp } from "../../app.ts";
import type { ClientInfo } from "./clients.ts";

/** The authorization request fields the consent form carries back. */
export interface AuthorizationFields {
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  resource: string;
  scope: string | null;
}

/** The new-key fields of a consent form. */
export interface ConsentDraft {
  key: string;
  name: string;
  description: string;
  folders: string[];
  documents: string[];
}

/** Where the person may choose to go back to the app from an error page. */
export interface BackToApp {
  /** The app's name. */
  name: string;
  /** The redirect URI with the OAuth error in its query. */
  href: string;
}

/** What the consent page shows: who decides, which app asks, for what. */
export interface ConsentView {
  /** The signed-in person who decides. */
  person: Person;
  client: ClientInfo;
  fields: AuthorizationFields;
  /** Why the form came back, when it did. */
  error?: string;
  /** What the new-key fields held when the form comes back with an error. */
  draft?: ConsentDraft;
}

/** What the page of a refused authorization request shows. */
export interface RefusalView {
  /** The signed-in person, if any (the page's header names them). */
  person: Person | null;
  /** Why the request is refused, in one sentence. */
  message: string;
  /** A link back to the app, offered when the app and its redirect URI are known. */
  back?: BackToApp;
}

/** The pages of the authorization endpoint, as whole answers (headers and cookies included). */
export interface OAuthPages {
  /**
   * The consent page with `status`. Its form posts to `/oauth/authorize` and
   * carries the CSRF token of `auth/csrf.ts`; its answer may be sent on to
   * `view.fields.redirect_uri`.
   */
  consent(request: Request, view: ConsentView, status: number): Promise<Response>;
  /** The page of a request refused before the person decided anything, with `status`. */
  refusal(request: Request, view: RefusalView, status: number): Promise<Response>;
}

/** What the OAuth server is built over. */
export interface OAuthDeps {
  app: SergoApp;
  /** The proxies whose `X-Forwarded-For` is believed (`SERGO_TRUSTED_PROXIES`), for per-address limits. */
  trustedProxies: ReadonlySet<string>;
  /** The pool of the counts replicas share in PostgreSQL; null embedded (counted in this process). */
  sharedCounts: postgres.Sql | null;
  /** The pages a person sees. */
  pages: OAuthPages;
}
