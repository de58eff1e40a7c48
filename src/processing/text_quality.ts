/**
 * Whether a page's text layer is worth keeping: the Standard preset keeps a good
 * born-digital (or good OCR) layer and transcribes the page image where the layer
 * is missing, tiny or garbage.
 *
 * "Garbage" is decided word by word. A real word, in any script, is letters of one
 * case pattern (all lower, all upper, or one capital first), possibly with
 * punctuation around it, a hyphen or apostrophe inside, or digits alone. A bad OCR
 * layer — Cyrillic read with a Latin model, as `scanned-ru-tax-form-bad-ocr.pdf` in
 * the corpus — is full of "words" such as `Hanoroo6nO>KeHVIS'I`: digits between
 * letters, case flipping inside a word, brackets and symbols inside a word. A layer
 * is garbage when at least {@link GARBAGE_WORD_SHARE} of its words of three or
 * more characters look like that. Scripts without case (CJK, Arabic, Hebrew) can
 * only fail by the digit and symbol rules, which their real text does not break.
 *
 * Measured on the corpus (`test/processing/text_quality_test.ts`), over pages of
 * at least {@link GARBAGE_MIN_WORDS} words: the bad OCR layer's pages score
 * 0.51–0.80; born-digital pages of the other corpus PDFs at most 0.22 — except
 * four pages of `technology-acceptance-model-review.pdf` (0.9+), whose fonts map
 * glyphs to the wrong characters (`O&><<&(7009)&`): their layer is garbage too,
 * and Standard transcribes them.
 *
 * @module
 */

const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/u;
/** CJK punctuation (full-width forms, ideographic marks, brackets): words end there as at a space. */
const CJK_PUNCTUATION =
  /[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u2018-\u201f\u00b7]/gu;

/** Addresses, paths and markup are not words: they are not judged. */
const NOT_A_WORD = /:\/\/|^www\.|\\|^\/|[<>].*[<>]|@.*\.|\.(?:jpe?g|png|gif|pdf|html?|com|org|net)\b/iu;

/** The whitespace- (and CJK-punctuation-) separated tokens of a text. */
export function splitWords(text: string): string[] {
  return text.replace(CJK_PUNCTUATION, " ").split(/\s+/).filter((t) => t.length > 0);
}

/** The share of odd words from which a text layer is garbage. */
export const GARBAGE_WORD_SHARE = 0.35;

/** Fewer words than this are too few to judge (and a tiny layer is handled by its size). */
export const GARBAGE_MIN_WORDS = 30;

/** A page with fewer visible characters than this has a tiny text layer. */
export const TINY_TEXT_CHARS = 25;

const LETTER = /\p{L}/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

/** Whether one whitespace-free token looks like something no writer typed. */
export function oddWord(token: string): boolean {
  // Punctuation around a word is normal: (word), "word", word., word:, [1]
  const core = token.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, "");
  if (core.length < 3) return false;
  if (!LETTER.test(core)) return false; // numbers, dates, codes of digits and dots
  // Han, kana and Hangul words carry digits between characters (2017年8月16日); only symbols count.
  if (CJK.test(core)) return /[^\p{L}\p{M}\p{N}'’\-‐./_&@+:%]/u.test(core);
  // Symbols inside a word (not the hyphens, apostrophes, dots and slashes words and
  // abbreviations carry) mark a misread glyph: > ~ [ ] { } | \ ^ " ( ) ; , ! ?
  if (/[^\p{L}\p{M}\p{N}'’\-‐./_&@+:]/u.test(core)) return true;
  const parts = core.split(/[-‐'’./_&@+:]/).filter((p) => p.length > 0);
  for (const part of parts) {
    const hasLetter = LETTER.test(part);
    const hasDigit = /\p{N}/u.test(part);
    if (hasLetter && hasDigit) {
      // Units and codes (10km, 2nd, A4, H2O, COVID19) are letters then digits or the other
      // way round; a digit between letters (Hanoroo6nO) is a misread glyph.
      if (/\p{L}\p{N}+\p{L}/u.test(part) && !/^\p{Lu}+\p{N}*\p{Lu}*\p{N}*$/u.test(part)) return true;
      continue;
    }
    // A Latin word with no vowel at all (npltl, Knn: Cyrillic read as Latin) is no word; acronyms are all capitals.
    if (
      /^\p{sc=Latin}{3,}$/u.test(part) && LOWER.test(part) && !/^\p{Lu}+s$/u.test(part) &&
      !/[aeiouyAEIOUY\u00c0-\u024f]/u.test(part)
    ) {
      return true;
    }
    // Capitals then small letters (CTp, IIITOroM): an acronym's plural is its only real form (PDFs, IDs).
    if (/^\p{Lu}{2,}\p{Ll}/u.test(part) && !/^\p{Lu}{2,}s$/u.test(part)) return true;
    if (!UPPER.test(part) || !LOWER.test(part)) continue; // one case, or a script without case
    // Mixed case: one capital first (Word), or a camel-case name of words (JavaScript, iPhone, McDonald).
    const tail = part.slice(1);
    const capitalsInside = [...tail].filter((c) => UPPER.test(c)).length;
    if (capitalsInside === 0) continue;
    // Camel case has longer lower-case runs between its capitals; OCR garbage flips often.
    const flips = [...part].reduce(
      (n, c, i) => (i > 0 && UPPER.test(c) !== UPPER.test(part[i - 1]!) && LETTER.test(c) ? n + 1 : n),
      0,
    );
    if (capitalsInside >= 2 && flips >= 3) return true;
    if (/\p{Ll}\p{Lu}{2,}/u.test(part) || /\p{Lu}\p{Ll}\p{Lu}\p{Ll}?$/u.test(part) && flips >= 3) return true;
  }
  return false;
}

/** The share of words (three or more characters) that look odd, and how many words there are. */
export function oddWordShare(text: string): { share: number; words: number } {
  let words = 0;
  let odd = 0;
  for (const token of splitWords(text)) {
    const core = token.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, "");
    if (core.length < 3 || !LETTER.test(core) || NOT_A_WORD.test(core)) continue;
    words++;
    if (oddWord(token)) odd++;
  }
  return { share: words === 0 ? 0 : odd / words, words };
}

/** Why a page's text layer is replaced by a transcription, or null when it is kept. */
export type TextLayerVerdict = "missing" | "tiny" | "garbage" | null;

/** What the page draws, as far as the decision needs it. */
export interface PageLayout {
  /** The largest fraction of the page one picture covers (0–1). */
  largestPicture: number;
  /** Pictures placed on the page. */
  pictures: number;
  /** Vector paths painted. */
  paths: number;
}

/**
 * Whether a page's text layer is kept or the page is transcribed: missing (no text, but
 * the page draws something), tiny (a few characters beside a large picture, which may
 * hold the real text) or garbage (see the module comment).
 */
export function judgeTextLayer(text: string, layout: PageLayout | null): TextLayerVerdict {
  const chars = text.replace(/\s+/g, "").length;
  const draws = layout === null || layout.pictures > 0 || layout.paths > 0;
  if (chars === 0) return draws ? "missing" : null;
  if (chars < TINY_TEXT_CHARS && (layout === null || layout.largestPicture >= 0.12)) return "tiny";
  const { share, words } = oddWordShare(text);
  if (words >= GARBAGE_MIN_WORDS && share >= GARBAGE_WORD_SHARE) return "garbage";
  return null;
}
