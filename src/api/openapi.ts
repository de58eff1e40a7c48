/**
 * `/api/openapi.json`: the OpenAPI 3.1 document of every route the server
 * answers, the REST table's generated from its zod schemas.
 *
 * @module
 */
import { z } from "zod";
import { VERSION } from "../version.ts";
import { type DocumentedRoute, OTHER_ROUTES } from "./other_routes.ts";
import { ROUTES } from "./routes.ts";

/** The tag a REST route is listed under on the API page. */
function tagOf(path: string): string {
  const part = path.split("/")[2] ?? "";
  return {
    me: "Account",
    session: "Account",
    folders: "Folders",
    documents: "Documents",
    search: "Search",
    keys: "Agent keys",
    "personal-keys": "Personal keys",
  }[part] ?? "Account";
}

/** A zod schema as the JSON Schema an OpenAPI operation embeds (without its own `$schema`). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

/** A zod object's fields as OpenAPI query parameters. */
function queryParameters(schema: z.ZodObject): Record<string, unknown>[] {
  const json = z.toJSONSchema(schema, { io: "input" }) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, { description, ...rest }]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    ...(description ? { description } : {}),
    schema: rest,
  }));
}

const SECURITY: Record<DocumentedRoute["security"], unknown[]> = {
  bearer: [{ bearer: [] }, { session: [] }],
  "agent-key": [{ agentKey: [] }],
  session: [{ session: [] }],
  none: [],
};

/**
 * The OpenAPI 3.1 document of every route the server answers: the REST table
 * (generated from its zod schemas) and the routes outside it (other_routes.ts).
 */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (method: string, path: string, operation: Record<string, unknown>) => {
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = operation;
  };
  const pathParameters = (path: string) =>
    [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
  for (const r of ROUTES) {
    const path = r.path.replace(/:(\w+)/g, "{$1}");
    const params = [...pathParameters(path), ...(r.query ? queryParameters(r.query) : [])];
    add(r.method, path, {
      tags: [tagOf(r.path)],
      summary: r.summary,
      ...(params.length ? { parameters: params } : {}),
      ...(r.body
        ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(r.body, "input") } },
          },
        }
        : {}),
      responses: {
        "default": {
          description: "JSON; errors are {code, message}",
          ...(r.answer
            ? { content: { "application/json": { schema: jsonSchema(r.answer, "output") } } }
            : {}),
        },
      },
      security: SECURITY.bearer,
    });
  }
  for (const r of OTHER_ROUTES) {
    const params = [
      ...pathParameters(r.path),
      ...(r.query ?? []).map((q) => ({ in: "query", required: false, ...q })),
    ];
    add(r.method, r.path, {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(params.length ? { parameters: params } : {}),
      responses: {
        "default": {
          description: r.security === "none" ? "The answer" : "The answer; without a valid credential, 401",
          content: Object.fromEntries(
            Object.entries(r.responses).map(([type, schema]) => [type, schema ? { schema } : {}]),
          ),
        },
      },
      security: SECURITY[r.security],
    });
  }
  add("GET", "/api/openapi.json", {
    tags: ["Server"],
    summary: "This OpenAPI document",
    responses: { "default": { description: "The document", content: { "application/json": {} } } },
    security: [],
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Sergo API",
      version: VERSION,
      description:
        "Every route Sergo answers: the REST API (a personal key, or the console's session cookie " +
        "with X-CSRF-Token for changes), the audit and its export, MCP, OAuth and the console's pages.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A personal key or a login token" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "sergo_session",
          description: "The console's sign-in; changes also need the X-CSRF-Token header",
        },
        agentKey: { type: "http", scheme: "bearer", description: "An agent key, or an OAuth access token" },
      },
    },
    paths,
  };
}
