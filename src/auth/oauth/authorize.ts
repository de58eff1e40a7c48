/**
 * The authorization endpoint: `GET /oauth/authorize` checks the app and its
 * request, sends the person to sign in if needed, and shows the consent
 * page; `POST /oauth/authorize` (the consent form) records the grant with a
 * single-use, short-lived code (only its sha256 is kept) and sends the
 * browser back to the app with `code`, `state` and `iss` (RFC 9207).
 *
 * The client and the redirect URI are checked first (RFC 6749 §4.1.2.1):
 * when either is wrong, the person gets an error page and nothing else.
 * Anything else wrong with a request also gets an error page, with a link
 * back to the app carrying the OAuth error: the browser is sent to an app's
 * address on its own only after the person signed in and decided (allow or
 * deny), since anyone can register an app with any https redirect URI
 * (RFC 9700 §4.11.2: otherwise Sergo is an open redirector).
 *
 * @module
 */
import { readCookie } from "../api_auth.ts";
import { CSRF_COOKIE, csrfToken } from "../csrf.ts";
import { signedIn } from "../session.ts";
import { DomainError } from "../../domain/errors.ts";
import { createAgentKey, requireAgentKey } from "../../domain/keys.ts";
import { newId } from "../../domain/ids.ts";
import { decide, NO_GRANT } from "../../domain/grants.ts";
import {
  appendDecision,
  CODE_PREFIX,
  HourlyLimit,
  issuerOf,
  newSecret,
  type OAuthSettings,
  readSmallBody,
  RESOURCE_PATHS,
} from "./_shared.ts";
import { ClientDirectory, ClientError, type ClientInfo, redirectAllowed } from "./clients.ts";
import type { AuthorizationFields, BackToApp, ConsentDraft, OAuthDeps } from "./deps.ts";
import { DATABASE_UNREACHABLE, databaseUnreachable } from "../../http/unavailable.ts";

const MAX_FORM_BYTES = 16 * 1024;
/** Authorization requests from one address per minute at most (each may fetch a metadata document). */
export const AUTHORIZE_PER_MINUTE = 60;
const CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;

type Checked =
  | { kind: "ok"; client: ClientInfo; fields: AuthorizationFields }
  | { kind: "page"; message: string; back?: BackToApp };

/** Where the browser goes back to the app: the redirect URI with the answer and `iss` added to its query. */
export function backToApp(
  redirectUri: string,
  params: Record<string, string | null>,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set("iss", issuer);
  return url.href;
}

/** Builds the authorization endpoint. */
export function createAuthorize(
  deps: OAuthDeps,
  settings: OAuthSettings,
  clients: ClientDirectory,
): (request: Request, address: string) => Promise<Response> {
  const { app, pages } = deps;
  const perAddress = new HourlyLimit(AUTHORIZE_PER_MINUTE, 60_000);

  async function check(params: URLSearchParams, issuer: string): Promise<Checked> {
    for (const name of ["client_id", "redirect_uri", "state", "code_challenge", "response_type"]) {
      if (params.getAll(name).length > 1) return { kind: "page", message: `The request repeats "${name}".` };
    }
    let client: ClientInfo;
    try {
      client = await clients.find(params.get("client_id") ?? "");
    } catch (error) {
      if (error instanceof ClientError) return { kind: "page", message: error.message };
      throw error;
    }
    const redirectUri = params.get("redirect_uri") ?? "";
    if (redirectUri === "") return { kind: "page", message: "The request names no redirect_uri." };
    if (!redirectAllowed(client, redirectUri)) {
      return {
        kind: "page",
        message: `"${redirectUri}" is not one of ${client.client_name}'s redirect URIs.`,
      };
    }
    const state = params.get("state");
    // Not sent back on its own: the person sees why, and may follow a link back to the app.
    const fail = (error: string, description: string): Checked => ({
      kind: "page",
      message: description,
      back: {
        name: client.client_name,
        href: backToApp(redirectUri, { error, error_description: description, state }, issuer),
      },
    });
    if (params.get("response_type") !== "code") {
      return fail("unsupported_response_type", "Sergo answers response_type=code only.");
    }
    const challenge = params.get("code_challenge") ?? "";
    if (params.get("code_challenge_method") !== "S256" || !CHALLENGE.test(challenge)) {
      return fail("invalid_request", "PKCE is required, with code_challenge_method=S256.");
    }
    const resources = params.getAll("resource");
    const ours = RESOURCE_PATHS.map((path) => issuer + path);
    if (resources.length > 1 || (resources.length === 1 && !ours.includes(resources[0]!))) {
      return fail("invalid_target", `The resource must be one of ${ours.join(", ")}.`);
    }
    return {
      kind: "ok",
      client,
      fields: {
        client_id: client.client_id,
        redirect_uri: redirectUri,
        state,
        code_challenge: challenge,
        resource: resources[0] ?? ours[0]!,
        scope: params.get("scope"),
      },
    };
  }

  return async (request, address) => {
    const url = new URL(request.url);
    const issuer = issuerOf(settings, request);
    const csrf = csrfToken(request);
    const session = signedIn(app.db, request, app.now());
    const refuse = (message: string, status: number, back?: BackToApp): Promise<Response> =>
      pages.refusal(request, { person: session?.person ?? null, message, back }, status);
    const redirect = (location: string): Response =>
      new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });

    if (request.method !== "GET" && request.method !== "POST") {
      return new Response("Method not allowed", { status: 405, headers: { allow: "GET, POST" } });
    }
    if (!perAddress.take(address, Date.now())) {
      const message =
        `Too many sign-in requests from your address: at most ${AUTHORIZE_PER_MINUTE} a minute — try again in a minute.`;
      const response = await refuse(message, 429);
      response.headers.set("retry-after", "60");
      return response;
    }
    let params = url.searchParams;
    if (request.method === "POST") {
      const type = request.headers.get("content-type") ?? "";
      const text = type.startsWith("application/x-www-form-urlencoded") ? await readForm(request) : "";
      if (text === null) {
        return await refuse("The form is too large.", 413);
      }
      params = new URLSearchParams(text);
    }
    const checked = await check(params, issuer);
    if (checked.kind === "page") {
      return await refuse(checked.message, 400, checked.back);
    }
    const { client, fields } = checked;
    if (!session) {
      const again = new URL("/oauth/authorize", url);
      for (const [name, value] of Object.entries(fields)) {
        if (value !== null) again.searchParams.set(name, value);
      }
      again.searchParams.set("response_type", "code");
      again.searchParams.set("code_challenge_method", "S256");
      return redirect(`/sign-in?next=${encodeURIComponent(again.pathname + again.search)}`);
    }
    const person = session.person;
    const page = (error?: string, draft?: ConsentDraft, status = error ? 400 : 200) =>
      pages.consent(request, { person, client, fields, error, draft }, status);
    if (request.method === "GET") return await page();

    // The consent form: from this server's page, with its CSRF token.
    const origin = request.headers.get("origin");
    const ownOrigins = [url.origin, issuer];
    if (
      (origin !== null && !ownOrigins.includes(origin)) || csrf.fresh ||
      params.get("csrf") !== readCookie(request, CSRF_COOKIE)
    ) {
      return await page("This form has expired — try again.");
    }
    if (params.get("decision") !== "allow") {
      return redirect(backToApp(fields.redirect_uri, {
        error: "access_denied",
        error_description: `${person.name} did not allow ${client.client_name}.`,
        state: fields.state,
      }, issuer));
    }
    const actor = `person-${person.person_id}`;
    const choice = params.get("key") ?? "";
    const draft: ConsentDraft = {
      key: choice,
      name: params.get("new_name") ?? "",
      description: params.get("new_description") ?? "",
      folders: params.getAll("folders"),
      documents: params.getAll("documents"),
    };
    let keyId: string;
    try {
      if (choice === "new") {
        const made = await createAgentKey(app, {
          personId: person.person_id,
          name: draft.name.trim(),
          description: draft.description.trim(),
          canRead: { folders: draft.folders, documents: draft.documents },
        }, actor);
        keyId = made.key.key_id;
      } else {
        keyId = requireAgentKey(app.db, person.person_id, choice).key_id;
      }
    } catch (error) {
      if (error instanceof DomainError) return await page(error.message, draft);
      if (databaseUnreachable(error)) return await page(DATABASE_UNREACHABLE, draft, 503);
      throw error;
    }
    const code = newSecret(CODE_PREFIX);
    const decision = decide(
      {
        type: "GrantAccess",
        grantId: newId(),
        keyId,
        personId: person.person_id,
        client,
        redirectUri: fields.redirect_uri,
        resource: fields.resource,
        codeChallenge: fields.code_challenge,
        codeHash: code.hash,
        codeSeconds: settings.codeSeconds,
      },
      NO_GRANT,
      app.now(),
    );
    try {
      await appendDecision(app, decision, actor);
    } catch (error) {
      if (databaseUnreachable(error)) return await page(DATABASE_UNREACHABLE, draft, 503);
      throw error;
    }
    return redirect(backToApp(fields.redirect_uri, { code: code.value, state: fields.state }, issuer));
  };
}

function readForm(request: Request): Promise<string | null> {
  return readSmallBody(request, MAX_FORM_BYTES);
}
