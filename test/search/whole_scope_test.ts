/**
 * Specifications of two shortcuts of the ranking's full-text queries that must not change a result: a
 * search whose scope holds every passage of the index leaves the scope's tokens out, and a common term's
 * newest passages (the ones it was counted by) are not looked for again among the drivers' passages.
 */
import assert from "node:assert/strict";
import { DF_CAP, type SearchOptions, searchPassages } from "../../src/search/lexical.ts";
import { GivenIndex } from "./_given_index.ts";

const PAGES_PER_DOCUMENT = 100;
const DOCUMENTS = 50;
/** Every this many pages holds the rare word beside the common one. */
const RARE_EVERY = 25;

class Given extends GivenIndex {
  document(id: string, person: string, folder: string | null, texts: string[]): this {
    return this.uploaded(id, `${id}.txt`, texts, { person, folder });
  }

  /** Every result of a search of Ben's, in order, with its score. */
  results(options: Partial<SearchOptions> = {}): string[] {
    return searchPassages(this.projector.db, {
      personId: "ben",
      folderIds: null,
      documentIds: [],
      query: "quokka wombat",
      depth: 10,
      dictionaries: null,
      ...options,
    }).map((hit) => `${hit.document_id}:${hit.page}:${hit.rank}`);
  }
}

const FOLDERS = ["folder-0", "folder-1", "folder-2", "folder-3", "folder-4"];

/** Ben's 5,000 pages in five folders, oldest first: every one says "wombat", every 25th "quokka" too. */
function bensLibrary(): Given {
  const given = new Given();
  for (let d = 0; d < DOCUMENTS; d++) {
    const texts = Array.from(
      { length: PAGES_PER_DOCUMENT },
      (_, p) =>
        p % RARE_EVERY === 0
          ? "A quokka and a wombat met by the river."
          : `A wombat dug burrow ${d * PAGES_PER_DOCUMENT + p} under the fence.`,
    );
    given.document(`d${String(d).padStart(3, "0")}`, "ben", `folder-${d % 5}`, texts);
  }
  return given;
}

Deno.test("a common word's passages older than the newest it was counted by still count for the rare word's passages", () => {
  assert.ok(DOCUMENTS * PAGES_PER_DOCUMENT > DF_CAP, "wombat is in more passages than are counted");
  const given = bensLibrary();
  const results = given.results();
  // Every quokka page holds both words in the same text, so all score alike and the oldest documents come
  // first; had the oldest pages' wombat been missed, they would have scored lower and been left out.
  assert.equal(results.length, 10);
  assert.equal(new Set(results.map((result) => result.split(":")[2])).size, 1, results.join("\n"));
  assert.deepEqual(
    results.map((result) => result.split(":").slice(0, 2).join(":")),
    [
      "d000:1",
      "d000:26",
      "d000:51",
      "d000:76",
      "d001:1",
      "d001:26",
      "d001:51",
      "d001:76",
      "d002:1",
      "d002:26",
    ],
  );
});

Deno.test("a scope of every passage finds what the same folders named one by one find", () => {
  const given = bensLibrary();
  assert.deepEqual(given.results({ folderIds: FOLDERS }), given.results());
});

// Files of people whose ids sort before and after Ben's, and a file of Ben's outside any folder, each
// holding the words and named to come first: none is in the scope of Ben's every folder.
for (
  const [whose, person, folder] of [["Ava's", "ava", "ava-notes"], ["Cy's", "cy", "cy-notes"], [
    "Ben's loose",
    "ben",
    null,
  ]] as const
) {
  Deno.test(`${whose} file changes nothing in a search of Ben's every folder`, () => {
    const given = bensLibrary();
    const before = given.results();
    given.document("a-other", person, folder, Array.from({ length: 30 }, () => "A quokka and a wombat."));
    assert.deepEqual(given.results(), before);
    assert.deepEqual(given.results({ folderIds: FOLDERS }), before);
  });
}
