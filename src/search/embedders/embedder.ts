/**
 * What semantic search needs from an embedding model: vectors for passages
 * (off the request path) and for queries (on it), and a name that says which
 * model made them.
 *
 * @module
 */

/** Whether a text is a search query or a passage to find (models such as e5 embed them differently). */
export type EmbedKind = "query" | "passage";

/** An embedding model, in this process or behind an HTTP endpoint. */
export interface Embedder {
  /** `onnx` (a local directory) or `openai` (an OpenAI-compatible `/v1/embeddings` endpoint). */
  readonly provider: "onnx" | "openai";
  /**
   * Which model makes the vectors, recorded with them: vectors of different
   * ids are never compared, and a new id re-embeds every document.
   */
  readonly model: string;
  /** One vector per text, in order (texts are at most a few thousand characters). */
  embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** What is put before each text: e5 models want `query: ` and `passage: `. */
export interface Prefixes {
  query: string;
  passage: string;
}

/** The model id with the prefixes that change its vectors. */
export function modelId(base: string, prefixes: Prefixes): string {
  return prefixes.passage === "" ? base : `${base} passage-prefix=${JSON.stringify(prefixes.passage)}`;
}

/** The texts with their kind's prefix. */
export function prefixed(texts: readonly string[], kind: EmbedKind, prefixes: Prefixes): string[] {
  const prefix = kind === "query" ? prefixes.query : prefixes.passage;
  return prefix === "" ? [...texts] : texts.map((text) => `${prefix}${text}`);
}
