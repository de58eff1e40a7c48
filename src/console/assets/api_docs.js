// The API page: Swagger UI (swagger-ui-dist, served by Sergo) draws /api/openapi.json.
// "Try it out" runs as the signed-in person: the session cookie, and the CSRF token changes need.
(() => {
  const csrf = document.querySelector('meta[name="sergo-csrf"]')?.getAttribute("content") ?? "";
  const ui = globalThis.SwaggerUIBundle;
  const root = document.getElementById("swagger-ui");
  if (!ui || !root) {
    if (root) root.textContent = "The API viewer did not load; the document itself is at /api/openapi.json.";
    return;
  }
  ui({
    url: "/api/openapi.json",
    domNode: root,
    presets: [ui.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // No request to a validator elsewhere: everything stays on this server.
    validatorUrl: null,
    defaultModelsExpandDepth: -1,
    docExpansion: "list",
    filter: true,
    requestInterceptor: (request) => {
      if (new URL(request.url, location.href).origin === location.origin) {
        request.headers["X-CSRF-Token"] = csrf;
      }
      return request;
    },
  });
})();
