/**
 * A name that no dictionary knows, spelled in Cyrillic: an English question writes _Kemerovo_,
 * _Omskvodokanal_ or _Interfax_ where a Russian page writes _Кемерово_, _Омскводоканал_, _Интерфакс_.
 * English text spells Russian names by a few conventions (BGN/PCGN's, the press's): _kh_ is х, _zh_ ж, _ts_ ц,
 * _ch_ ч, _sh_ ш, _shch_ щ, _ya_ я, _yu_ ю, _ye_ е, a _y_ after a vowel й and elsewhere ы, a final _-iy_ or
 * _-yy_ ий or ый. This reads them back, letter group by letter group: one spelling, or two where a word starts
 * with _e_ (Э or Е: _Elista_, _Ekaterinburg_).
 *
 * @module
 */

/** Letter groups, the longest first. */
const GROUPS: ReadonlyArray<readonly [string, string]> = [
  ["shch", "щ"],
  ["zh", "ж"],
  ["kh", "х"],
  ["ts", "ц"],
  ["tz", "ц"],
  ["ch", "ч"],
  ["sh", "ш"],
  ["yu", "ю"],
  ["ya", "я"],
  ["yo", "е"],
  ["ye", "е"],
  ["ck", "к"],
  ["ph", "ф"],
];

const LETTERS: Readonly<Record<string, string>> = {
  a: "а",
  b: "б",
  c: "к",
  d: "д",
  e: "е",
  f: "ф",
  g: "г",
  h: "х",
  i: "и",
  j: "дж",
  k: "к",
  l: "л",
  m: "м",
  n: "н",
  o: "о",
  p: "п",
  q: "к",
  r: "р",
  s: "с",
  t: "т",
  u: "у",
  v: "в",
  w: "в",
  x: "кс",
  z: "з",
};

const VOWELS = new Set(["a", "e", "i", "o", "u", "y"]);
const ASCII_WORD = /^[a-z]{4,}$/;

/** The Cyrillic spellings of a lowercase ASCII word of four letters or more (none for anything else). */
export function cyrillicSpellings(word: string): string[] {
  if (!ASCII_WORD.test(word)) return [];
  let out = "";
  for (let i = 0; i < word.length;) {
    if (word.endsWith("iy") && i === word.length - 2) {
      out += "ий";
      break;
    }
    if (word.endsWith("yy") && i === word.length - 2) {
      out += "ый";
      break;
    }
    const group = GROUPS.find(([latin]) => word.startsWith(latin, i));
    if (group) {
      out += group[1];
      i += group[0].length;
      continue;
    }
    const letter = word[i]!;
    if (letter === "y") out += i > 0 && VOWELS.has(word[i - 1]!) ? "й" : "ы";
    else out += LETTERS[letter]!;
    i++;
  }
  return word.startsWith("e") ? [out, `э${out.slice(1)}`] : [out];
}
