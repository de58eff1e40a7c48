/**
 * The bilingual dictionaries kept on disk, so a serving process holds none of
 * them in memory: what {@linkcode loadDictionaries} keeps (each English stem
 * and its translations in every language) is written once to a SQLite file,
 * and a search looks up only its own words there.
 *
 * The file is keyed by the dictionaries' files (their paths, sizes and times)
 * and by what the reader keeps ({@linkcode FORMAT}, the translations per
 * word): a new package version, an added or removed dictionary or a changed
 * reader makes the next start read them anew. Reading them holds hundreds of
 * megabytes for a while (the 80 MB English–German text, CC-CEDICT's data), so
 * it runs in a `deno` subprocess when the process may start one, and the
 * serving process only opens the file it wrote. Adding a dictionary needs no
 * reindex, only a restart.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  Dictionaries,
  dictionaryFiles,
  type DictionaryLookup,
  type DictionaryPair,
  englishKey,
  foreignOnly,
  loadDictionaries,
  type LoadDictionaryOptions,
  MAX_TRANSLATIONS,
  PHRASES,
  TRANSLATE_BACK,
  type Translation,
} from "./dictionaries.ts";

/** What the reader keeps of a dictionary: raise it when `dictionaries.ts` keeps something else. */
export const FORMAT = 4;

const CHILD_SCRIPT = new URL("./_build_dictionaries_child.ts", import.meta.url);
const CONFIG = new URL("../../deno.json", import.meta.url);

/** Options of {@linkcode openDictionaryStore}. */
export interface DictionaryStoreOptions extends LoadDictionaryOptions {
  /** The SQLite file the dictionaries are kept in (made or remade when its key differs). */
  path: string;
  /** Read the dictionaries in this process, not in a subprocess (default: a subprocess where allowed). */
  inProcess?: boolean;
  /** Ends the subprocess reading them (the file is then not made; the promise rejects). */
  signal?: AbortSignal;
}

/** Dictionaries looked up in their SQLite file, one question word at a time. */
export class DictionaryStore implements DictionaryLookup {
  readonly #db: DatabaseSync;
  readonly #forward: StatementSync;
  readonly #foreign: StatementSync;
  readonly #back: StatementSync;
  readonly #pairs: DictionaryPair[];
  /** The key the file was made with. */
  readonly key: string;

  constructor(path: string) {
    this.#db = new DatabaseSync(path, { readOnly: true });
    const meta = new Map(
      (this.#db.prepare("SELECT name, value FROM meta").all() as Array<{ name: string; value: string }>)
        .map((row) => [row.name, row.value]),
    );
    this.key = meta.get("key") ?? "";
    this.#pairs = JSON.parse(meta.get("pairs") ?? "[]") as DictionaryPair[];
    this.#forward = this.#db.prepare("SELECT words FROM translations WHERE stem = ?");
    this.#foreign = this.#db.prepare("SELECT foreign_words FROM translations WHERE stem = ?");
    this.#back = this.#db.prepare("SELECT stems FROM back WHERE term = ?");
  }

  /** The translations of a folded English word or two-word phrase (by stems), in every language that is on. */
  translate(word: string): readonly string[] {
    const row = this.#forward.get(englishKey(word)) as { words: string } | undefined;
    return row ? row.words.split("\t") : [];
  }

  /** {@linkcode DictionaryLookup.foreignTranslations}, as found when the file was made. */
  foreignTranslations(word: string): readonly Translation[] {
    const row = this.#foreign.get(englishKey(word)) as { foreign_words: string } | undefined;
    if (!row || row.foreign_words === "") return [];
    return row.foreign_words.split("\t").map((tagged) => {
      const colon = tagged.indexOf(":");
      return { language: tagged.slice(0, colon), word: tagged.slice(colon + 1) };
    });
  }

  /** The English stems a word of `language` translates to (the word as the index holds it). */
  translateBack(language: string, term: string): readonly string[] {
    const row = this.#back.get(`${language}:${term}`) as { stems: string } | undefined;
    return row ? row.stems.split("\t") : [];
  }

  /** The language pairs that are on. */
  pairs(): DictionaryPair[] {
    return this.#pairs.map((pair) => ({ ...pair }));
  }

  /** Whether no pair is on (search then behaves as without dictionaries). */
  get empty(): boolean {
    return this.#pairs.length === 0;
  }

  /** Closes the file. */
  close(): void {
    this.#db.close();
  }
}

/** The key of the dictionaries these options read: the reader's format and each file's size and time. */
export async function dictionaryKey(options: LoadDictionaryOptions = {}): Promise<string> {
  const files: Array<[string, number, number] | [string, null]> = [];
  for (const file of dictionaryFiles(options)) {
    try {
      const info = await Deno.stat(file);
      files.push([file, info.size, info.mtime?.getTime() ?? 0]);
    } catch {
      files.push([file, null]);
    }
  }
  const phrases = options.phrases ?? PHRASES;
  return JSON.stringify({ format: FORMAT, max: MAX_TRANSLATIONS, back: TRANSLATE_BACK, phrases, files });
}

/** Writes dictionaries to a new SQLite file at `path` (replaced if it exists), with their key. */
export function writeDictionaryStore(dictionaries: Dictionaries, path: string, key: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Not there.
  }
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA journal_mode = OFF;
      CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE translations (stem TEXT PRIMARY KEY, words TEXT NOT NULL, foreign_words TEXT NOT NULL)
        WITHOUT ROWID;
      CREATE TABLE back (term TEXT PRIMARY KEY, stems TEXT NOT NULL) WITHOUT ROWID;`);
    db.exec("BEGIN");
    const meta = db.prepare("INSERT INTO meta (name, value) VALUES (?, ?)");
    meta.run("key", key);
    meta.run("pairs", JSON.stringify(dictionaries.pairs()));
    const forward = db.prepare("INSERT INTO translations (stem, words, foreign_words) VALUES (?, ?, ?)");
    const words = new Map(dictionaries.translations());
    for (const [stem, tagged] of dictionaries.translationsByLanguage()) {
      // Each foreign translation as `language:word` (a word never holds a colon or a tab).
      const foreign = foreignOnly(tagged, dictionaries).map(({ language, word }) => `${language}:${word}`);
      forward.run(stem, words.get(stem)!.join("\t"), foreign.join("\t"));
    }
    const back = db.prepare("INSERT INTO back (term, stems) VALUES (?, ?)");
    for (const [term, stems] of dictionaries.backTranslations()) back.run(term, stems.join("\t"));
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/**
 * The installed dictionaries from their file at `options.path`: opened as it is when its key is that of the
 * dictionaries installed now, else read anew (in a subprocess where allowed) and written there first.
 */
export async function openDictionaryStore(options: DictionaryStoreOptions): Promise<DictionaryStore> {
  const key = await dictionaryKey(options);
  try {
    const store = new DictionaryStore(options.path);
    if (store.key === key) return store;
    store.close();
  } catch {
    // No file yet, or not one of ours: it is made below.
  }
  const temporary = `${options.path}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    if (options.inProcess || !canRunChild()) {
      writeDictionaryStore(await loadDictionaries(options), temporary, key);
    } else {
      await buildInChild(options, temporary, key);
    }
    // A rename replaces the old file at once: a process still reading it keeps the old one open.
    await Deno.rename(temporary, options.path);
  } finally {
    await Deno.remove(temporary).catch(() => {});
  }
  return new DictionaryStore(options.path);
}

/** The command that starts a subprocess: this Deno where the process may run it, else `deno` by name. */
function denoCommand(): string {
  const own = Deno.execPath();
  return Deno.permissions.querySync({ name: "run", command: own }).state === "granted" ? own : "deno";
}

function canRunChild(): boolean {
  if (CHILD_SCRIPT.protocol !== "file:") return false;
  return Deno.permissions.querySync({ name: "run", command: denoCommand() }).state === "granted";
}

async function buildInChild(options: DictionaryStoreOptions, path: string, key: string): Promise<void> {
  const reads = [...new Set([...dictionaryFiles(options), path].map((file) => file.replace(/\/[^/]*$/, "")))];
  let config: string[] = [];
  try {
    await Deno.stat(CONFIG);
    config = ["--config", CONFIG.pathname];
  } catch {
    // Run outside the repository: the child resolves its imports as this process does.
  }
  const output = await new Deno.Command(denoCommand(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      ...config,
      `--allow-read=${reads.join(",")}`,
      `--allow-write=${path.replace(/\/[^/]*$/, "")}`,
      CHILD_SCRIPT.pathname,
      JSON.stringify({
        dir: options.dir,
        chinese: options.chinese,
        apertiumDir: options.apertiumDir,
        apertium: options.apertium,
        frenchPivots: options.frenchPivots,
        path,
        key,
      }),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    signal: options.signal,
  }).output();
  options.signal?.throwIfAborted();
  if (!output.success) {
    const detail = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1) ?? "";
    throw new Error(`Cannot read the dictionaries into "${path}": ${detail || `exit code ${output.code}`}`);
  }
}
