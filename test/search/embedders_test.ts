/**
 * The embedding providers on a real model: the in-process ONNX model knows a
 * paraphrase from an unrelated sentence, the HTTP provider gives the same
 * vectors through a local OpenAI-shaped server, and every failure of the
 * endpoint is one clear sentence. Also: packing and fusion.
 */
import assert from "node:assert/strict";
import { onnxEmbedder } from "../../src/search/embedders/onnx.ts";
import { embeddingsEndpoint, openAiEmbedder } from "../../src/search/embedders/openai.ts";
import { reciprocalRankFusion } from "../../src/search/fusion.ts";
import { packVectors } from "../../src/search/vectors.ts";
import { vectorRow } from "../../projections/search_vectors.ts";
import { startEmbeddingsServer } from "./_embeddings_server.ts";
import { gloveModelDir } from "./_glove_model.ts";

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const noPrefixes = { query: "", passage: "" };
const sentences = [
  "The physician examined the patient carefully",
  "A doctor looked at the sick person",
  "Quarterly revenue grew by ten percent",
];

Deno.test("the ONNX model in a local directory loads and embeds: a paraphrase is nearer than an unrelated sentence", async () => {
  const embedder = await onnxEmbedder(await gloveModelDir(), noPrefixes);
  try {
    assert.equal(embedder.provider, "onnx");
    const [doctor, paraphrase, revenue] = await embedder.embed(sentences, "passage");
    assert.equal(doctor!.length, 100);
    assert.ok(Math.abs(cosine(doctor!, doctor!) - 1) < 1e-5, "normalised");
    assert.ok(cosine(doctor!, paraphrase!) > cosine(doctor!, revenue!) + 0.2);
    // Words the model does not know give no direction at all; packing keeps that as a zero vector.
    const [unknown] = await embedder.embed(["深鹰集团"], "query");
    const row = vectorRow(packVectors([unknown!, doctor!], 100), 2, 100)!;
    const norms = new Float32Array(row.buffer, 0, 2);
    assert.equal(norms[0], 0);
    assert.ok(norms[1]! > 0);
  } finally {
    await embedder.close();
  }
});

Deno.test("the HTTP provider gives the same model's vectors through a local /v1/embeddings server", async () => {
  await using server = await startEmbeddingsServer({ apiKey: "secret-key" });
  const local = await onnxEmbedder(await gloveModelDir(), noPrefixes);
  try {
    const remote = openAiEmbedder({
      url: server.url,
      model: server.model,
      apiKey: "secret-key",
      prefixes: noPrefixes,
      batchSize: 2,
    });
    assert.equal(remote.model, "openai:glove-sif-60k");
    const overHttp = await remote.embed(sentences, "passage");
    const inProcess = await local.embed(sentences, "passage");
    assert.equal(server.requests, 2, "three texts in batches of two");
    overHttp.forEach((vector, i) => assert.ok(cosine(vector, inProcess[i]!) > 0.99999));

    const wrongKey = openAiEmbedder({
      url: server.url,
      model: server.model,
      apiKey: "nope",
      prefixes: noPrefixes,
    });
    await assert.rejects(wrongKey.embed(["x"], "query"), /answered HTTP 401: .*Incorrect API key/);
    const wrongModel = openAiEmbedder({
      url: server.url,
      model: "bge-m3",
      apiKey: "secret-key",
      prefixes: noPrefixes,
    });
    await assert.rejects(wrongModel.embed(["x"], "query"), /answered HTTP 404/);
    const unreachable = openAiEmbedder({
      url: "http://127.0.0.1:9/v1",
      model: "e5",
      apiKey: null,
      prefixes: noPrefixes,
    });
    await assert.rejects(unreachable.embed(["x"], "query"), /at 127\.0\.0\.1:9 could not be reached/);
  } finally {
    await local.close();
  }
});

Deno.test("endpoint URLs: an API base gets /embeddings, a full URL is kept", () => {
  assert.equal(embeddingsEndpoint("http://localhost:11434/v1"), "http://localhost:11434/v1/embeddings");
  assert.equal(embeddingsEndpoint("http://localhost:11434/v1/"), "http://localhost:11434/v1/embeddings");
  assert.equal(embeddingsEndpoint("http://tei:8080/v1/embeddings"), "http://tei:8080/v1/embeddings");
});

Deno.test("reciprocal rank fusion: found by both beats found by one; one ranking alone keeps its order", () => {
  const lexical = ["a", "b", "c"];
  const semantic = ["d", "c", "e"];
  assert.deepEqual(reciprocalRankFusion([lexical, semantic], (x) => x, 10), ["c", "a", "d", "b", "e"]);
  assert.deepEqual(reciprocalRankFusion([lexical, []], (x) => x, 2), ["a", "b"]);
});
