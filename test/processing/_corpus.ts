import { CORPUS_DIR } from "../helpers/corpus.ts";
/** Reading corpus files in tests. */
export const CORPUS = `${CORPUS_DIR}/`;

/** The bytes of a corpus file, by path inside the corpus. */
export function corpusBytes(path: string): Promise<Uint8Array> {
  return Deno.readFile(CORPUS + path);
}

/** The file name of a corpus path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
