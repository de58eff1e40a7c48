/**
 * Where the shared corpus is: `shared/corpus` beside the repository (as in a
 * work tree and in CI), or `SERGO_CORPUS` when set.
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
    // No env permission: use the folder beside the repository.
  }
  return fileURLToPath(new URL("../../../shared/corpus", import.meta.url));
})();
