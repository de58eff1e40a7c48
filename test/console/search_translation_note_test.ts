/**
 * The console's search page says which languages an English question also
 * finds pages in (the installed dictionaries' pairs), or that cross-language
 * search is off.
 */
import assert from "node:assert/strict";
import { render } from "preact-render-to-string";
import { SearchPage } from "../../src/console/pages/search_page.tsx";

const context = {
  csrf: "c".repeat(16),
  person: { name: "Ben", email: "ben@example.org" },
  path: "/search",
  assetVersion: "1",
};

Deno.test("the search page names the languages English questions are translated into, or says it is off", () => {
  const on = render(
    SearchPage({ context, keys: [], result: null, translations: ["en→de", "en→ja", "en→ru", "en→ru"] }),
  );
  assert.match(on, /An English question also finds pages in German, Japanese, Russian:/);
  const off = render(SearchPage({ context, keys: [], result: null, translations: [] }));
  assert.match(off, /Cross-language search is off: no bilingual dictionary is installed\./);
  const failed = render(SearchPage({
    context,
    keys: [],
    result: null,
    translations: [],
    translationsOff:
      "Cross-language search is off: the dictionaries in /usr/share/dictd could not be read (disk full).",
  }));
  assert.match(failed, /could not be read \(disk full\)\./);
  assert.doesNotMatch(failed, /no bilingual dictionary is installed/);
});
