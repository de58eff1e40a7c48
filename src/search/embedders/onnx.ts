/**
 * An embedding model in this process: an ONNX export in a local directory,
 * as Hugging Face publishes them (`config.json`, `tokenizer.json`,
 * `onnx/model.onnx` or `onnx/model_quantized.onnx`), run by transformers.js
 * on onnxruntime. Nothing is ever downloaded. Token vectors are mean-pooled
 * (or the first token is taken when the directory's
 * `1_Pooling/config.json` says so, as for bge-m3) and normalised.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { onnxModelFile } from "../../config.ts";
import { type Embedder, type EmbedKind, modelId, prefixed, type Prefixes } from "./embedder.ts";

/** Loads the model in `dir`; rejects with one sentence when it cannot be read. */
export async function onnxEmbedder(
  dir: string,
  prefixes: Prefixes,
  options: { batchSize?: number } = {},
): Promise<Embedder> {
  const root = resolve(dir);
  const model = onnxModelFile(root);
  if (model === null) throw new Error(`${dir} has no onnx/model.onnx or onnx/model_quantized.onnx`);
  const pooling = await poolingOf(root);
  const digest = await fileDigest(model.file);
  const { pipeline, env } = await import("@huggingface/transformers");
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = `${dirname(root)}/`;
  let extractor: Awaited<ReturnType<typeof pipeline<"feature-extraction">>>;
  try {
    extractor = await pipeline("feature-extraction", basename(root), {
      dtype: model.dtype,
      local_files_only: true,
    });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    throw new Error(`The embedding model in ${dir} could not be loaded: ${reason}`);
  }
  const batchSize = options.batchSize ?? 16;
  return {
    provider: "onnx",
    model: modelId(`onnx:${basename(root)}:${digest.slice(0, 16)}`, prefixes),
    async embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> {
      const inputs = prefixed(texts, kind, prefixes);
      const out: Float32Array[] = [];
      for (let start = 0; start < inputs.length; start += batchSize) {
        const batch = inputs.slice(start, start + batchSize);
        const tensor = await extractor(batch, { pooling, normalize: true });
        const dims = tensor.dims[tensor.dims.length - 1]!;
        const data = tensor.data as Float32Array;
        for (let i = 0; i < batch.length; i++) out.push(data.slice(i * dims, (i + 1) * dims));
        tensor.dispose?.();
      }
      return out;
    },
    async close() {
      await extractor.dispose();
    },
  };
}

async function poolingOf(dir: string): Promise<"mean" | "cls"> {
  try {
    const config = JSON.parse(await Deno.readTextFile(join(dir, "1_Pooling", "config.json")));
    return config.pooling_mode_cls_token === true ? "cls" : "mean";
  } catch {
    return "mean";
  }
}

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  const file = await Deno.open(path);
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}
