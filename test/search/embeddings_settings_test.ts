/**
 * The embedding settings through the real entry point: a bad value stops
 * `serve` with one clear line, a good one turns semantic search on and
 * `/healthz` says which search is in use.
 */
import assert from "node:assert/strict";
import { runCli, TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { startEmbeddingsServer } from "./_embeddings_server.ts";
import { gloveModelDir } from "./_glove_model.ts";
import { within } from "../helpers/wait.ts";

async function refused(env: Record<string, string>, message: RegExp): Promise<void> {
  await using dir = await tempDir();
  const result = await runCli(["serve", "--data", dir.path, "--port", "0"], { env });
  assert.equal(result.code, 2, result.stderr);
  const lines = result.stderr.trim().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, message);
  assert.equal(result.stdout, "");
}

Deno.test("bad embedding settings stop serve with one clear line", async () => {
  await refused(
    { SERGO_EMBEDDINGS_URL: "http://127.0.0.1:1/v1" },
    /SERGO_EMBEDDINGS_URL needs SERGO_EMBEDDINGS_MODEL/,
  );
  await refused(
    { SERGO_EMBEDDINGS_URL: "ftp://models.example/v1", SERGO_EMBEDDINGS_MODEL: "e5" },
    /SERGO_EMBEDDINGS_URL "ftp:\/\/models.example\/v1" must be an http or https URL/,
  );
  await refused({ SERGO_EMBEDDINGS_MODEL: "e5" }, /need SERGO_EMBEDDINGS_URL/);
  await refused({ SERGO_EMBEDDINGS_MODEL_DIR: "/nonexistent/e5" }, /"\/nonexistent\/e5" is not a directory/);
  await using empty = await tempDir();
  await refused(
    { SERGO_EMBEDDINGS_MODEL_DIR: empty.path },
    /has no onnx\/model.onnx or onnx\/model_quantized.onnx/,
  );
  await refused(
    {
      SERGO_EMBEDDINGS_URL: "http://127.0.0.1:1/v1",
      SERGO_EMBEDDINGS_MODEL: "e5",
      SERGO_EMBEDDINGS_MODEL_DIR: empty.path,
    },
    /Set SERGO_EMBEDDINGS_URL or SERGO_EMBEDDINGS_MODEL_DIR, not both/,
  );
  await refused(
    { SERGO_EMBEDDINGS_MODEL_DIR: empty.path, SERGO_EMBEDDINGS_QUERY_PREFIX: "x".repeat(101) },
    /at most 100/,
  );
  await refused(
    {
      SERGO_EMBEDDINGS_URL: "http://127.0.0.1:1/v1",
      SERGO_EMBEDDINGS_MODEL: "e5",
      SERGO_EMBEDDINGS_MIN_SIMILARITY: "high",
    },
    /SERGO_EMBEDDINGS_MIN_SIMILARITY must be a cosine similarity from -1 to 1, got "high"/,
  );
  await refused(
    {
      SERGO_EMBEDDINGS_URL: "http://127.0.0.1:1/v1",
      SERGO_EMBEDDINGS_MODEL: "e5",
      SERGO_EMBEDDINGS_MIN_SIMILARITY: "1.5",
    },
    /from -1 to 1, got "1.5"/,
  );
  await refused({ SERGO_EMBEDDINGS_MIN_SIMILARITY: "0.8" }, /SERGO_EMBEDDINGS_MIN_SIMILARITY needs a model/);
});

/** Runs `main.ts serve` with `env` until its /healthz answers; returns what it says about search. */
async function searchHealth(env: Record<string, string>): Promise<Record<string, unknown>> {
  await using dir = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dir.path,
      "--port",
      "0",
    ],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!/ at (https?:\/\/\S+)/.test(out)) {
      const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
      assert.ok(!done, `serve stopped: ${out}`);
      out += value;
    }
    reader.releaseLock();
    const url = out.match(/ at (https?:\/\/\S+)/)![1]!;
    const health = await (await fetch(`${url}/healthz`)).json() as {
      ok: boolean;
      search: Record<string, unknown>;
    };
    assert.equal(health.ok, true);
    return health.search;
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
}

Deno.test("/healthz says which search is in use: lexical, an endpoint's model, or a local ONNX model", async () => {
  assert.deepEqual(await searchHealth({}), { mode: "lexical" });
  await using model = await startEmbeddingsServer({ apiKey: "k-123" });
  const overHttp = await searchHealth({
    SERGO_EMBEDDINGS_URL: model.url,
    SERGO_EMBEDDINGS_MODEL: model.model,
    SERGO_EMBEDDINGS_API_KEY: "k-123",
  });
  assert.deepEqual(overHttp, {
    mode: "hybrid",
    provider: "openai",
    model: "openai:glove-sif-60k",
    min_similarity: 0,
    documents: { with_vectors: 0, waiting: 0 },
  });
  const local = await searchHealth({
    SERGO_EMBEDDINGS_MODEL_DIR: await gloveModelDir(),
    SERGO_EMBEDDINGS_QUERY_PREFIX: "query: ",
    SERGO_EMBEDDINGS_PASSAGE_PREFIX: "passage: ",
    SERGO_EMBEDDINGS_MIN_SIMILARITY: "0.7",
  });
  assert.equal(local.provider, "onnx");
  assert.equal(local.min_similarity, 0.7, "the similarity floor is the one set");
  assert.match(local.model as string, /^onnx:glove-sif-60k:[0-9a-f]{16} passage-prefix="passage: "$/);
});
