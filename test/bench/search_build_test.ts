/**
 * The search benchmark builds its large indexes faster than the projector
 * would (workers analyze, one thread writes): what it builds must be what
 * the search index projection builds from the same events, or its figures
 * would be about another index.
 */
import assert from "node:assert/strict";
import { buildSergoIndex, documentEvents, syntheticDocuments } from "../../bench/search.ts";
import type { CorpusFile } from "../../bench/_corpus_text.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openProjector } from "../../projections/projector.ts";
import { searchIndexProjection } from "../../projections/search_index.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

/** Real text in several languages and scripts, cut into pages of about 40 lines. */
function corpus(): CorpusFile[] {
  return [
    "text/udhr-article-1-all-languages.txt",
    "text/war-and-peace-gutenberg.txt",
    "text/rfc7754-technical-considerations.txt",
  ]
    .map((file) => {
      const lines = Deno.readTextFileSync(`${CORPUS_DIR}/${file}`).split("\n").slice(0, 1200);
      const pages: string[] = [];
      for (let i = 0; i < lines.length; i += 40) pages.push(lines.slice(i, i + 40).join("\n"));
      return { file, pages };
    });
}

Deno.test("the search benchmark's fast builder writes the index the projection writes from the same events", async () => {
  const files = corpus();
  const size = 650;
  const dir = Deno.makeTempDirSync({ prefix: "sergo-search-build-" });
  try {
    await buildSergoIndex(files, size, `${dir}/fast.db`, 2);
    const projector = openProjector(`${dir}/projected.db`, [searchIndexProjection]);
    let position = 1;
    for (const document of syntheticDocuments(files, size)) {
      projector.applyBatch(documentEvents(document, position));
      position += 2;
    }
    const fast = openProjector(`${dir}/fast.db`, [searchIndexProjection]);
    const passages = (fast.db.prepare("SELECT count(*) AS n FROM search_passages").get() as { n: number }).n;
    assert.ok(passages >= size, `${passages} passages`);
    assert.equal(
      projectionDigest(fast.db, [searchIndexProjection]),
      projectionDigest(projector.db, [searchIndexProjection]),
    );
    const checkpoint = (db: typeof fast.db) =>
      db.prepare("SELECT position FROM projection_checkpoints WHERE name = 'search_index'").get();
    assert.deepEqual(checkpoint(fast.db), checkpoint(projector.db));
    fast.close();
    projector.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
