import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { MerkleRootBuilder, MerkleTreeFile, verifyInclusion } from "../../src/audit/merkle.ts";

const hashes = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => createHash("sha256").update(`event ${i}`).digest("hex"));

/** RFC 6962 MTH, computed recursively with node:crypto, as the reference. */
function referenceRoot(leaves: string[]): string {
  const h = (...parts: Uint8Array[]) => {
    const hash = createHash("sha256");
    for (const part of parts) hash.update(part);
    return hash.digest();
  };
  const mth = (items: string[]): Uint8Array => {
    if (items.length === 1) return h(new Uint8Array([0]), Buffer.from(items[0]!, "hex"));
    let k = 1;
    while (k * 2 < items.length) k *= 2;
    return h(new Uint8Array([1]), mth(items.slice(0, k)), mth(items.slice(k)));
  };
  return Buffer.from(mth(leaves)).toString("hex");
}

Deno.test("the streamed root, the stored tree and RFC 6962 agree, and every proof verifies", () => {
  for (let n = 1; n <= 33; n++) {
    const leaves = hashes(n);
    const builder = new MerkleRootBuilder();
    for (const leaf of leaves) builder.push(leaf);
    const tree = MerkleTreeFile.build(leaves);
    try {
      assert.equal(builder.root(), referenceRoot(leaves), `size ${n}`);
      assert.equal(tree.root, builder.root(), `size ${n}`);
      for (let i = 0; i < n; i++) {
        const path = tree.proof(i);
        assert.ok(
          verifyInclusion(leaves[i]!, { index: i, size: n, path, root: tree.root }),
          `leaf ${i} of ${n}`,
        );
        if (n > 1) {
          assert.ok(!verifyInclusion(leaves[(i + 1) % n]!, { index: i, size: n, path, root: tree.root }));
          assert.ok(!verifyInclusion(leaves[i]!, { index: (i + 1) % n, size: n, path, root: tree.root }));
        }
      }
    } finally {
      tree.close();
    }
  }
});
