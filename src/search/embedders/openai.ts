/**
 * An embedding model behind an OpenAI-compatible `POST …/v1/embeddings`
 * endpoint: what OpenAI, Ollama, vLLM, LM Studio and text-embeddings-inference
 * speak. Texts go in batches; the key, if any, is sent as a bearer token and
 * never logged.
 *
 * @module
 */
import { type Embedder, type EmbedKind, modelId, prefixed, type Prefixes } from "./embedder.ts";

/** How the endpoint is reached. */
export interface OpenAiEmbedderOptions {
  /** The API's base (`http://host:11434/v1`) or the full `/embeddings` URL. */
  url: string;
  /** The `model` field of each request. */
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | null;
  prefixes: Prefixes;
  /** Texts per request. */
  batchSize?: number;
  /** How long one request may take. */
  timeoutMs?: number;
}

/** The endpoint a base URL stands for. */
export function embeddingsEndpoint(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/embeddings") ? trimmed : `${trimmed}/embeddings`;
}

/** Creates the HTTP embedder; nothing is sent until the first texts. */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const endpoint = embeddingsEndpoint(options.url);
  const batchSize = options.batchSize ?? 32;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const host = new URL(endpoint).host;
  return {
    provider: "openai",
    model: modelId(`openai:${options.model}`, options.prefixes),
    async embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
      const inputs = prefixed(texts, kind, options.prefixes);
      const out: Float32Array[] = [];
      for (let start = 0; start < inputs.length; start += batchSize) {
        const batch = inputs.slice(start, start + batchSize);
        out.push(...await request(batch, signal));
      }
      return out;
    },
    close: () => Promise.resolve(),
  };

  async function request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input, encoding_format: "float" }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      const reason = timeout.aborted ? `no answer within ${timeoutMs / 1000} s` : errorText(error);
      throw new Error(`The embeddings endpoint at ${host} could not be reached: ${reason}`);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new Error(
        `The embeddings endpoint at ${host} answered HTTP ${response.status}: ${text.slice(0, 200)}`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`The embeddings endpoint at ${host} did not answer JSON`);
    }
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new Error(
        `The embeddings endpoint at ${host} gave ${
          Array.isArray(data) ? data.length : "no"
        } vectors for ${input.length} texts`,
      );
    }
    const vectors: Float32Array[] = new Array(input.length);
    for (const [position, item] of data.entries()) {
      const embedding = (item as { embedding?: unknown }).embedding;
      const index = (item as { index?: unknown }).index;
      const at = Number.isInteger(index) ? index as number : position;
      if (!Array.isArray(embedding) || embedding.length === 0 || at < 0 || at >= input.length) {
        throw new Error(`The embeddings endpoint at ${host} gave a vector that is not a list of numbers`);
      }
      vectors[at] = Float32Array.from(embedding as number[]);
    }
    if (vectors.some((vector) => vector === undefined || vector.length !== vectors[0]!.length)) {
      throw new Error(`The embeddings endpoint at ${host} gave vectors of different lengths`);
    }
    return vectors;
  }
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}
