/**
 * Writes docs/snippets.md from the console's snippets (src/console/assets/snippets.js),
 * so the docs and the console show the same text: `deno task snippets-docs`.
 * test/console/snippets_test.ts fails when the file is out of date.
 *
 * @module
 */
import "../../src/console/assets/snippets.js";
import { EXAMPLE_STDIO } from "./_docs_paths.ts";

const { snippetsMarkdown } = (globalThis as unknown as {
  SergoSnippets: { snippetsMarkdown(name: string, url: string, stdio: typeof EXAMPLE_STDIO): string };
}).SergoSnippets;

await Deno.writeTextFile(
  new URL("../../docs/snippets.md", import.meta.url),
  snippetsMarkdown("energy-outlooks", "https://sergo.example.com", EXAMPLE_STDIO),
);
