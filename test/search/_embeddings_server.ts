/**
 * A local server speaking OpenAI's `POST /v1/embeddings` shape (as Ollama,
 * vLLM and text-embeddings-inference do), serving the tests' real model
 * (see `_glove_model.ts`) on a loopback port. It counts requests, so a test
 * can prove that replay never calls the model.
 *
 * @module
 */
import { onnxEmbedder } from "../../src/search/embedders/onnx.ts";
import { gloveModelDir } from "./_glove_model.ts";

/** A running embeddings server. */
export interface EmbeddingsServer extends AsyncDisposable {
  /** The API base, `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** The model name it answers to. */
  model: string;
  /** Requests answered with vectors so far. */
  requests: number;
  /** Texts embedded so far. */
  texts: number;
  /** Answers every request with this status instead, while set. */
  failWith: number | null;
}

/** Starts the server; `apiKey` makes it require that bearer token. */
export async function startEmbeddingsServer(options: { apiKey?: string } = {}): Promise<EmbeddingsServer> {
  const embedder = await onnxEmbedder(await gloveModelDir(), { query: "", passage: "" });
  const model = "glove-sif-60k";
  const state = { requests: 0, texts: 0, failWith: null as number | null };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const url = new URL(request.url);
    if (request.method !== "POST" || url.pathname !== "/v1/embeddings") {
      return Response.json({ error: { message: "not found" } }, { status: 404 });
    }
    if (options.apiKey && request.headers.get("authorization") !== `Bearer ${options.apiKey}`) {
      return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
    }
    if (state.failWith !== null) {
      return Response.json({ error: { message: "the model is loading" } }, { status: state.failWith });
    }
    const body = await request.json() as { model?: string; input?: string | string[] };
    if (body.model !== model) {
      return Response.json({ error: { message: `model "${body.model}" not found` } }, { status: 404 });
    }
    const input = typeof body.input === "string" ? [body.input] : body.input ?? [];
    const vectors = await embedder.embed(input, "passage");
    state.requests++;
    state.texts += input.length;
    return Response.json({
      object: "list",
      model,
      data: vectors.map((vector, index) => ({
        object: "embedding",
        index,
        embedding: [...vector].map((x) => Number.isFinite(x) ? x : 0),
      })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  });
  const address = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    model,
    get requests() {
      return state.requests;
    },
    get texts() {
      return state.texts;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(status: number | null) {
      state.failWith = status;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await embedder.close();
    },
  };
}
