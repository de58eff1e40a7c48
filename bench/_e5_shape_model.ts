/**
 * A transformer encoder of multilingual-e5-small's shape (12 layers, hidden
 * size 384, 12 heads, feed-forward 1536, a 250,037-row token table: 118M
 * parameters, 470 MB as float32) with random weights, as an ONNX model
 * directory that Sergo loads like the real one. No model can be downloaded
 * here; what a model costs to run on this machine depends on its shape, not
 * on its weights, so the benchmark measures the cost of multilingual-e5-small
 * with it (its vectors mean nothing and are never searched).
 *
 * The tokenizer is the tests' word-level WordPiece vocabulary (see
 * `test/search/_glove_model.ts`): XLM-R's SentencePiece gives about 1.3 times
 * as many tokens on English text and more on other scripts, so the time this
 * model takes is a lower bound of the real one's.
 *
 * @module
 */
import onnxProto from "onnx-proto";
import { join } from "node:path";
import { gloveModelDir } from "../test/search/_glove_model.ts";

// deno-lint-ignore no-explicit-any
const { onnx } = onnxProto as any;

const LAYERS = 12, HIDDEN = 384, HEADS = 12, FFN = 1536, VOCAB = 250_037;
const FLOAT = 1, INT64 = 7;

/** Builds the model directory under `bench/data/` (once) and returns it. */
export async function e5ShapeModelDir(): Promise<string> {
  const dir = new URL("./data/e5-small-shape-random/", import.meta.url).pathname;
  try {
    await Deno.stat(join(dir, "onnx", "model.onnx"));
    return dir;
  } catch {
    // Build it below.
  }
  const glove = await gloveModelDir();
  const building = `${dir.replace(/\/$/, "")}.building-${Deno.pid}`;
  await Deno.remove(building, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(building, "onnx"), { recursive: true });
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) {
    await Deno.copyFile(join(glove, file), join(building, file));
  }
  await Deno.writeTextFile(
    join(building, "config.json"),
    JSON.stringify({ model_type: "bert", hidden_size: HIDDEN, num_hidden_layers: LAYERS }),
  );
  await Deno.writeFile(join(building, "onnx", "model.onnx"), modelBytes());
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.rename(building, dir);
  return dir;
}

function modelBytes(): Uint8Array {
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296 - 0.5;
  };
  const initializer: unknown[] = [];
  const node: unknown[] = [];
  const tensor = (name: string, dims: number[], fill: (i: number) => number) => {
    const size = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = fill(i);
    initializer.push({ name, dims, dataType: FLOAT, rawData: new Uint8Array(data.buffer) });
    return name;
  };
  const weights = (name: string, dims: number[]) => tensor(name, dims, () => random() * 0.04);
  const constant = (name: string, values: number[] | bigint[], type = FLOAT) => {
    const data = type === INT64
      ? new BigInt64Array(values as bigint[])
      : new Float32Array(values as number[]);
    initializer.push({ name, dims: [values.length], dataType: type, rawData: new Uint8Array(data.buffer) });
    return name;
  };
  let counter = 0;
  const op = (opType: string, input: string[], attribute: unknown[] = []) => {
    const output = `t${counter++}`;
    node.push({ opType, input, output: [output], name: output, attribute });
    return output;
  };
  const ints = (name: string, values: number[]) => ({ name, type: 7, ints: values });
  const layerNorm = (x: string, prefix: string) =>
    op("LayerNormalization", [
      x,
      tensor(`${prefix}.g`, [HIDDEN], () => 1),
      tensor(`${prefix}.b`, [HIDDEN], () => 0),
    ], [
      { name: "axis", type: 2, i: -1 },
    ]);
  const dense = (x: string, prefix: string, from: number, to: number) =>
    op("Add", [op("MatMul", [x, weights(`${prefix}.w`, [from, to])]), tensor(`${prefix}.b`, [to], () => 0)]);

  constant("heads_shape", [0n, 0n, BigInt(HEADS), BigInt(HIDDEN / HEADS)], INT64);
  constant("hidden_shape", [0n, 0n, BigInt(HIDDEN)], INT64);
  constant("axes_1_2", [1n, 2n], INT64);
  constant("one", [1]);
  constant("minus_big", [-10000]);
  constant("scale", [1 / Math.sqrt(HIDDEN / HEADS)]);
  constant("half", [0.5]);
  constant("sqrt2", [Math.SQRT2]);
  let x = layerNorm(op("Gather", [weights("embeddings", [VOCAB, HIDDEN]), "input_ids"]), "embeddings.norm");
  const mask = op("Cast", ["attention_mask"], [{ name: "to", type: 2, i: FLOAT }]);
  const bias = op("Unsqueeze", [op("Mul", [op("Sub", ["one", mask]), "minus_big"]), "axes_1_2"]);
  for (let layer = 0; layer < LAYERS; layer++) {
    const p = `layer${layer}`;
    const heads = (name: string, perm: number[]) =>
      op("Transpose", [op("Reshape", [dense(x, `${p}.${name}`, HIDDEN, HIDDEN), "heads_shape"])], [
        ints("perm", perm),
      ]);
    const q = heads("q", [0, 2, 1, 3]);
    const k = heads("k", [0, 2, 3, 1]);
    const v = heads("v", [0, 2, 1, 3]);
    const scores = op("Softmax", [op("Add", [op("Mul", [op("MatMul", [q, k]), "scale"]), bias])], [
      { name: "axis", type: 2, i: -1 },
    ]);
    const context = op("Reshape", [
      op("Transpose", [op("MatMul", [scores, v])], [ints("perm", [0, 2, 1, 3])]),
      "hidden_shape",
    ]);
    x = layerNorm(op("Add", [x, dense(context, `${p}.o`, HIDDEN, HIDDEN)]), `${p}.norm1`);
    const up = dense(x, `${p}.up`, HIDDEN, FFN);
    const gelu = op("Mul", [
      op("Mul", [up, "half"]),
      op("Add", ["one", op("Erf", [op("Div", [up, "sqrt2"])])]),
    ]);
    x = layerNorm(op("Add", [x, dense(gelu, `${p}.down`, FFN, HIDDEN)]), `${p}.norm2`);
  }
  node.push({ opType: "Identity", input: [x], output: ["last_hidden_state"], name: "output" });
  const tensorType = (elemType: number, dims: (string | number)[]) => ({
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => typeof d === "number" ? { dimValue: d } : { dimParam: d }) },
    },
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "sergo-bench",
    opsetImport: [{ domain: "", version: 17 }],
    graph: {
      name: "e5_small_shape_random",
      node,
      initializer,
      input: [
        { name: "input_ids", type: tensorType(INT64, ["batch", "sequence"]) },
        { name: "attention_mask", type: tensorType(INT64, ["batch", "sequence"]) },
      ],
      output: [{ name: "last_hidden_state", type: tensorType(FLOAT, ["batch", "sequence", HIDDEN]) }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
