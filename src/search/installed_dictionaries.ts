/**
 * The dictionaries search translates through when a search names none: the
 * ones installed, read once when `serve` starts, in the background.
 *
 * @module
 */
import {
  Dictionaries,
  type DictionaryLookup,
  loadDictionaries,
  type LoadDictionaryOptions,
} from "./dictionaries.ts";
import { openDictionaryStore } from "./dictionary_store.ts";

let installed: DictionaryLookup = new Dictionaries();
let loading: Promise<DictionaryLookup> | null = null;
let problem: string | null = null;
let settled = false;
/** The servers of this process using them (see {@linkcode releaseInstalledDictionaries}). */
let holders = 0;
let reading: AbortController | null = null;

/** The dictionaries in use (empty until read, or when none is installed). */
export function installedDictionaries(): DictionaryLookup {
  return installed;
}

/** Why the dictionaries could not be read, in one sentence, or null (read, still reading, or not asked). */
export function installedDictionariesProblem(): string | null {
  return problem;
}

/** Whether they are being read now (asked for, not yet read nor failed). */
export function installedDictionariesReading(): boolean {
  return loading !== null && !settled;
}

/** Options of {@linkcode useInstalledDictionaries}. */
export interface InstalledDictionaryOptions extends LoadDictionaryOptions {
  /**
   * The SQLite file they are kept in and looked up from (made on first use, remade when a dictionary
   * changes); absent, they are held in memory.
   */
  store?: string;
}

/**
 * Reads the installed dictionaries once, in the background, and makes them
 * the ones search uses; resolves when they are read (the server starts
 * without waiting: searches until then are as without dictionaries). When
 * they cannot be read, search stays as without them and
 * {@linkcode installedDictionariesProblem} says why.
 */
export function useInstalledDictionaries(
  options: InstalledDictionaryOptions = {},
): Promise<DictionaryLookup> {
  holders++;
  if (loading) return loading;
  const controller = reading = new AbortController();
  loading =
    (options.store === undefined
      ? loadDictionaries(options)
      : openDictionaryStore({ ...options, path: options.store, signal: controller.signal })).then(
        (dictionaries) => {
          settled = true;
          return installed = dictionaries;
        },
        (error) => {
          if (controller.signal.aborted) {
            // Stopped by the last server that used them: a later one reads them again.
            loading = null;
            return installed;
          }
          settled = true;
          const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim();
          problem = `They could not be read: ${reason.replace(/\.$/, "")}.`;
          throw error;
        },
      );
  return loading;
}

/**
 * Says a server that used them stopped. When none is left and they are still being read, the
 * subprocess reading them is ended: a stopped server leaves no process behind (it went on for
 * seconds of CPU after `serve` exited, one more for every start stopped before it finished).
 */
export function releaseInstalledDictionaries(): void {
  holders = Math.max(0, holders - 1);
  if (holders === 0 && !settled) reading?.abort();
}
