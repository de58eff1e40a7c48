/**
 * Specifications of a question's language: short questions hold few of their
 * language's commonest words, and an English-looking word or two ("E-Mail",
 * "Provider") made them read as English, so their words were translated as
 * English ones.
 */
import assert from "node:assert/strict";
import { questionLanguageOf } from "../../src/analysis/question_language.ts";
import { queryTerms } from "../../src/analysis/analysis.ts";
import { Dictionaries } from "../../src/search/dictionaries.ts";
import { translateTerms } from "../../src/search/translation.ts";

Deno.test("a short question in German, French, Spanish, Portuguese, Dutch or Indonesian reads as that language", () => {
  const questions: Array<[string, string]> = [
    ["Wie melden sich E-Mail-Programme beim Mailserver des Providers an?", "de"],
    ["Welche Werkzeuge finden Speicherlecks in Programmen?", "de"],
    ["Pourquoi debconf a-t-il été créé ?", "fr"],
    ["Que veut dire qu'un paquet en recommande un autre ?", "fr"],
    ["¿Qué es el síndrome de la red axilar (cording) después de la cirugía de mama?", "es"],
    ["¿Qué hago si alguien me contesta RTFM?", "es"],
    ["Como posso instalar um pacote sem acesso à rede?", "pt"],
    ["Waar vind ik de recentste versie van dit document?", "nl"],
    ["Apa perbedaan perkecambahan hipogeal dan epigeal?", "id"],
  ];
  for (const [question, language] of questions) {
    assert.equal(questionLanguageOf(question), language, question);
  }
});

Deno.test("an English question stays English, names and terms without a function word included", () => {
  for (
    const question of [
      "Which court hears a dispute with the customer?",
      "Starbucks Paris Baguette GS25 CU point rewards",
      "Longnecker 1999 serum organochlorines pregnancy",
      "table ColA ColF 1b92870d",
      "tax surcharge on vacant urban lots to curb land speculation",
    ]
  ) {
    assert.equal(questionLanguageOf(question), "en", question);
  }
});

Deno.test("a German question is not translated as if it were English", () => {
  const dictionaries = new Dictionaries();
  dictionaries.add({ pair: "en→fr", source: "test", words: 0 }, new Map([["mail", ["courrier"]]]));
  const german = "Wie melden sich E-Mail-Programme beim Mailserver des Providers an?";
  const terms = queryTerms(german);
  assert.deepEqual(translateTerms(terms, german, dictionaries), terms);
  const english = "How do mail programs sign in to the provider's mail server?";
  const translated = translateTerms(queryTerms(english), english, dictionaries);
  assert.ok(
    translated.some((term) => term.terms.includes("courri")),
    "an English question's word is translated",
  );
});
