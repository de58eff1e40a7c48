/**
 * What the REST API is handed when the server is composed
 * (`src/server/services.ts` builds it).
 *
 * @module
 */
import type { DocumentRow } from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import type { Config } from "../config.ts";
import type { McpDeps } from "../mcp/endpoint.ts";

/** What the API is built over. */
export interface ApiDeps {
  app: SergoApp;
  config: Pick<Config, "maxUploadBytes">;
  /** A page of a document as a PNG or one-page PDF, from the PDF or its copy (`domain/page_pictures.ts`). */
  pagePicture(doc: DocumentRow, page: number, format: "image" | "pdf"): Promise<Uint8Array>;
  /** The audit routes under `/api/audit` (`audit/routes.ts`); null when the path is not one of them. */
  audit(request: Request, personId: string): Promise<Response | null>;
  /** Whether a cookie-authenticated change carries the CSRF token (`auth/csrf.ts`). */
  checkCsrf(request: Request): boolean;
  /** What the search route runs the MCP search tool with. */
  mcpDeps: McpDeps;
}
