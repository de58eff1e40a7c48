/**
 * With a model on, a question near nothing in the documents answers
 * "Nothing matched." when the nearest passages are below the similarity
 * floor (`SERGO_EMBEDDINGS_MIN_SIMILARITY`), and a related question still gets
 * its nearest passages. Real corpus files through the real projections, vectors from
 * the tests' model (GloVe as an ONNX encoder, see `_glove_model.ts`).
 */
import assert from "node:assert/strict";
import type { EventData, EventType, RecordedEvent } from "../../events/types.ts";
import { openProjector } from "../../projections/projector.ts";
import { searchIndexProjection } from "../../projections/search_index.ts";
import { searchPassages } from "../../src/search/lexical.ts";
import { passageInputs, searchVectorsProjection } from "../../projections/search_vectors.ts";
import { onnxEmbedder } from "../../src/search/embedders/onnx.ts";
import { SemanticSearch } from "../../src/search/semantic.ts";
import { packVectors } from "../../src/search/vectors.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { gloveModelDir } from "./_glove_model.ts";

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

Deno.test("with a model on, a question near nothing answers nothing; a related one still gets its nearest passages", async () => {
  const embedder = await onnxEmbedder(await gloveModelDir(), { query: "", passage: "" });
  const projector = openProjector(":memory:", [searchIndexProjection, searchVectorsProjection]);
  try {
    let position = 0;
    const add = <T extends EventType>(type: T, data: EventData<T>) =>
      projector.applyBatch([{
        type,
        data,
        metadata: { time: "2026-01-01T00:00:00.000Z" },
        position: ++position,
        stream: `test-${position}`,
        stream_version: 1,
        schema_version: 1,
        prev_hash: "0".repeat(64),
        hash: "0".repeat(64),
      } as RecordedEvent]);
    const files = {
      stories: await pdfPages("pdf/pd-kids-public-domain-stories.pdf"),
      readme: [await Deno.readTextFile(`${CORPUS_DIR}/text/markitdown-readme.md`)],
    };
    for (const [id, pages] of Object.entries(files)) {
      add("DocumentUploaded", {
        document_id: id,
        person_id: "ava",
        folder_id: "stories",
        name: `${id}.pdf`,
        type: "pdf",
        size: 1,
        sha256: "a".repeat(64),
        preset: "basic",
      });
      add("DocumentProcessed", {
        document_id: id,
        preset: "basic",
        page_count: pages.length,
        pages_estimated: false,
        pages: pages.map((text, i) => ({ page: i + 1, text, marked: false, image_only: false })),
      });
      const inputs = passageInputs(projector.db, id);
      const vectors = await embedder.embed(inputs.texts, "passage");
      add("PassagesEmbedded", {
        document_id: id,
        model: embedder.model,
        dimensions: vectors[0]!.length,
        passages: vectors.length,
        text_sha256: inputs.sha256,
        vectors: packVectors(vectors, vectors[0]!.length),
      });
    }
    const scope = { personId: "ava", folderIds: null, documentIds: [], depth: 50 };
    const search = (semantic: SemanticSearch, query: string) =>
      semantic.search(projector.db, { ...scope, query }).then((hits) => hits.map((hit) => hit.document_id));
    const lexicalOnly = (query: string) =>
      searchPassages(projector.db, { ...scope, query }).map((hit) => hit.document_id);
    const related = "a little girl and her grandmother";
    const unrelated = "basketball playoffs";
    // Nothing in the stories or the readme is about basketball: not one word matches.
    assert.deepEqual(lexicalOnly(unrelated), []);

    // Without a floor, the nearest passages answer any question, even one about nothing here.
    const floorless = new SemanticSearch(embedder, { minSimilarity: -1 });
    assert.ok((await search(floorless, unrelated)).length > 0);

    // With a floor between the two questions' nearest cosines, the unrelated one finds nothing
    // ("Nothing matched."), while the related one's nearest passages still join its lexical results.
    const nearest = async (query: string) =>
      (await floorless.candidates(projector.db, { ...scope, query })).semantic[0]!.similarity;
    const [near, far] = [await nearest(related), await nearest(unrelated)];
    assert.ok(near > far + 0.1, `cosines: related ${near}, unrelated ${far}`);
    const floored = new SemanticSearch(embedder, { minSimilarity: (near + far) / 2 });
    assert.deepEqual(await search(floored, unrelated), []);
    const fused = await search(floored, related);
    assert.equal(fused[0], "stories");
    assert.notDeepEqual(fused, lexicalOnly(related), "the vectors' passages joined the lexical ones");
  } finally {
    projector.close();
    await embedder.close();
  }
});
