/**
 * JSON responses and errors of the HTTP surface.
 *
 * @module
 */
import { DomainError } from "../domain/errors.ts";
import { DATABASE_UNREACHABLE, databaseUnreachable } from "./unavailable.ts";

/** A JSON response. */
export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** An error response `{"code", "message"}`. */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers: HeadersInit = {},
): Response {
  return json({ code, message }, status, headers);
}

/** The JSON 404 every unknown path answers (never HTML, never OAuth metadata). */
export function notFound(): Response {
  return errorResponse(404, "not_found", "Nothing here — see /api/openapi.json for the API");
}

/**
 * Turns a thrown error into a response: domain errors keep their status; the
 * shared database out of reach is 503 in one sentence; others are 500 without details.
 */
export function errorToResponse(error: unknown): Response {
  if (error instanceof DomainError) return errorResponse(error.status, error.code, error.message);
  if (databaseUnreachable(error)) return errorResponse(503, "unavailable", DATABASE_UNREACHABLE);
  console.error("Request failed:", error);
  return errorResponse(
    500,
    "internal",
    "Something went wrong on the server — the request was not carried out",
  );
}
