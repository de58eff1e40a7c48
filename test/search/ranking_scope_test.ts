/**
 * Specifications of ranking isolation (issue 13, item 5): a search's results
 * and their order depend only on the passages in the searcher's scope, so
 * nothing another person uploads, moves or deletes changes them.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { ProcessedPage } from "../../events/types.ts";
import { openProjector } from "../../projections/projector.ts";
import { searchIndexProjection } from "../../projections/search_index.ts";
import { type SearchOptions, searchPassages } from "../../src/search/lexical.ts";
import { type Dictionaries, loadDictionaries } from "../../src/search/dictionaries.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { GivenIndex } from "./_given_index.ts";

async function pdfPages(file: string): Promise<string[]> {
  const output = await new Deno.Command(await needs("pdftotext"), {
    args: [`${CORPUS_DIR}/${file}`, "-"],
    stderr: "null",
  }).output();
  assert.equal(output.code, 0, `pdftotext failed on ${file}`);
  const pages = new TextDecoder().decode(output.stdout).split("\f");
  if (pages.at(-1)?.trim() === "") pages.pop();
  return pages;
}

function pagesOf(texts: string[]): ProcessedPage[] {
  return texts.map((text, index) => ({ page: index + 1, text, marked: false, image_only: false }));
}

class Given extends GivenIndex {
  document(id: string, person: string, folder: string | null, name: string, pages: ProcessedPage[]): this {
    return this.uploaded(id, name, pages, { person, folder });
  }

  /** Every result of a search, in order, as what a user sees of it. */
  results(options: Partial<SearchOptions> & { query: string }): string[] {
    return searchPassages(this.projector.db, {
      personId: "ben",
      folderIds: null,
      documentIds: [],
      depth: 50,
      ...options,
    }).map((hit) => `${hit.document_id}:${hit.page}:${hit.text.slice(0, 60)}`);
  }
}

const ANIMALS = [
  "A quokka was seen near the river bank at dawn, eating leaves.",
  "A wombat dug a burrow under the garden fence during the night.",
  "The ranger counted wombat droppings and one quokka track on the path.",
];

const QUERIES = [
  "quokka wombat",
  "wombat",
  "trace trees nested loops",
  "type specialization of dynamic languages",
  "how does the tracing JIT handle side exits?",
  "SunSpider benchmark speedup",
  "what is the and of",
];

/** Ben's searches before and after Ava's uploads, moves and deletions, with these dictionaries. */
async function nothingOfAvaChangesBen(dictionaries: Dictionaries | null): Promise<void> {
  const paper = pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf"));
  const given = new Given()
    .document("ben-paper", "ben", "ben-papers", "tracemonkey.pdf", paper)
    .document("ben-animals", "ben", "ben-notes", "animals.txt", pagesOf(ANIMALS))
    .document("ben-loose", "ben", null, "loose.txt", pagesOf([ANIMALS[2]!]));
  const scopes: Array<Partial<SearchOptions>> = [
    {},
    { folderIds: ["ben-notes"] },
    { folderIds: [], documentIds: ["ben-loose", "ben-paper"] },
  ];
  const before = scopes.map((scope) =>
    QUERIES.map((query) => given.results({ ...scope, query, dictionaries }))
  );
  assert.ok(before[0]![0]!.length >= 2, "Ben finds his quokka and wombat notes");
  assert.ok(before[0]![2]!.length > 5, "Ben finds his paper");

  // Ava's private files: the same paper, another one, and many pages about quokkas, in folders and loose.
  const quokkas = Array.from(
    { length: 60 },
    (_, i) => `Quokka sighting ${i}: a quokka, then another quokka.`,
  );
  given
    .document("ava-paper", "ava", "ava-papers", "tracemonkey.pdf", paper)
    .document(
      "ava-dpr",
      "ava",
      "ava-papers",
      "dpr.pdf",
      pagesOf(await pdfPages("pdf/dense-passage-retrieval-paper.pdf")),
    )
    .document("ava-quokkas", "ava", "ava-notes", "quokkas.txt", pagesOf(quokkas))
    .document("ava-loose", "ava", null, "quokka-loose.txt", pagesOf(quokkas.slice(0, 20)));
  const afterUploads = scopes.map((scope) =>
    QUERIES.map((query) => given.results({ ...scope, query, dictionaries }))
  );
  assert.deepEqual(afterUploads, before);

  given
    .add("DocumentMoved", { document_id: "ava-quokkas", folder_id: null })
    .add("DocumentDeleted", { document_id: "ava-dpr" });
  assert.deepEqual(
    scopes.map((scope) => QUERIES.map((query) => given.results({ ...scope, query, dictionaries }))),
    before,
  );

  // Ava's own search sees her quokkas: her statistics are hers.
  const ava = searchPassages(given.projector.db, {
    personId: "ava",
    folderIds: null,
    documentIds: ["ava-loose", "ava-quokkas"],
    query: "quokka wombat",
    depth: 5,
    dictionaries,
  });
  assert.ok(ava.length > 0 && ava.every((hit) => hit.document_id.startsWith("ava-")));
}

Deno.test("nothing another person uploads, moves or deletes changes Ben's results or their order", async () => {
  await nothingOfAvaChangesBen(null);
});

Deno.test({
  name: "with the dictionaries on, still nothing another person does changes Ben's results or their order",
  sanitizeResources: false,
  fn: async () => {
    const dictionaries = await loadDictionaries();
    assert.ok(!dictionaries.empty, "the FreeDict packages are installed (see .ci/run)");
    await nothingOfAvaChangesBen(dictionaries);
  },
});

Deno.test("a scope that names another person's folder or document reaches none of its passages", async () => {
  const paper = pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf"));
  const given = new Given()
    .document("ben-animals", "ben", "ben-notes", "animals.txt", pagesOf(ANIMALS))
    .document("ava-paper", "ava", "ava-papers", "tracemonkey.pdf", paper)
    .document(
      "ava-quokkas",
      "ava",
      null,
      "quokkas.txt",
      pagesOf(["One quokka.", "Two quokkas and a wombat."]),
    );
  const alone = given.results({ query: "quokka wombat" });
  const naming = given.results({
    query: "quokka wombat",
    folderIds: ["ben-notes", "ava-papers"],
    documentIds: ["ava-quokkas"],
  });
  assert.deepEqual(naming, alone, "Ava's folder and document add nothing, not even to the statistics");
  assert.deepEqual(given.results({ query: "trace trees", folderIds: ["ava-papers"] }), []);
});

Deno.test("an index from before per-language analysis is dropped and rebuilt from the log", () => {
  const path = Deno.makeTempFileSync({ suffix: ".db" });
  try {
    const old = new DatabaseSync(path);
    old.exec(
      `CREATE TABLE projection_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO projection_checkpoints VALUES ('search_index', 42), ('catalogue', 42);
      CREATE VIRTUAL TABLE search_fts USING fts5 (body, section, notes, scope, content = '',
        tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'");
      CREATE TABLE search_passages (passage_id INTEGER PRIMARY KEY, text TEXT);`,
    );
    old.close();
    const projector = openProjector(path, [searchIndexProjection]);
    const columns = projector.db.prepare("SELECT name FROM pragma_table_info('search_fts')").all()
      .map((row) => (row as { name: string }).name);
    assert.deepEqual(columns, ["body", "heading", "notes", "name", "scope"]);
    const checkpoints = projector.db.prepare("SELECT name FROM projection_checkpoints ORDER BY name").all()
      .map((row) => (row as { name: string }).name);
    assert.deepEqual(checkpoints, ["catalogue"], "the search index starts again from the first event");
    projector.close();
  } finally {
    Deno.removeSync(path);
  }
});

Deno.test("an index built with another analysis is dropped and rebuilt from the log", () => {
  const path = Deno.makeTempFileSync({ suffix: ".db" });
  try {
    const given = openProjector(path, [searchIndexProjection]);
    given.db.exec(
      `INSERT INTO projection_checkpoints VALUES ('search_index', 42), ('catalogue', 42);
      UPDATE search_analysis SET version = '1 an older analysis';
      INSERT INTO search_documents (document_id, person_id, name, type) VALUES ('d', 'ben', 'old.txt', 'txt');`,
    );
    given.close();
    const projector = openProjector(path, [searchIndexProjection]);
    const documents = projector.db.prepare("SELECT count(*) AS n FROM search_documents").get() as {
      n: number;
    };
    assert.equal(documents.n, 0, "the old index's rows are gone");
    const checkpoints = projector.db.prepare("SELECT name FROM projection_checkpoints ORDER BY name").all()
      .map((row) => (row as { name: string }).name);
    assert.deepEqual(checkpoints, ["catalogue"], "the search index starts again from the first event");
    projector.close();
    // Opened again with the same analysis, the index stays.
    const again = openProjector(path, [searchIndexProjection]);
    again.db.exec("INSERT INTO projection_checkpoints VALUES ('search_index', 7)");
    again.close();
    const kept = openProjector(path, [searchIndexProjection]);
    const names = kept.db.prepare("SELECT name FROM projection_checkpoints ORDER BY name").all()
      .map((row) => (row as { name: string }).name);
    assert.deepEqual(names, ["catalogue", "search_index"]);
    kept.close();
  } finally {
    Deno.removeSync(path);
  }
});

Deno.test("a Chinese passage is as long, for BM25, as its words, not its two-character tokens", async () => {
  // Article 1 of the Universal Declaration in English and in Chinese, from the corpus.
  const lines = (await Deno.readTextFile(`${CORPUS_DIR}/text/udhr-article-1-all-languages.txt`)).split("\n");
  const after = (heading: string) => lines[lines.indexOf(heading) + 1]!;
  const english = after("English");
  const chinese = after("Chinese, Mandarin (Simplified)");
  assert.match(chinese, /人人生而自由/);
  const given = new Given()
    .document("en", "ben", "ben-notes", "udhr-en.txt", pagesOf([english]))
    .document("zh", "ben", "ben-notes", "udhr-zh.txt", pagesOf([chinese]));
  const length = (id: string) =>
    (given.projector.db.prepare("SELECT length FROM search_passages WHERE document_id = ?").get(id) as {
      length: number;
    }).length;
  // 41 characters give 35 tokens, which would make the Chinese sentence longer than the English one's
  // 30 words, and a Chinese page several times as long as an English page of the same content.
  assert.ok(length("zh") < length("en"), `Chinese ${length("zh")}, English ${length("en")}`);
  assert.ok(length("zh") >= 15, "every Chinese word still counts");
  given.projector.close();
});
