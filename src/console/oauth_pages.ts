/**
 * The pages the OAuth server shows a person, drawn by the console: the
 * consent page and the page of a refused request, with the console's layout,
 * assets, headers and CSRF cookie. The server is handed them when it is
 * composed (`OAuthDeps.pages`).
 *
 * @module
 */
import type { VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import { listFolders, rootLabel } from "../../projections/catalogue.ts";
import type { Person } from "../../projections/catalogue.ts";
import { listAgentKeys } from "../../projections/key_scopes.ts";
import { csrfCookie, csrfToken } from "../auth/csrf.ts";
import type { OAuthPages } from "../auth/oauth/deps.ts";
import type { SergoApp } from "../app.ts";
import type { Config } from "../config.ts";
import { loadAssets } from "./assets.ts";
import { pickableDocuments } from "./page_data.ts";
import { AuthorizationErrorPage, ConsentPage } from "./pages/consent.tsx";
import type { PageContext } from "./pages/layout.tsx";
import { isSecure, pageHeaders } from "./session.ts";

/** The CSP source that lets the consent form's answer go to the redirect URI. */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

/** What the OAuth pages read: the projections, and whether cookies must be `Secure`. */
export interface OAuthPagesDeps {
  app: Pick<SergoApp, "db">;
  config: Pick<Config, "publicUrl">;
}

/** The OAuth server's pages over the projections. */
export function oauthPages(services: OAuthPagesDeps): OAuthPages {
  let assetVersion: Promise<string> | null = null;

  async function render(
    request: Request,
    person: Person | null,
    page: (context: PageContext) => VNode,
    status: number,
    redirectUri?: string,
  ): Promise<Response> {
    const csrf = csrfToken(request);
    const context: PageContext = {
      csrf: csrf.token,
      person: person && { name: person.name, email: person.email },
      path: "/oauth/authorize",
      assetVersion: await (assetVersion ??= loadAssets().then((assets) => assets.version)),
    };
    const headers = pageHeaders("text/html; charset=utf-8");
    if (redirectUri) {
      const csp = headers.get("content-security-policy")!;
      headers.set(
        "content-security-policy",
        csp.replace("form-action 'self'", `form-action 'self' ${formTarget(redirectUri)}`),
      );
    }
    if (csrf.fresh) headers.append("set-cookie", csrfCookie(csrf.token, isSecure(services, request)));
    return new Response(`<!doctype html>${renderToString(page(context))}`, { status, headers });
  }

  return {
    consent(request, view, status) {
      const db = services.app.db;
      const personId = view.person.person_id;
      return render(
        request,
        view.person,
        (context) =>
          ConsentPage({
            context,
            client: view.client,
            fields: view.fields,
            keys: listAgentKeys(db, personId),
            folders: listFolders(db, personId),
            documents: pickableDocuments(db, personId),
            rootLabel: rootLabel(view.person.name),
            error: view.error,
            draft: view.draft,
          }),
        status,
        view.fields.redirect_uri,
      );
    },
    refusal(request, view, status) {
      return render(
        request,
        view.person,
        (context) => AuthorizationErrorPage({ context, message: view.message, back: view.back }),
        status,
      );
    },
  };
}
