/**
 * The subprocess that reads the installed dictionaries and writes them to a
 * SQLite file (`dictionary_store.ts`), so the serving process never holds
 * what reading them takes. Its one argument is JSON:
 * `{ dir, chinese, apertiumDir, apertium, frenchPivots, path, key }`.
 *
 * @module
 */
import { type FrenchPivot, loadDictionaries } from "./dictionaries.ts";
import { writeDictionaryStore } from "./dictionary_store.ts";

const { dir, chinese, apertiumDir, apertium, frenchPivots, path, key } = JSON.parse(Deno.args[0] ?? "{}") as {
  dir?: string;
  chinese?: boolean;
  apertiumDir?: string;
  apertium?: boolean;
  frenchPivots?: FrenchPivot[];
  path: string;
  key: string;
};
writeDictionaryStore(
  await loadDictionaries({ dir, chinese, apertiumDir, apertium, frenchPivots }),
  path,
  key,
);
