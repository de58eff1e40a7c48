/**
 * The example install paths docs/snippets.md shows in its stdio snippet (the
 * console shows the server's own, to administrators only).
 *
 * @module
 */

/** Where the docs' example install keeps Deno, the project and its data. */
export const EXAMPLE_STDIO = {
  deno: "/usr/local/bin/deno",
  config: "/srv/sergo/deno.json",
  main: "/srv/sergo/main.ts",
  data: "/srv/sergo/data",
};
