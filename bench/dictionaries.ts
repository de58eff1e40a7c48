/**
 * What the bilingual dictionaries cost a serving process: its RSS (`VmRSS`,
 * and the peak `VmHWM`) before and after they are on, the time until they
 * are on, and the time of the first and later translations of the
 * benchmark's English questions — held in memory as they were read
 * (`loadDictionaries`), looked up in their SQLite file when it is first made
 * (read in a subprocess) and when it is opened as made, and off. Each runs
 * in a fresh `deno` process, so one does not inherit another's heap.
 *
 * `deno run -A bench/dictionaries.ts` prints one JSON line per way.
 *
 * @module
 */
import { queryTerms } from "../src/analysis/analysis.ts";
import { loadDictionaries } from "../src/search/dictionaries.ts";
import type { DictionaryLookup } from "../src/search/dictionaries.ts";
import { openDictionaryStore } from "../src/search/dictionary_store.ts";
import { translateTerms } from "../src/search/translation.ts";

/** The ways of holding the dictionaries that are measured. */
export const WAYS = ["off", "memory", "store-made", "store-opened"] as const;
type Way = typeof WAYS[number];

function memory(): { rss_mb: number; hwm_mb: number } {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? NaN);
  return { rss_mb: Math.round(kb("VmRSS") / 102.4) / 10, hwm_mb: Math.round(kb("VmHWM") / 102.4) / 10 };
}

async function englishQuestions(): Promise<string[]> {
  const questions = JSON.parse(
    await Deno.readTextFile(new URL("./search_questions.json", import.meta.url)),
  ) as Array<{ question: string; question_language?: string }>;
  return questions.filter((q) => (q.question_language ?? "en") === "en").map((q) => q.question).slice(0, 200);
}

/** One way, in this process. */
async function measure(way: Way, store: string): Promise<Record<string, unknown>> {
  const questions = await englishQuestions();
  const before = memory();
  const started = performance.now();
  let dictionaries: DictionaryLookup | null = null;
  if (way === "memory") dictionaries = await loadDictionaries();
  if (way === "store-made" || way === "store-opened") {
    dictionaries = await openDictionaryStore({ path: store });
  }
  const onMs = performance.now() - started;
  const times: number[] = [];
  let alternatives = 0;
  for (const question of questions) {
    const t = performance.now();
    const terms = translateTerms(queryTerms(question), question, dictionaries);
    times.push(performance.now() - t);
    alternatives += terms.reduce((sum, term) => sum + term.terms.length, 0);
  }
  (globalThis as { gc?: () => void }).gc?.();
  const after = memory();
  const sorted = [...times].sort((a, b) => a - b);
  return {
    way,
    pairs: dictionaries?.pairs().map((pair) => pair.pair) ?? [],
    rss_before_mb: before.rss_mb,
    rss_after_mb: after.rss_mb,
    rss_grown_mb: Math.round((after.rss_mb - before.rss_mb) * 10) / 10,
    peak_rss_mb: after.hwm_mb,
    peak_grown_mb: Math.round((after.hwm_mb - before.rss_mb) * 10) / 10,
    on_after_ms: Math.round(onMs),
    first_translation_ms: Math.round(times[0]! * 100) / 100,
    translation_p50_ms: Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100,
    translation_p99_ms: Math.round(sorted[Math.floor(sorted.length * 0.99)]! * 100) / 100,
    questions: questions.length,
    index_terms: alternatives,
  };
}

/** Every way, each in a fresh process; the store is made once, in a temporary folder, then opened. */
export async function measureDictionaries(): Promise<Array<Record<string, unknown>>> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-dictionaries-" });
  const out: Array<Record<string, unknown>> = [];
  try {
    for (const way of WAYS) {
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--v8-flags=--expose-gc",
          new URL(import.meta.url).pathname,
          way,
          `${dir}/d.sqlite`,
        ],
        stderr: "inherit",
      }).output();
      if (!output.success) throw new Error(`The dictionary benchmark's "${way}" run failed`);
      out.push(JSON.parse(new TextDecoder().decode(output.stdout)));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return out;
}

if (import.meta.main) {
  const [way, store] = Deno.args;
  if (way && store) {
    console.log(JSON.stringify(await measure(way as Way, store)));
  } else {
    for (const row of await measureDictionaries()) console.log(JSON.stringify(row));
  }
}
