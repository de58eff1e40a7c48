/**
 * Specifications of how an English question's words are translated
 * (`src/search/translation.ts`): which index terms a translation is looked
 * for under, and which words are not translated at all. Given a few pages,
 * one page each, and a small dictionary made here.
 */
import assert from "node:assert/strict";
import { analyze, queryTerms } from "../../src/analysis/analysis.ts";
import { Dictionaries } from "../../src/search/dictionaries.ts";
import { lexicalSearch } from "../../src/search/lexical.ts";
import { translateTerms } from "../../src/search/translation.ts";
import { GivenIndex } from "./_given_index.ts";

class Given extends GivenIndex {
  /** Ben's document of one page. */
  page(id: string, text: string): this {
    return this.uploaded(id, `${id}.pdf`, [text]);
  }

  /** The documents a search of Ben's files finds, best first. */
  found(query: string, dictionaries: Dictionaries | null): string[] {
    const hits = lexicalSearch(this.projector.db, {
      personId: "ben",
      folderIds: null,
      documentIds: [],
      depth: 50,
      query,
      dictionaries,
    });
    return [...new Set(hits.map((hit) => hit.document_id))];
  }
}

/** An English→German dictionary of these English words (as the dictionaries key them: by their stem). */
function englishGerman(entries: Record<string, string[]>): Dictionaries {
  const dictionaries = new Dictionaries();
  const stems = Object.entries(entries).map(([word, words]) =>
    [analyze(word, undefined, "en")[0]!, words] as const
  );
  dictionaries.add({ pair: "en→de", source: "test", words: 0 }, new Map(stems));
  return dictionaries;
}

/** The pages, by document id (ids that no question's word matches, as file names are searched too). */
const PAGES = {
  "de-1": "Das Heer marschierte in der Nacht über die Brücke nach Norden.",
  "en-1": "He said that the bridge was closed in the morning.",
  "de-2": "Der Weg und die Straße sind am Abend wieder offen.",
  "de-3": "Jene Brücke und die Straße sind seit Montag gesperrt.",
  "en-2": "That bridge has been closed since Monday.",
};

function given(): Given {
  const index = new Given();
  for (const [id, text] of Object.entries(PAGES)) index.page(id, text);
  return index;
}

Deno.test("a German translation is looked for as German pages index it, not as French rules stem it", () => {
  // French rules make "heer" (army) "he": an English page holding "he" is not about an army.
  const dictionaries = englishGerman({ army: ["heer"] });
  const [army] = translateTerms(queryTerms("army"), "army", dictionaries);
  assert.ok(army!.terms.includes("heer"), `the German stem is searched: ${army!.terms}`);
  assert.ok(!army!.terms.includes("he"), `not the French rules' stem: ${army!.terms}`);
  assert.deepEqual(given().found("army", dictionaries), ["de-1"]);
});

Deno.test("a question's stop words are not translated, and a translation that is a stop word is not searched", () => {
  const dictionaries = englishGerman({ that: ["jene"], army: ["heer", "der"] });
  // A question of stop words only keeps them, and finds the pages that hold them in English.
  const that = translateTerms(queryTerms("that"), "that", dictionaries);
  assert.deepEqual(that, queryTerms("that"), "a stop word is searched as asked");
  assert.deepEqual(given().found("that", dictionaries), ["en-2", "en-1"], "not the page of jene (those)");
  // "der", a translation of army, would match every German page.
  assert.deepEqual(given().found("army", dictionaries), ["de-1"]);
  assert.deepEqual(given().found("army", null), [], "without the dictionary, army finds no page");
});
