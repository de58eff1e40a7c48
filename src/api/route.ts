/**
 * The REST API's routes, one kind of thing per file: a route is a method, a
 * path pattern and the handler that answers it, with the zod schemas its
 * body, query and answer are checked against (and `/api/openapi.json` is
 * generated from).
 *
 * @module
 */
import type { z } from "zod";
import type { ApiCaller } from "../auth/api_auth.ts";
import { DomainError } from "../domain/errors.ts";
import type { ApiDeps } from "./deps.ts";

/** What every handler is given: the services the server was composed of (its only import of them). */
export type { ApiDeps };

/** A route's context: the request, its caller and the path's groups. */
export interface RouteContext {
  request: Request;
  url: URL;
  caller: ApiCaller;
  params: Record<string, string>;
  body: unknown;
  actor: string;
}

/** One route of the table: what it answers, and how its requests and answers are shaped. */
export interface Route {
  method: string;
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The JSON answer's shape, for the OpenAPI document. */
  answer?: z.ZodType;
  /** Handles the request body itself (uploads). */
  raw?: boolean;
  handle(context: RouteContext, services: ApiDeps): Promise<Response>;
  pattern: URLPattern;
}

/** A route: `path` is a URLPattern pathname (`/api/keys/:id`). */
export function route(
  method: string,
  path: string,
  spec: Omit<Route, "method" | "path" | "pattern">,
): Route {
  return { method, path, ...spec, pattern: new URLPattern({ pathname: path }) };
}

/** The query string checked against `schema`; a mismatch is an "invalid" error naming the field. */
export function parseQuery<T extends z.ZodObject>(schema: T, url: URL): z.infer<T> {
  const result = schema.safeParse(Object.fromEntries(url.searchParams));
  if (!result.success) throw new DomainError("invalid", zodMessage(result.error));
  return result.data;
}

/** One sentence from a zod error: which field and what is wrong. */
export function zodMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "The request is not valid";
  const where = issue.path.length ? `"${issue.path.join(".")}"` : "The body";
  if (issue.code === "unrecognized_keys") {
    return `Unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
  }
  return `${where}: ${issue.message}`;
}
