/**
 * Replay rebuilds the search index exactly: the digest covers the full-text
 * index (its terms and each passage's token counts), so an index that lost or
 * mixed up passages digests differently, and after `main.ts replay` every
 * search gives the same answers as before it.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { searchPassages } from "../../src/search/lexical.ts";
import { openApp } from "../../src/app.ts";
import { deleteDocument, uploadFile } from "../../src/domain/documents.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const QUERIES = [
  "trace-based JIT compilation",
  "row and column access control",
  "MarkItDown converts files to Markdown",
  "tables charts and figures",
  "der Vertrag",
];

Deno.test({
  name: "after main.ts replay the digest is the same and every search gives the same answers",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir("sergo-replay-search-");
    const app = await openApp(dir.path);
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const folder = await createFolder(
      app,
      { personId: ava.person_id, parentId: null, name: "Papers" },
      "cli",
    );
    const ids: string[] = [];
    for (
      const file of [
        "pdf/tracemonkey-pldi-paper.pdf",
        "pdf/ibm-redbook-db2-rcac-sampled.pdf",
        "pptx/markitdown-test-deck-chart-table.pptx",
        "text/markitdown-readme.md",
      ]
    ) {
      const tempPath = await Deno.makeTempFile();
      await Deno.copyFile(`${CORPUS_DIR}/${file}`, tempPath);
      const row = await uploadFile(
        app,
        { personId: ava.person_id, folderId: folder.folder_id, name: file.split("/")[1]!, tempPath },
        "cli",
      );
      ids.push(row.document_id);
    }
    const pool = createExtractionPool({ concurrency: 1 });
    try {
      const worker = new ProcessingWorker(app, pool, { workerId: "test", concurrency: 1 });
      worker.kick();
      await worker.drain();
    } finally {
      await pool.close();
    }
    // A deletion in the middle, so passage ids are not simply consecutive.
    await deleteDocument(app, { personId: ava.person_id, documentId: ids[1]! }, "cli");
    const answers = (db: DatabaseSync) =>
      QUERIES.map((query) =>
        searchPassages(db, {
          personId: ava.person_id,
          folderIds: [folder.folder_id],
          documentIds: [],
          query,
          depth: 50,
        }).map((hit) => `${hit.document_id}:${hit.page}:${hit.text.slice(0, 60)}`)
      );
    const before = answers(app.db);
    assert.ok(before.slice(0, 3).every((hits) => hits.length > 0), JSON.stringify(before));
    const live = projectionDigest(app.db, ALL_PROJECTIONS);
    await app.close();

    const replay = await runCli(["replay", "--data", dir.path]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.stdout.trim(), live);
    const reopened = await openApp(dir.path);
    try {
      assert.deepEqual(answers(reopened.db), before);
    } finally {
      await reopened.close();
    }

    // A passage missing from the full-text index (its row in search_passages kept): the digest must see it.
    const db = new DatabaseSync(join(dir.path, "projections.db"));
    try {
      const { passage_id } = db.prepare(
        "SELECT passage_id FROM search_passages WHERE document_id = ? ORDER BY passage_id LIMIT 1",
      ).get(ids[0]!) as { passage_id: number };
      db.prepare("DELETE FROM search_fts WHERE rowid = ?").run(passage_id);
      assert.notEqual(projectionDigest(db, ALL_PROJECTIONS), live);
    } finally {
      db.close();
    }
  },
});
