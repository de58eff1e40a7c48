/**
 * Specifications of reading Apertium's compiled bilingual dictionaries
 * (`src/search/apertium.ts`): the lemma pairs of content words, as the
 * `apertium-eng-spa` package installs them, with no lttoolbox program run.
 */
import assert from "node:assert/strict";
import { bilingualPairs, DEFAULT_APERTIUM_DIR } from "../../src/search/apertium.ts";
import { readApertium } from "../../src/search/dictionaries.ts";

const ENG_SPA = `${DEFAULT_APERTIUM_DIR}/apertium-eng-spa/eng-spa.autobil.bin`;
const missing = (() => {
  try {
    Deno.statSync(ENG_SPA);
    return null;
  } catch {
    return `skipped: the Debian package apertium-eng-spa is not installed (${ENG_SPA}; see .ci/run)`;
  }
})();
if (missing) console.warn(missing);

Deno.test({
  name:
    "Apertium's English–Spanish transducer gives one-word lemma pairs of nouns, verbs, adjectives and adverbs only",
  ignore: missing !== null,
  fn: () => {
    const pairs = bilingualPairs(Deno.readFileSync(ENG_SPA));
    const of = (word: string) => pairs.filter((pair) => pair.left === word).map((pair) => pair.right);
    assert.deepEqual(
      of("house"),
      ["casa", "cámara", "albergar"],
      "a noun's and a verb's lemmas, in file order",
    );
    assert.ok(of("take").includes("tomar"), "a verb");
    assert.deepEqual(of("big"), ["grande"], "an adjective");
    assert.deepEqual(of("quickly"), ["deprisa"], "an adverb");
    assert.deepEqual([...of("the"), ...of("of"), ...of("he")], [], "no determiner, preposition or pronoun");
    assert.deepEqual(pairs.filter((pair) => /[\s#<>0-9]/.test(pair.left + pair.right)), [], "one word each");
    assert.ok(pairs.every((pair) => ["n", "vblex", "adj", "adv"].includes(pair.tag)));
    assert.ok(pairs.length > 15_000, `${pairs.length} pairs`);
  },
});

Deno.test({
  name:
    "read as a dictionary, Apertium's translations are keyed by the English stem, at most eight, without a lemma the same in both",
  ignore: missing !== null,
  fn: async () => {
    const entries = (await readApertium(ENG_SPA))!;
    // house and housing share their stem: casa, cámara (folded as the index folds text), alojamiento, albergar.
    assert.deepEqual(entries.get("hous")?.slice(0, 2), ["casa", "camara"]);
    assert.ok(entries.get("hous")?.includes("alojamiento"), "housing's lemma under the same stem");
    assert.ok([...entries.values()].every((words) => words.length >= 1 && words.length <= 8));
    assert.equal(entries.get("dvd"), undefined, "DVD is DVD in both");
    assert.equal(await readApertium(`${ENG_SPA}.missing`), null, "not installed: none");
  },
});

const EN_EO = `${DEFAULT_APERTIUM_DIR}/apertium-eo-en/en-eo.autobil.bin`;
const esperantoMissing = (() => {
  try {
    Deno.statSync(EN_EO);
    return null;
  } catch {
    return `skipped: the Debian package apertium-eo-en is not installed (${EN_EO}; see .ci/run)`;
  }
})();
if (esperantoMissing) console.warn(esperantoMissing);

Deno.test({
  name:
    "Apertium's English–Esperanto transducer read for lemmas in lower case only leaves its pattern of capitals (acronyms) unwalked",
  ignore: esperantoMissing !== null,
  fn: () => {
    const started = performance.now();
    const pairs = bilingualPairs(Deno.readFileSync(EN_EO), { lowercase: true });
    const of = (word: string) => pairs.filter((pair) => pair.left === word).map((pair) => pair.right);
    assert.ok(of("sixth").includes("sesa"), `sixth: ${of("sixth")}`);
    assert.ok(of("computer").includes("komputilo"), `computer: ${of("computer")}`);
    assert.deepEqual(
      pairs.filter((pair) => /^\p{Lu}/u.test(pair.left)),
      [],
      "no lemma starting with a capital",
    );
    // Walked in full, the pattern's 12 million paths take 90 s; in lower case, well under a second unloaded.
    assert.ok(pairs.length < 50_000, `${pairs.length} pairs`);
    assert.ok(performance.now() - started < 30_000, `${Math.round(performance.now() - started)} ms`);
  },
});
