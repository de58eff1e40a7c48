/**
 * The REST API under `/api/`: authenticates the caller (a personal key, a
 * login token, or the console's cookie with its CSRF header), hands
 * `/api/audit` to the audit, and dispatches everything else through the
 * route table (`routes.ts`: method + path pattern → handler), checking JSON
 * bodies against each route's zod schema first. `/api/openapi.json` is
 * generated from the same table (`openapi.ts`).
 *
 * @module
 */
import { authenticateApi } from "../auth/api_auth.ts";
import { errorResponse, errorToResponse, notFound } from "../http/json.ts";
import { readBodyText } from "../http/read_body.ts";
import { openApiDocument } from "./openapi.ts";
import { type ApiDeps, zodMessage } from "./route.ts";
import { ROUTES } from "./routes.ts";

/** The largest JSON body the API reads. */
const MAX_JSON_BODY = 1_000_000;

/** Builds the API handler over the services. */
export function createApi(services: ApiDeps): (request: Request) => Promise<Response> {
  const openapi = JSON.stringify(openApiDocument());
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/api/openapi.json" && request.method === "GET") {
      return new Response(openapi, { headers: { "content-type": "application/json" } });
    }
    const auth = authenticateApi(services.app.db, request, services.app.now());
    if (auth instanceof Response) return auth;
    if (auth.viaCookie && request.method !== "GET" && !services.checkCsrf(request)) {
      return errorResponse(403, "csrf", "This form has expired — reload the page and try again");
    }
    if (url.pathname.startsWith("/api/audit")) {
      const response = await services.audit(request, auth.personId);
      if (response) return response;
    }
    let methodMismatch = false;
    for (const r of ROUTES) {
      const match = r.pattern.exec({ pathname: url.pathname });
      if (!match) continue;
      if (r.method !== request.method) {
        methodMismatch = true;
        continue;
      }
      try {
        let body: unknown = undefined;
        if (r.body) {
          const type = request.headers.get("content-type") ?? "";
          if (!type.includes("application/json")) {
            return errorResponse(
              415,
              "unsupported",
              "Send the body as JSON (Content-Type: application/json)",
            );
          }
          const text = await readBodyText(request, MAX_JSON_BODY);
          if (text === null) {
            return errorResponse(413, "too_large", `The body is too large: at most ${MAX_JSON_BODY} bytes`);
          }
          let raw: unknown;
          try {
            raw = text === "" ? {} : JSON.parse(text);
          } catch {
            return errorResponse(400, "invalid", "The body is not valid JSON");
          }
          const parsed = r.body.safeParse(raw);
          if (!parsed.success) return errorResponse(400, "invalid", zodMessage(parsed.error));
          body = parsed.data;
        }
        return await r.handle({
          request,
          url,
          caller: auth,
          params: match.pathname.groups as Record<string, string>,
          body,
          actor: `person-${auth.personId}`,
        }, services);
      } catch (error) {
        return errorToResponse(error);
      }
    }
    if (methodMismatch) {
      return errorResponse(405, "method_not_allowed", `${request.method} is not allowed on ${url.pathname}`);
    }
    return notFound();
  };
}
