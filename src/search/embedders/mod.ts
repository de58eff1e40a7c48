/**
 * The embedding model a configuration names, ready to use.
 *
 * @module
 */
import type { EmbeddingsConfig } from "../../config.ts";
import type { Embedder } from "./embedder.ts";
import { onnxEmbedder } from "./onnx.ts";
import { openAiEmbedder } from "./openai.ts";

export type { Embedder } from "./embedder.ts";

/** The configured model: loaded now for a local directory, reached on first use for an endpoint. */
export async function createEmbedder(config: EmbeddingsConfig): Promise<Embedder> {
  if (config.provider === "onnx") return await onnxEmbedder(config.dir, config.prefixes);
  return openAiEmbedder({
    url: config.url,
    model: config.model,
    apiKey: config.apiKey,
    prefixes: config.prefixes,
  });
}
