/** Specifications of reading an English spelling of a Russian name back into Cyrillic. */
import assert from "node:assert/strict";
import { cyrillicSpellings } from "../../src/search/transliteration.ts";

Deno.test("English spellings of Russian names read back as Russian pages write them", () => {
  const names: Array<[string, string]> = [
    ["kemerovo", "кемерово"],
    ["omskvodokanal", "омскводоканал"],
    ["interfax", "интерфакс"],
    ["khabarovsk", "хабаровск"],
    ["krasnoyarsk", "красноярск"],
    ["yashechkin", "яшечкин"],
    ["shchukin", "щукин"],
    ["zhukov", "жуков"],
    ["tsvetkova", "цветкова"],
    ["yekaterinburg", "екатеринбург"],
    ["grazhdanskiy", "гражданский"],
    ["novyy", "новый"],
    ["sergey", "сергей"],
    ["kyzyl", "кызыл"],
  ];
  for (const [latin, cyrillic] of names) assert.equal(cyrillicSpellings(latin)[0], cyrillic, latin);
});

Deno.test("a word starting with e is spelled both ways (Elista: Элиста, Ekaterina: Екатерина)", () => {
  assert.deepEqual(cyrillicSpellings("elista"), ["елиста", "элиста"]);
  assert.deepEqual(cyrillicSpellings("ekaterina"), ["екатерина", "экатерина"]);
});

Deno.test("short words, and anything but plain Latin letters, get no spelling", () => {
  for (const word of ["omsk1", "tom", "ip54", "café", "москва", "x-ray", ""]) {
    assert.deepEqual(cyrillicSpellings(word), [], word);
  }
  assert.deepEqual(cyrillicSpellings("omsk"), ["омск"]);
});
