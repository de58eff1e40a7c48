/** @jsxImportSource preact */
/**
 * The API page: the OpenAPI document of every route Sergo answers, drawn by
 * Swagger UI from `/api/openapi.json`.
 *
 * @module
 */
import type { VNode } from "preact";
import { Layout, type PageContext } from "./layout.tsx";

/** The API page. */
export function ApiDocsPage({ context }: { context: PageContext }): VNode {
  return (
    <Layout
      context={context}
      title="API"
      scripts={["api_docs.js"]}
      vendor={{ scripts: ["swagger-ui-bundle.js"], styles: ["swagger-ui.css"] }}
    >
      <header class="page-head">
        <div>
          <h1>API</h1>
          <p class="muted">
            Every route Sergo answers: the REST API (with a personal key as{" "}
            <code>Authorization: Bearer</code>, or signed in here), search, the audit and its export, MCP,
            OAuth and these pages. The document itself is <a href="/api/openapi.json">/api/openapi.json</a>
            {" "}
            (OpenAPI 3.1). Settings, limits and how to connect each agent app are in the repository's{" "}
            <code>docs/</code> folder (<code>docs/configuration.md</code>, <code>docs/security.md</code>,{" "}
            <code>docs/connecting-agents.md</code>).
          </p>
        </div>
      </header>
      <div id="swagger-ui" class="api-viewer"></div>
    </Layout>
  );
}
