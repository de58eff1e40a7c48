/**
 * Vector search looks only among the searching person's documents: with two
 * people who uploaded the same file, a search over all of one person's folders
 * (as the console's search and a key reading every folder do) never has the
 * other person's passages among its nearest.
 */
import assert from "node:assert/strict";
import { type Config, loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { nearestPassages } from "../../src/search/vectors.ts";
import { runCli, tempDir } from "../helpers/temp.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { assertAll } from "../helpers/assert_all.ts";
import { startEmbeddingsServer } from "./_embeddings_server.ts";

async function cli(args: string[]): Promise<void> {
  const result = await runCli(args);
  assert.equal(result.code, 0, result.stderr);
}

Deno.test("vector search over all of a person's folders finds only their own passages, never another person's copy of the same file", async () => {
  await using model = await startEmbeddingsServer({ apiKey: "k" });
  await using dir = await tempDir();
  const d = ["--data", dir.path];
  const config: Config = {
    ...loadConfig([...d, "--port", "0"]),
    embeddings: {
      provider: "openai",
      url: model.url,
      model: model.model,
      apiKey: "k",
      prefixes: { query: "", passage: "" },
    },
  };
  const rfc = `${CORPUS_DIR}/text/rfc7754-technical-considerations.txt`;
  for (const [name, email] of [["Ava Bennett", "ava@example.com"], ["Ben Okafor", "ben@example.com"]]) {
    await cli(["person", "add", "--name", name!, "--email", email!, ...d]);
    await cli(["folder", "add", "--person", email!, "Networks", ...d]);
  }
  const server = await startServer(config, { quiet: true });
  try {
    for (const email of ["ava@example.com", "ben@example.com"]) {
      await cli(["upload", "--person", email, "--folder", "Networks", rfc, ...d]);
    }
    const db = server.app.db;
    const start = Date.now();
    while ((db.prepare("SELECT COUNT(*) AS n FROM search_vector_sets").get() as { n: number }).n < 2) {
      assert.ok(Date.now() - start < 60_000, "both copies have vectors within a minute");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const owner = (email: string) =>
      (db.prepare("SELECT person_id FROM cat_people WHERE email = ?").get(email) as { person_id: string })
        .person_id;
    const [query] = await server.services.semantic!.embedder.embed(["internet censorship"], "query");
    for (const email of ["ava@example.com", "ben@example.com"]) {
      const personId = owner(email);
      const own = new Set(
        (db.prepare("SELECT document_id FROM search_documents WHERE person_id = ?").all(personId) as Array<{
          document_id: string;
        }>).map((row) => row.document_id),
      );
      assert.equal(own.size, 1);
      const near = nearestPassages(
        db,
        server.services.semantic!.model,
        {
          personId,
          folderIds: null,
          documentIds: [],
        },
        query!,
        50,
      );
      assertAll(near, (hit) => own.has(hit.document_id), email);
    }
  } finally {
    await server.stop();
  }
});
