/**
 * Light stemming for Arabic and Persian (after folding, so أ إ آ are ا, ى ی
 * are ي, ة is ه): one conjunction or article prefix and the common plural,
 * possessive and adjective suffixes come off, in the manner of Larkey's
 * "light10"; roots are never dug out. A word keeps at least three letters.
 *
 * @module
 */

/** Article prefixes, with the prepositions and conjunctions written onto them, longest first. */
const ARTICLES = ["وال", "بال", "كال", "فال", "لل", "ال"];
/** Single-letter prefixes: and, with, for, so, like. */
const LETTER_PREFIXES = new Set(["و", "ب", "ل", "ف", "ك"]);
/**
 * Suffixes, tried in this order, each at most once: Persian plurals and
 * comparatives (های ها ترین تر), Arabic plurals and duals (ات ون ين ان),
 * the nisba (يه), possessive and feminine endings (ه ي).
 */
const SUFFIXES = ["هاي", "ترين", "ها", "ات", "ون", "ين", "ان", "تر", "يه", "ه", "ي"];
const MIN_LETTERS = 3;

/** ال before ا, as folding writes it: folding turns every لا into ال (PDFs swap lam-alef), so الا becomes اال. */
const SWAPPED_ARTICLE = /^([وبكف]?)اال/;

/** The light stem of a folded Arabic or Persian word. */
export function arabicLightStem(word: string): string {
  let stem = word.replace(SWAPPED_ARTICLE, "$1الا");
  const article = ARTICLES.find((prefix) =>
    stem.startsWith(prefix) && stem.length - prefix.length >= MIN_LETTERS
  );
  if (article) stem = stem.slice(article.length);
  else if (LETTER_PREFIXES.has(stem[0]!) && stem.length - 1 > MIN_LETTERS) {
    // A bare one-letter prefix only on a long word: short words often start with these letters.
    const rest = stem.slice(1);
    const inner = ARTICLES.find((prefix) =>
      rest.startsWith(prefix) && rest.length - prefix.length >= MIN_LETTERS
    );
    stem = inner ? rest.slice(inner.length) : stem[0] === "و" ? rest : stem;
  }
  for (const suffix of SUFFIXES) {
    if (stem.endsWith(suffix) && stem.length - suffix.length >= MIN_LETTERS) {
      stem = stem.slice(0, -suffix.length);
    }
  }
  return stem;
}
