/**
 * The routes the server answers outside the REST table of `routes.ts`, described
 * for the OpenAPI document: the audit under `/api/audit`, `/healthz`, the MCP
 * transports, OAuth, and the console's pages. `test/http/openapi_routes_test.ts`
 * walks the running server and fails when it answers a route that is in
 * neither list.
 *
 * @module
 */

/** One query parameter, as OpenAPI writes it. */
export interface QueryParameter {
  name: string;
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

/** A route described by hand. */
export interface DocumentedRoute {
  method: string;
  /** The path, with `{name}` for a path parameter. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  query?: QueryParameter[];
  /** How the caller proves who it is. */
  security: "bearer" | "agent-key" | "session" | "none";
  /** The answer's content types, each with its schema when it has one. */
  responses: Record<string, Record<string, unknown> | null>;
}

const string = { type: "string" };
const time = {
  type: "string",
  description: "An ISO 8601 date or time, such as 2026-12-01 or 2026-12-01T09:00Z",
};
const html = { "text/html": null };

const nullableString = { type: ["string", "null"] };
const AUDIT_ENTRY = {
  type: "object",
  properties: {
    position: { type: "integer", description: "The event's position in the log" },
    hash: { type: "string", description: "The event's hash in the chain" },
    time: { type: "string", format: "date-time" },
    person_id: string,
    actor: { type: "string", description: "Who did it: a person's name, or a masked key with its name" },
    actor_kind: string,
    key_id: nullableString,
    key_name: nullableString,
    masked_key: nullableString,
    end_user: { type: ["string", "null"], description: "The X-Sergo-End-User an agent named" },
    action: { type: "string", description: "Such as mcp search, mcp text read, console search, key rolled" },
    details: {
      type: "object",
      description:
        "What was asked and found (query, results, file, sha256, pages); is_error and error on failures",
    },
    type: { type: "string", description: "The event type behind the entry" },
    stream: string,
  },
};

/** The routes outside the REST table, in the order the API page shows them. */
export const OTHER_ROUTES: readonly DocumentedRoute[] = [
  {
    method: "GET",
    path: "/api/audit",
    tag: "Audit",
    summary: "The caller's audit entries, newest first, filtered and paged",
    security: "bearer",
    query: [
      { name: "from", description: "Entries at or after this time", schema: time },
      { name: "to", description: "Entries before this time", schema: time },
      { name: "key", description: "Only this agent key's calls, by name", schema: string },
      { name: "key_id", description: "Only this agent key's calls, by id", schema: string },
      { name: "end_user", description: "Only calls made for this end user", schema: string },
      { name: "action", description: "Only this action, such as mcp search", schema: string },
      {
        name: "limit",
        description: "How many entries (default 50)",
        schema: { type: "integer", minimum: 1, maximum: 1000 },
      },
      {
        name: "before",
        description: "Entries before this position: the answer's next_before, to page on",
        schema: { type: "integer", minimum: 1 },
      },
    ],
    responses: {
      "application/json": {
        type: "object",
        properties: {
          entries: { type: "array", items: AUDIT_ENTRY },
          next_before: {
            type: "integer",
            description: "Pass it as before for the next page; absent on the last",
          },
        },
      },
    },
  },
  {
    method: "GET",
    path: "/api/audit/export",
    tag: "Audit",
    summary: "Download the caller's signed audit trail: JSONL, or a zip of a CSV and its manifest",
    description:
      "The export holds the trail — who, which key, which end user, which document (id, name, sha256), which " +
      "pages, when — and content hashes, never document text. `sergo audit verify FILE --public-key PEM` " +
      "checks every record against the signed manifest.",
    security: "bearer",
    query: [
      {
        name: "format",
        description: "jsonl (default): one record a line, the signed manifest last; csv: a .zip of the CSV " +
          "and its manifest",
        schema: { type: "string", enum: ["jsonl", "csv"], default: "jsonl" },
      },
      { name: "from", description: "Records at or after this time", schema: time },
      { name: "to", description: "Records before this time", schema: time },
      { name: "key", description: "Only this agent key's records, by name", schema: string },
    ],
    responses: { "application/x-ndjson": null, "application/zip": null },
  },
  {
    method: "GET",
    path: "/api/audit/public-key",
    tag: "Audit",
    summary: "The install's audit signing key (PEM), to verify an export with",
    security: "bearer",
    responses: { "application/x-pem-file": null },
  },
  {
    method: "GET",
    path: "/healthz",
    tag: "Server",
    summary: "Whether the server is well: log position, projections behind, writer, converter, transcriber",
    security: "none",
    responses: {
      "application/json": {
        type: "object",
        properties: {
          ok: { type: "boolean" },
          version: { type: "string" },
          log: { type: "object" },
          writer: { type: "string" },
          projections: { type: "object" },
        },
      },
    },
  },
  {
    method: "POST",
    path: "/mcp",
    tag: "MCP",
    summary: "The MCP endpoint of an agent key (Streamable HTTP, JSON-RPC): search, list_documents, " +
      "read_document, view_page",
    description:
      "Authorization: Bearer with an agent key or an OAuth access token; X-Sergo-End-User names the person " +
      "the agent works for. Every tool call is audited.",
    security: "agent-key",
    responses: { "application/json": null, "text/event-stream": null },
  },
  {
    method: "POST",
    path: "/chatgpt/mcp",
    tag: "MCP",
    summary: "The ChatGPT-shaped MCP endpoint of an agent key: OpenAI's search(query) and fetch(id)",
    description:
      "The same key, OAuth, scope, rate limit and audit as /mcp; the tools are the two ChatGPT's connectors " +
      "and deep research call. Each call's audit entry says shape: chatgpt.",
    security: "agent-key",
    responses: { "application/json": null, "text/event-stream": null },
  },
  {
    method: "GET",
    path: "/sse",
    tag: "MCP",
    summary: "The legacy HTTP+SSE transport: the event stream of an agent key's MCP session",
    security: "agent-key",
    responses: { "text/event-stream": null },
  },
  {
    method: "POST",
    path: "/sse/messages",
    tag: "MCP",
    summary: "The legacy HTTP+SSE transport: a JSON-RPC message for the session named by ?sessionId=",
    security: "agent-key",
    query: [{
      name: "sessionId",
      description: "The session the /sse stream announced",
      required: true,
      schema: string,
    }],
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/.well-known/oauth-protected-resource",
    tag: "OAuth",
    summary: "Protected resource metadata (RFC 9728) of /mcp",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/.well-known/oauth-protected-resource/mcp",
    tag: "OAuth",
    summary: "Protected resource metadata (RFC 9728) of /mcp, path-suffixed form",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/.well-known/oauth-protected-resource/chatgpt/mcp",
    tag: "OAuth",
    summary: "Protected resource metadata (RFC 9728) of /chatgpt/mcp",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/.well-known/oauth-protected-resource/sse",
    tag: "OAuth",
    summary: "Protected resource metadata (RFC 9728) of /sse",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/.well-known/oauth-authorization-server",
    tag: "OAuth",
    summary: "Authorization server metadata (RFC 8414): Sergo is its own authorization server",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "POST",
    path: "/oauth/register",
    tag: "OAuth",
    summary: "Dynamic client registration (RFC 7591) of a connector app",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "GET",
    path: "/oauth/authorize",
    tag: "OAuth",
    summary: "The consent page: the signed-in person picks the agent key an app acts as",
    security: "session",
    responses: html,
  },
  {
    method: "POST",
    path: "/oauth/authorize",
    tag: "OAuth",
    summary: "The consent page's answer: allow (a code for the app's redirect) or deny",
    security: "session",
    responses: html,
  },
  {
    method: "POST",
    path: "/oauth/token",
    tag: "OAuth",
    summary: "Token endpoint: an authorization code (with PKCE) or a refresh token for an access token",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "POST",
    path: "/oauth/revoke",
    tag: "OAuth",
    summary: "Token revocation (RFC 7009)",
    security: "none",
    responses: { "application/json": null },
  },
  {
    method: "POST",
    path: "/oauth/grants/{id}/revoke",
    tag: "OAuth",
    summary: "The button on a key's page: the app loses its access at once",
    security: "session",
    responses: html,
  },
  ...[
    ["/", "Goes to the documents (or, before setup, says how to begin)"],
    ["/sign-in", "The sign-in form"],
    ["/setup", "First run: creates the first person, an administrator, with the token serve printed"],
    ["/password", "Sets a password through an invitation or reset link"],
    ["/documents", "Folders, documents, upload (files and folders) and the search box"],
    ["/documents/{id}", "One document: its pages' text beside their pictures, the original's download"],
    [
      "/search",
      "Console search: the search tool's answer over the person's documents, or as a key sees them",
    ],
    ["/keys", "Agent keys: make, roll and delete them; their usage"],
    ["/keys/{id}", "One agent key: what it reads, its usage, its connector apps"],
    ["/personal-keys", "Personal keys for scripts and the CLI"],
    ["/audit", "The audit as sentences, filtered and paged, with the exports"],
    ["/people", "Administrators only: people, invitations and password resets"],
    ["/api-docs", "This page: the OpenAPI document, drawn by Swagger UI"],
  ].map(([path, summary]): DocumentedRoute => ({
    method: "GET",
    path: path!,
    tag: "Console pages",
    summary: summary!,
    security: path === "/" || path === "/sign-in" || path === "/setup" || path === "/password"
      ? "none"
      : "session",
    ...(path === "/search"
      ? {
        query: [
          { name: "q", description: "What to look for", schema: string },
          { name: "as", description: "An agent key's id: search as that key sees", schema: string },
        ],
      }
      : {}),
    responses: html,
  })),
  ...["/sign-in", "/sign-out", "/setup", "/password", "/people"].map((path): DocumentedRoute => ({
    method: "POST",
    path,
    tag: "Console pages",
    summary: {
      "/sign-in": "Sign in with email and password (a form post with the CSRF token)",
      "/sign-out": "Sign out: the login token stops working",
      "/setup": "Create the first person (the setup form)",
      "/password": "Set the password of an invitation or reset link",
      "/people": "Add a person (an invitation link) or make a password reset link",
    }[path]!,
    security: path === "/sign-out" || path === "/people" ? "session" : "none",
    responses: html,
  })),
  {
    method: "GET",
    path: "/console/assets/{name}",
    tag: "Console pages",
    summary: "The console's own CSS, scripts and icon",
    security: "none",
    responses: { "text/css": null, "text/javascript": null, "image/svg+xml": null },
  },
  {
    method: "GET",
    path: "/console/vendor/{name}",
    tag: "Console pages",
    summary: "Swagger UI's files (swagger-ui-dist from npm), served by Sergo itself for this page",
    security: "none",
    responses: { "text/css": null, "text/javascript": null },
  },
];
