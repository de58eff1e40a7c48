/**
 * Specifications of the search index: given these events, then these searches
 * find these pages. The text comes from the real corpus files.
 */
import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { unzipSync } from "fflate";
import type { EventData, EventType, ProcessedPage, RecordedEvent } from "../../events/types.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openProjector, type Projector } from "../../projections/projector.ts";
import { DEFAULT_ANALYSIS } from "../../src/analysis/analysis.ts";
import {
  analysisVersion,
  createSearchIndexProjection,
  documentImageOnlyPages,
  searchIndexProjection,
} from "../../projections/search_index.ts";
import { type SearchHit, type SearchOptions, searchPassages } from "../../src/search/lexical.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";

const CORPUS = `${CORPUS_DIR}`;

/** The text of each page of a PDF, read with pdftotext. */
async function pdfPages(file: string): Promise<string[]> {
  const output = await new Deno.Command(await needs("pdftotext"), {
    args: [`${CORPUS}/${file}`, "-"],
    stderr: "null",
  })
    .output();
  assert.equal(output.code, 0, `pdftotext failed on ${file}`);
  const pages = new TextDecoder().decode(output.stdout).split("\f");
  if (pages.at(-1)?.trim() === "") pages.pop();
  return pages;
}

/** A Word file's paragraphs with the heading above each, read from word/document.xml. */
function docxChunks(file: string): Array<{ section: string | null; text: string }> {
  const entries = unzipSync(Deno.readFileSync(`${CORPUS}/${file}`), {
    filter: (entry) => entry.name === "word/document.xml" || entry.name === "word/styles.xml",
  });
  const xml = new TextDecoder().decode(entries["word/document.xml"]).replace(/<w:p [^>]*\/>/g, "");
  const styles = new TextDecoder().decode(entries["word/styles.xml"]);
  const headingIds = new Set(
    [...styles.matchAll(/<w:style [^>]*w:styleId="([^"]+)"[^>]*>\s*<w:name w:val="([^"]+)"/g)]
      .filter((m) => /^(heading \d|title)$/i.test(m[2]!))
      .map((m) => m[1]!),
  );
  const chunks: Array<{ section: string | null; text: string }> = [];
  let section: string | null = null;
  let body: string[] = [];
  const flush = () => {
    if (body.length > 0) chunks.push({ section, text: body.join("\n") });
    body = [];
  };
  for (const paragraph of xml.match(/<w:p[ >][\s\S]*?<\/w:p>/g) ?? []) {
    const text = [...paragraph.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]).join("")
      .replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"');
    if (!text.trim()) continue;
    const style = paragraph.match(/<w:pStyle w:val="([^"]+)"/)?.[1];
    if (style && headingIds.has(style)) {
      flush();
      section = text;
    } else body.push(text);
  }
  flush();
  return chunks;
}

function pagesOf(texts: string[], marked: number[] = []): ProcessedPage[] {
  return texts.map((text, index) => ({
    page: index + 1,
    text,
    marked: marked.includes(index + 1),
    image_only: marked.includes(index + 1) && text.trim() === "",
  }));
}

/** An event log in memory, applied to a fresh projection database. */
class Given {
  readonly events: RecordedEvent[] = [];
  readonly projector: Projector = openProjector(":memory:", [searchIndexProjection]);

  add<T extends EventType>(type: T, data: EventData<T>): this {
    const position = this.events.length + 1;
    const event = {
      type,
      data,
      metadata: { time: "2026-01-01T00:00:00.000Z" },
      position,
      stream: `test-${position}`,
      stream_version: 1,
      schema_version: 1,
      prev_hash: "0".repeat(64),
      hash: "0".repeat(64),
    } as RecordedEvent;
    this.events.push(event);
    this.projector.applyBatch([event]);
    return this;
  }

  upload(documentId: string, personId: string, folderId: string | null, name = `${documentId}.pdf`): this {
    return this.add("DocumentUploaded", {
      document_id: documentId,
      person_id: personId,
      folder_id: folderId,
      name,
      type: name.endsWith(".docx") ? "docx" : name.endsWith(".txt") ? "txt" : "pdf",
      size: 1,
      sha256: "a".repeat(64),
      preset: "basic",
    });
  }

  processed(documentId: string, pages: ProcessedPage[], pagesEstimated = false): this {
    return this.add("DocumentProcessed", {
      document_id: documentId,
      preset: "basic",
      page_count: pages.length,
      pages_estimated: pagesEstimated,
      pages,
    });
  }

  search(options: Partial<SearchOptions> & { query: string }): SearchHit[] {
    return searchPassages(this.projector.db, {
      personId: "ava",
      folderIds: null,
      documentIds: [],
      depth: 50,
      ...options,
    });
  }

  /** "document:page" of the first hits. */
  top(options: Partial<SearchOptions> & { query: string }, count = 3): string[] {
    return this.search(options).slice(0, count).map((hit) => `${hit.document_id}:${hit.page}`);
  }
}

Deno.test("search finds the page that answers a question in English papers", async () => {
  const given = new Given()
    .upload("tracemon", "ava", "papers")
    .processed("tracemon", pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf")))
    .upload("dprpaper", "ava", "papers")
    .processed("dprpaper", pagesOf(await pdfPages("pdf/dense-passage-retrieval-paper.pdf")));

  assert.equal(given.top({ query: "What are in-batch negatives?" })[0]?.split(":")[0], "dprpaper");
  assertAll(
    given.top({ query: "How does TraceMonkey handle nested loops with trace trees?" }, 5),
    (hit) => hit.startsWith("tracemon"),
  );
  // Stemming: "specializes" finds "specialization".
  assert.ok(given.search({ query: "specializes types" }).some((hit) => hit.document_id === "tracemon"));
  // Stop words do not decide: a question made of them and one content word finds that word.
  const hits = given.search({ query: "what is the in of to a BM25" });
  assert.ok(hits.length > 0);
  assertAll(hits, (hit) => /bm25/i.test(hit.text), "every hit holds BM25");
  // The excerpt is the text as extracted, not the folded one.
  assert.ok(hits.some((hit) => hit.text.includes("BM25")));
});

Deno.test("a long page becomes several excerpts that keep the original text", () => {
  const paragraph = "Passage retrieval selects candidate contexts for a reader. ".repeat(12);
  const long = Array.from({ length: 6 }, (_, i) => `Paragraph ${i + 1}. ${paragraph}`).join("\n\n");
  const given = new Given().upload("longpage", "ava", "f").processed("longpage", pagesOf([long]));
  const hits = given.search({ query: "candidate contexts" });
  assert.ok(hits.length >= 3, `expected several excerpts, got ${hits.length}`);
  for (const hit of hits) {
    assert.ok(hit.text.length <= 1800);
    assert.ok(long.includes(hit.text));
    assert.equal(hit.page, 1);
  }
});

Deno.test("search never leaves the person's scope", async () => {
  const pages = pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf"));
  const given = new Given()
    .upload("ava-doc", "ava", "ava-papers")
    .processed("ava-doc", pages)
    .upload("ben-doc", "ben", "ben-papers")
    .processed("ben-doc", pages)
    .upload("ava-root", "ava", null)
    .processed("ava-root", pages)
    .upload("ava-other", "ava", "ava-notes")
    .processed("ava-other", pages);
  const query = "trace trees nested loops";

  const docs = (options: Partial<SearchOptions>) =>
    [...new Set(given.search({ query, ...options }).map((hit) => hit.document_id))].sort();
  // All folders of Ava: never Ben's document, and not the root document unless it is listed.
  assert.deepEqual(docs({}), ["ava-doc", "ava-other"]);
  assert.deepEqual(docs({ documentIds: ["ava-root"] }), ["ava-doc", "ava-other", "ava-root"]);
  // A folder filter.
  assert.deepEqual(docs({ folderIds: ["ava-papers"] }), ["ava-doc"]);
  // Single documents only; Ben's document listed by Ava is still not hers.
  assert.deepEqual(docs({ folderIds: [], documentIds: ["ava-root", "ben-doc"] }), ["ava-root"]);
  // Ava naming Ben's folder finds nothing.
  assert.deepEqual(docs({ folderIds: ["ben-papers"] }), []);
  assert.deepEqual(docs({ folderIds: [], documentIds: [] }), []);
  assert.deepEqual(docs({ personId: "ben" }), ["ben-doc"]);
});

Deno.test("re-processing replaces passages; a failed processing removes them", () => {
  const given = new Given()
    .upload("doc", "ava", "f")
    .processed("doc", pagesOf(["Quarterly revenue of the turbine business.", "Nothing else."]));
  assert.deepEqual(given.top({ query: "turbine revenue" }), ["doc:1"]);

  given.processed("doc", pagesOf(["Cover", "Nothing else.", "Photovoltaic panels and inverters."]));
  assert.deepEqual(given.top({ query: "turbine revenue" }), []);
  assert.deepEqual(given.top({ query: "photovoltaic inverters" }), ["doc:3"]);

  given.add("ProcessingStarted", { document_id: "doc", preset: "basic" });
  assert.deepEqual(
    given.top({ query: "photovoltaic inverters" }),
    ["doc:3"],
    "still findable while re-processing",
  );
  given.add("ProcessingFailed", { document_id: "doc", preset: "basic", reason: "Timed out after 120 s" });
  assert.deepEqual(given.top({ query: "photovoltaic inverters" }), []);
});

Deno.test("moved documents are searched in their new folder; deleted ones are gone", () => {
  const given = new Given()
    .upload("doc", "ava", "inbox")
    .processed("doc", pagesOf(["Geothermal heat pumps in cold climates."]));
  assert.equal(given.search({ query: "geothermal", folderIds: ["inbox"] }).length, 1);

  given.add("DocumentMoved", { document_id: "doc", folder_id: "archive" });
  assert.equal(given.search({ query: "geothermal", folderIds: ["inbox"] }).length, 0);
  assert.equal(given.search({ query: "geothermal", folderIds: ["archive"] }).length, 1);

  given.add("DocumentMoved", { document_id: "doc", folder_id: null });
  assert.equal(given.search({ query: "geothermal" }).length, 0, "root documents need to be listed");
  assert.equal(given.search({ query: "geothermal", documentIds: ["doc"] }).length, 1);

  given.add("DocumentDeleted", { document_id: "doc" });
  assert.equal(given.search({ query: "geothermal", documentIds: ["doc"] }).length, 0);
});

Deno.test("Word chunks carry their section and take real pages after a PDF copy", () => {
  const chunks = docxChunks("docx/markitdown-test-doc.docx");
  assert.ok(chunks.length >= 2, "the Word file has chunks");
  // Estimated pages: two chunks per page.
  const pages: ProcessedPage[] = [];
  for (let i = 0; i < chunks.length; i += 2) {
    const group = chunks.slice(i, i + 2);
    pages.push({
      page: pages.length + 1,
      text: group.map((chunk) => chunk.text).join("\n\n"),
      chunks: group,
      marked: false,
      image_only: false,
    });
  }
  const given = new Given().upload("worddoc", "ava", "f", "test.docx").processed("worddoc", pages, true);
  const last = chunks.at(-1)!;
  const word = last.text.split(/\W+/).filter((w) => w.length > 6).at(-1)!;
  const before = given.search({ query: word }).find((hit) => last.text.includes(hit.text));
  assert.ok(before, `the last chunk is found by "${word}"`);
  assert.equal(before.section, last.section);
  assert.equal(before.page, pages.length);

  // The PDF copy puts every chunk on page 1 except the last, which is on page 9.
  const chunkPages = chunks.map((_, i) => (i === chunks.length - 1 ? 9 : 1));
  given.add("PdfCopyMade", {
    document_id: "worddoc",
    sha256: "b".repeat(64),
    page_count: 9,
    chunk_pages: chunkPages,
  });
  const after = given.search({ query: word }).find((hit) => last.text.includes(hit.text));
  assert.equal(after?.page, 9);
  assert.equal(after?.section, last.section);
  const first = chunks[0]!;
  const firstHit = given.search({ query: first.text.slice(0, 60) }).find((hit) =>
    first.text.includes(hit.text)
  );
  assert.equal(firstHit?.page, 1);
});

Deno.test("speaker notes are searchable but the excerpt is the slide text", () => {
  const given = new Given().upload("deck", "ava", "f", "deck.pptx").processed("deck", [
    { page: 1, text: "Apache Performance Tuning", marked: false, image_only: false },
    {
      page: 2,
      text: "Use mod_cache",
      notes: "Remind the audience about the thundering herd problem.",
      marked: true,
      image_only: false,
    },
  ]);
  const hits = given.search({ query: "thundering herd" });
  assert.equal(hits.length, 1);
  assert.equal(hits[0]!.text, "Use mod_cache");
  assert.equal(hits[0]!.page, 2);
  assert.equal(hits[0]!.marked, true);
});

Deno.test("Chinese is found with natural query words", async () => {
  const given = new Given()
    .upload("zhreport", "ava", "f")
    .processed("zhreport", pagesOf(await pdfPages("pdf/cjk-zh-quarterly-report.pdf")));
  // Page 3 holds the main accounting data, including 营业收入 (operating revenue) for the quarter.
  assert.equal(given.top({ query: "主要会计数据和财务指标" })[0], "zhreport:3");
  // Page 21 is the parent company's cash flow statement (母公司现金流量表).
  assert.equal(given.top({ query: "母公司现金流量表在哪里" })[0], "zhreport:21");
  // A two-character word, and a single character.
  assert.ok(given.search({ query: "股东" }).some((hit) => hit.page === 4));
  assert.ok(given.search({ query: "股" }).some((hit) => hit.page === 4));
});

Deno.test("Arabic, Hebrew, Russian and Japanese are found despite spelling variants", async () => {
  const udhr = Deno.readTextFileSync(`${CORPUS}/text/udhr-article-1-all-languages.txt`).split(/\n\s*\n/);
  const given = new Given()
    .upload("arabic", "ava", "f")
    .processed("arabic", pagesOf(await pdfPages("pdf/arabic-rtl-word-export.pdf")))
    .upload("hebrew", "ava", "f")
    .processed("hebrew", pagesOf(await pdfPages("pdf/hebrew-rtl-word365.pdf")))
    .upload("udhr", "ava", "f", "udhr.txt")
    .processed("udhr", pagesOf(udhr), true);
  const page = (name: string) => udhr.findIndex((block) => block.startsWith(`${name}\n`)) + 1;

  // The PDF extracts المشكلات as المشكالت (lam-alef swapped); the user types it correctly.
  assert.equal(given.top({ query: "حل المشكلات بالبرمجة" })[0], "arabic:1");
  // Harakat in the query, and Persian yeh/kaf for Arabic letters.
  assert.equal(given.top({ query: "البَيَانَات" })[0], "arabic:1");
  assert.equal(given.top({ query: "یولد جمیع الناس احرارا" })[0], `udhr:${page("Arabic, Standard")}`);
  // Niqqud in the query.
  assert.equal(given.top({ query: "יֶלֶד אֲמִיתִי" })[0], "hebrew:1");
  assert.ok(given.top({ query: "בני אדם נולדו בני חורין" }, 5).includes(`udhr:${page("Hebrew")}`));
  // ё and е meet; the question finds the Russian article.
  assert.equal(given.top({ query: "рождаются ли люди свободными?" })[0], `udhr:${page("Russian")}`);
  assert.equal(given.top({ query: "в своём достоинстве" })[0], `udhr:${page("Russian")}`);
  // Japanese without spaces.
  assert.ok(given.top({ query: "理性と良心" }, 5).includes(`udhr:${page("Japanese")}`));
});

Deno.test("hostile queries do not throw", () => {
  const given = new Given().upload("doc", "ava", "f").processed(
    "doc",
    pagesOf(["Electric vehicle sales in China."]),
  );
  const hostile = [
    '"',
    '"""',
    "*",
    "electric*",
    "NEAR(",
    "NEAR(electric vehicle, 2)",
    "AND OR",
    "NOT",
    "(((electric",
    "electric)))",
    "{body}: electric",
    "body:electric",
    "^electric",
    "electric + vehicle - sales",
    "🚗⚡️ electric 🔋",
    "🚗",
    "",
    "   ",
    "\u0000\u0001",
    "x".repeat(10_000),
    "electric vehicle ".repeat(700),
    "'; DROP TABLE search_passages; --",
  ];
  for (const query of hostile) {
    assert.doesNotThrow(() => given.search({ query }), `query ${JSON.stringify(query.slice(0, 40))}`);
  }
  assert.equal(given.search({ query: "NEAR(electric vehicle, 2)" }).length, 1);
  assert.equal(given.search({ query: "🚗⚡️ electric 🔋" }).length, 1);
  assert.equal(given.search({ query: "electric vehicle ".repeat(700) }).length, 1);
  assert.equal(given.search({ query: "" }).length, 0);
});

Deno.test("image-only pages are kept for the result; they have no passages", () => {
  const given = new Given().upload("scan", "ava", "f").processed(
    "scan",
    pagesOf(["", "Some text here", ""], [1, 3]),
  );
  assert.deepEqual(documentImageOnlyPages(given.projector.db, "scan"), [1, 3]);
  assert.deepEqual(given.top({ query: "text" }), ["scan:2"]);
});

Deno.test("the same events give the same digest, in one batch or one by one", async () => {
  const one = new Given()
    .upload("a", "ava", "f")
    .processed("a", pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf")))
    .upload("b", "ava", "g")
    .processed("b", pagesOf(await pdfPages("pdf/cjk-zh-quarterly-report.pdf")))
    .add("DocumentMoved", { document_id: "a", folder_id: "g" })
    .processed("b", pagesOf(await pdfPages("pdf/hebrew-rtl-word365.pdf")))
    .add("DocumentDeleted", { document_id: "a" });
  const other = openProjector(":memory:", [searchIndexProjection]);
  other.applyBatch(one.events);
  assert.equal(
    projectionDigest(other.db, [searchIndexProjection]),
    projectionDigest(one.projector.db, [searchIndexProjection]),
  );
  const empty = openProjector(":memory:", [searchIndexProjection]);
  assert.notEqual(
    projectionDigest(empty.db, [searchIndexProjection]),
    projectionDigest(one.projector.db, [searchIndexProjection]),
  );
});

Deno.test("an index built by another layout or analysis is dropped and rebuilt from the log; the same one is kept", async () => {
  const given = new Given()
    .upload("a", "ava", "f")
    .processed("a", pagesOf(await pdfPages("pdf/tracemonkey-pldi-paper.pdf")))
    .upload("b", "ava", "f")
    .processed("b", pagesOf(await pdfPages("pdf/cjk-zh-quarterly-report.pdf")));
  const query = { personId: "ava", folderIds: null, documentIds: [], depth: 50, query: "trace trees loops" };
  const expected = searchPassages(given.projector.db, query);
  assert.ok(expected.length > 0);
  const digest = projectionDigest(given.projector.db, [searchIndexProjection]);
  const path = Deno.makeTempFileSync({ suffix: ".db" });
  const checkpoints = (projector: Projector) =>
    projector.db.prepare("SELECT name FROM projection_checkpoints ORDER BY name").all()
      .map((row) => (row as { name: string }).name);
  const passages = (projector: Projector) =>
    (projector.db.prepare("SELECT count(*) AS n FROM search_passages").get() as { n: number }).n;
  try {
    let projector = openProjector(path, [searchIndexProjection]);
    projector.applyBatch(given.events);
    const stored = passages(projector);
    projector.close();

    // Opened again by the same code: kept, nothing to rebuild.
    projector = openProjector(path, [searchIndexProjection]);
    assert.equal(passages(projector), stored);
    assert.deepEqual(checkpoints(projector), ["search_index"]);
    // Built by an older layout (the version before passages carried their language).
    projector.db.prepare("UPDATE search_analysis SET version = ?").run(
      `2 ${analysisVersion().split(" ").slice(1).join(" ")}`,
    );
    projector.close();

    projector = openProjector(path, [searchIndexProjection]);
    assert.equal(passages(projector), 0, "the older index is dropped");
    assert.deepEqual(checkpoints(projector), [], "the search index starts again from the first event");
    projector.applyBatch(given.events);
    assert.deepEqual(searchPassages(projector.db, query), expected);
    assert.equal(projectionDigest(projector.db, [searchIndexProjection]), digest);
    projector.close();

    // Another analysis (without stemming) makes other terms: its version differs, and it drops this index.
    const unstemmed = { ...DEFAULT_ANALYSIS, stemming: false };
    assert.notEqual(analysisVersion(unstemmed), analysisVersion());
    projector = openProjector(path, [createSearchIndexProjection(unstemmed)]);
    assert.equal(passages(projector), 0);
    assert.deepEqual(checkpoints(projector), []);
    projector.close();
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        Deno.removeSync(path + suffix);
      } catch {
        // Not made.
      }
    }
  }
});

Deno.test("with many people and a large scope, results stay in scope and agree with the small-scope plan", () => {
  const novel = Deno.readTextFileSync(`${CORPUS}/text/war-and-peace-gutenberg.txt`);
  const plays = Deno.readTextFileSync(`${CORPUS}/text/tiny-shakespeare.txt`);
  const cut = (text: string, size: number) => {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  };
  const given = new Given()
    .upload("novel", "ava", "books", "war-and-peace.txt")
    .processed("novel", pagesOf(cut(novel, 1000)), true)
    .upload("plays", "ava", "books", "shakespeare.txt")
    .processed("plays", pagesOf(cut(plays, 1000)), true);
  for (let person = 0; person < 40; person++) {
    const id = `p${person}`;
    given.upload(id, id, `${id}-folder`).processed(
      id,
      pagesOf(cut(plays.slice(person * 20_000, person * 20_000 + 20_000), 1000)),
    );
  }
  // Ava's scope is large (the novel and the plays): the rare words lead.
  const query = "Prince Andrew wounded at Austerlitz looking at the sky";
  const large = given.search({ query, depth: 20 });
  assert.ok(large.length === 20);
  assertAll(large, (hit) => hit.document_id === "novel");
  assert.ok(/austerlitz/i.test(large[0]!.text) && /sky/i.test(large[0]!.text));
  // Only very common words: passages with all of them, still in scope.
  const common = given.search({ query: "what is the and of", depth: 20 });
  assert.equal(common.length, 20);
  assertAll(common, (hit) => ["novel", "plays"].includes(hit.document_id));
  assertAll(
    common,
    (hit) => /\bthe\b/i.test(hit.text) && /\band\b/i.test(hit.text) && /\bof\b/i.test(hit.text),
  );
  // A person with a small scope gets only their own pages.
  const small = given.search({ personId: "p3", query: "king crown", depth: 20 });
  assert.ok(small.length > 0);
  assertAll(small, (hit) => hit.document_id === "p3");
  // The large plan ranks like the small one where both see the same pages.
  const novelOnly = given.search({ query, folderIds: [], documentIds: ["novel"], depth: 5 });
  assert.deepEqual(large.slice(0, 5).map((hit) => hit.text), novelOnly.map((hit) => hit.text));
});
