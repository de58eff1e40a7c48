/**
 * German compounds' parts: which words split, into what, and that the index holds the parts marked, without
 * lengthening the passage.
 */
import assert from "node:assert/strict";
import { bodyLength } from "../../projections/search_index.ts";
import { analyze, DEFAULT_ANALYSIS, PART, partTerms } from "../../src/analysis/analysis.ts";
import { compoundParts, germanParts } from "../../src/analysis/compounds.ts";

Deno.test("a German compound of the journal gives its parts and runs of parts; plain words give none", () => {
  assert.deepEqual(germanParts("organtransplantation"), ["organ", "transplantation"]);
  assert.deepEqual(germanParts("kopfschmerzattacken"), [
    "kopf",
    "kopfschmerz",
    "schmerz",
    "schmerzattacken",
    "attacken",
  ]);
  // A linking s comes off a first part: Betrieb-s-system.
  assert.deepEqual(germanParts("betriebssystem"), ["betrieb", "system"]);
  // Three parts give each part and the two runs the dictionary does not list alone.
  assert.deepEqual(germanParts("zeitzonendaten"), ["zeit", "zeitzonen", "zone", "zonendaten", "daten"]);
  // Nor does a word a preposition or a verb's particle begins (Unterscheidung is no Scheidung).
  for (const word of ["verantwortung", "unterscheidung", "wiederherstellung", "trauer", "schmerz"]) {
    assert.deepEqual(germanParts(word), [], word);
  }
});

Deno.test("a Dutch compound of the Debian FAQ gives its parts; a Dutch word a particle begins gives none", () => {
  assert.deepEqual(compoundParts("bestandsformaten", "nl"), ["bestand", "formaten"]);
  assert.deepEqual(compoundParts("pakketbeheersysteem", "nl").includes("pakketbeheer"), true);
  assert.deepEqual(compoundParts("besturingssysteem", "nl"), ["besturing", "systeem"]);
  for (const word of ["ondersteuning", "afhankelijkheden", "bijvoorbeeld"]) {
    assert.deepEqual(compoundParts(word, "nl"), [], word);
  }
});

Deno.test("a German passage's index holds its compounds' parts marked, and they do not count in its length", () => {
  const text = "Die Organtransplantation veränderte den Todeszeitpunkt";
  const terms = analyze(text, DEFAULT_ANALYSIS, "de");
  assert.ok(terms.includes(partTerms("organ")[0]!), terms.join(" "));
  assert.ok(terms.includes(partTerms("transplantation")[0]!), terms.join(" "));
  assert.ok(!terms.includes("transplantation"), "the part is not a word of the passage by itself");
  const unsplit = analyze(text, { ...DEFAULT_ANALYSIS, compounds: false }, "de");
  assert.equal(unsplit.some((term) => term.startsWith(PART)), false);
  assert.equal(bodyLength(terms), bodyLength(unsplit));
  // An English passage is not split.
  assert.equal(
    analyze("the organtransplantation", DEFAULT_ANALYSIS, "en").some((t) => t.startsWith(PART)),
    false,
  );
});
