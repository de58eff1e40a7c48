/**
 * Text folding for the search index: the same folding runs over indexed text
 * and query text, so variants of a letter meet in one token.
 *
 * - Compatibility forms (NFKC): ligatures ﬁ ﬂ, full-width letters, Arabic
 *   presentation forms as PDFs often extract them.
 * - Latin and Greek accents dropped; ё→е; æ→ae, œ→oe, ß→ss, ø→o, ł→l.
 * - Arabic/Persian: harakat and tatweel removed; أ إ آ ٱ → ا, ى ی ئ → ي,
 *   ک → ك, ة → ه, ؤ → و; Arabic-Indic and Persian digits → 0-9; every لا
 *   becomes ال, because PDFs often extract the lam-alef ligature with its
 *   letters swapped (المشكلات as المشكالت).
 * - Hebrew points (niqqud, cantillation) removed.
 * - Zero-width characters and soft hyphens removed; direction marks become spaces; a word broken by a
 *   hyphen at a line end is joined.
 * - Runs of Chinese, Japanese, Korean and Thai (written without spaces) are
 *   written as overlapping two-character tokens: 服务网格 → 服务 务网 网格.
 *
 * @module
 */

const LETTER_MAP: Readonly<Record<string, string>> = {
  "æ": "ae",
  "œ": "oe",
  "ß": "ss",
  "ø": "o",
  "ł": "l",
  "đ": "d",
  "ð": "d",
  "þ": "th",
  "ı": "i",
  "ё": "е",
  "أ": "ا",
  "إ": "ا",
  "آ": "ا",
  "ٱ": "ا",
  "ى": "ي",
  "ی": "ي",
  "ئ": "ي",
  "ک": "ك",
  "ة": "ه",
  "ۀ": "ه",
  "ؤ": "و",
};

const LETTERS = new RegExp(`[${Object.keys(LETTER_MAP).join("")}]`, "g");
/** Combining accents (after NFD), except the breve that makes й from и. */
const LATIN_MARKS = /(?<![иИ])[\u0300-\u036f]|[\u0300-\u0305\u0307-\u036f]/g;
/** Arabic harakat, superscript alef, Quranic marks and tatweel. */
const ARABIC_MARKS = /[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed\u0640]/g;
/** Hebrew cantillation and points (niqqud). */
const HEBREW_MARKS = /[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]/g;
/** Soft hyphen and zero-width characters (ZWNJ included: Persian spells with and without it). */
const INVISIBLE = /[\u00ad\u200b\u200c\u200d\u2060\ufeff]/g;
/** Direction marks and embeddings, which PDFs put around runs of other scripts: a word boundary. */
const BIDI_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Lam-alef, which PDFs often extract with its letters swapped. */
const LAM_ALEF = /لا/g;
/** A hyphen at a line end inside a word: "electri-\ncity". */
const LINE_END_HYPHEN = /(\p{Ll})-[ \t]*\r?\n[ \t]*(\p{Ll})/gu;
/** Scripts written without spaces between words. */
export const UNSPACED_RUN =
  /[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\u0e00-\u0e7f\u{20000}-\u{2fa1f}]+/gu;

/** Folds text for the search index and for queries alike (see the module doc). */
export function foldText(text: string): string {
  return foldCharacters(text).replace(UNSPACED_RUN, (run) => ` ${bigrams(run).join(" ")} `);
}

/** The last text folded and its folding: analysis looks at a passage's text twice in a row (language, terms). */
let last = { text: "", folded: "" };

/** The folding of {@linkcode foldText} without writing unspaced runs as two-character tokens. */
export function foldCharacters(text: string): string {
  if (text === last.text) return last.folded;
  const folded = foldAll(text);
  last = { text, folded };
  return folded;
}

function foldAll(text: string): string {
  let folded = text.normalize("NFKC").toLowerCase();
  folded = folded.replace(BIDI_CONTROLS, " ").replace(INVISIBLE, "").replace(LINE_END_HYPHEN, "$1$2");
  folded = folded.normalize("NFD").replace(LATIN_MARKS, "").normalize("NFC");
  folded = folded.replace(ARABIC_MARKS, "").replace(HEBREW_MARKS, "");
  folded = folded.replace(LETTERS, (letter) => LETTER_MAP[letter] ?? letter).replace(LAM_ALEF, "ال");
  folded = folded.replace(
    /[\u0660-\u0669\u06f0-\u06f9]/g,
    (digit) => String((digit.charCodeAt(0) & 0xf) % 10),
  );
  return folded;
}

/** The overlapping two-character tokens of a run of unspaced script. */
export function bigrams(run: string): string[] {
  const characters = [...run];
  if (characters.length < 2) return characters;
  const out: string[] = [];
  for (let i = 0; i + 1 < characters.length; i++) out.push(characters[i]! + characters[i + 1]!);
  return out;
}

/** Whether a token is written in a script without spaces (so it came from {@linkcode bigrams}). */
export function isUnspacedToken(token: string): boolean {
  UNSPACED_RUN.lastIndex = 0;
  const match = UNSPACED_RUN.exec(token);
  return match !== null && match[0] === token;
}
