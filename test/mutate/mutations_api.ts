/**
 * Planted bugs of the console's route table (issue 30: the console became a
 * table of routes like the REST API's): the checks its dispatcher makes for
 * every route, and the id a page's path takes.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const ROUTES = "test/console/routes_test.ts";

/** The route table's entries. */
export const MUTATIONS_API: Mutation[] = [
  {
    name: "console routes: a page's other methods taken before the sign-in check",
    file: "src/console/console.ts",
    from:
      'if (route.access === "person" && !route.methods.includes(request.method)) return methodNotAllowed();',
    to: "",
    tests: [ROUTES],
  },
  {
    name: "console routes: the administrators' page answers any method",
    file: "src/console/console.ts",
    from: "  if (!route.methods.includes(request.method)) return methodNotAllowed();\n",
    to: "\n",
    tests: [ROUTES],
  },
  {
    name: "console routes: a missing document or key is the server's error, not the not-found page",
    file: "src/console/console.ts",
    from: 'if (route.back === undefined || !(error instanceof DomainError) || error.code !== "not_found") {',
    to: "if (true) {",
    tests: [ROUTES],
  },
  {
    name: "console routes: an id of 65 characters taken as a page",
    file: "src/console/console.ts",
    from: 'const ID = "([A-Za-z0-9_-]{1,64})";',
    to: 'const ID = "([A-Za-z0-9_-]{1,65})";',
    tests: [ROUTES],
  },
];
