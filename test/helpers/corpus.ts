/**
 * Where the test corpus is: `test/corpus` in the repository (real files with
 * their sources and licenses in `MANIFEST.tsv`), or `SERGO_CORPUS` when set.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The corpus folder, without a trailing slash. */
export const CORPUS_DIR: string = (() => {
  try {
    const fromEnv = Deno.env.get("SERGO_CORPUS");
    if (fromEnv) return fromEnv.replace(/\/$/, "");
  } catch {
    // No env permission: use the repository's copy.
  }
  return fileURLToPath(new URL("../corpus", import.meta.url));
})();
