/**
 * A search excerpt as the console shows it: the words of the query marked,
 * lines that hold no letter or digit (chart labels such as `!`, `#`, `$!`
 * that a PDF's text layer carries) left out, and a long excerpt cut to the
 * part around its first match. The page also offers the excerpt whole,
 * exactly as the agent gets it.
 *
 * @module
 */

/** A run of an excerpt's text, marked when it is a word of the query. */
export interface ExcerptPart {
  text: string;
  mark: boolean;
}

/** What the console shows of one excerpt. */
export interface ShownExcerpt {
  parts: ExcerptPart[];
  /** Whether anything of the excerpt was left out (symbol-only lines, or text before or after the cut). */
  shortened: boolean;
}

/** About how many characters of an excerpt are shown before it is cut. */
const SHOWN_CHARACTERS = 420;

/** Small English words not worth marking: they are everywhere. */
const COMMON = new Set(
  "and the for with from that this into are was were has have had not but you your its our their what which who how when where why all any can will"
    .split(
      " ",
    ),
);

/** The query's words, each as the start a matching word of the text must have (a crude stem). */
export function queryStems(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const stems = words
    .filter((word) => (word.length >= 3 && !COMMON.has(word)) || /\p{N}/u.test(word))
    .map((word) => (word.length > 5 ? word.slice(0, Math.max(5, word.length - 3)) : word));
  return [...new Set(stems)];
}

/** Splits text into parts, marking each word that starts with one of the stems. */
export function markWords(text: string, stems: readonly string[]): ExcerptPart[] {
  const parts: ExcerptPart[] = [];
  let plain = "";
  for (const piece of text.split(/([\p{L}\p{N}]+)/u)) {
    const lower = piece.toLowerCase();
    if (piece !== "" && stems.some((stem) => lower.startsWith(stem))) {
      if (plain) parts.push({ text: plain, mark: false });
      plain = "";
      parts.push({ text: piece, mark: true });
    } else {
      plain += piece;
    }
  }
  if (plain) parts.push({ text: plain, mark: false });
  return parts;
}

/** The excerpt to show for a query: cleaned, cut around its first match, its matches marked. */
export function shownExcerpt(excerpt: string, query: string): ShownExcerpt {
  const lines = excerpt.split("\n");
  const kept = lines.filter((line) => /[\p{L}\p{N}]/u.test(line));
  let text = kept.join("\n").replace(/\n{3,}/g, "\n\n").trim();
  let shortened = kept.length !== lines.filter((line) => line.trim() !== "").length;
  const stems = queryStems(query);
  if (text.length > SHOWN_CHARACTERS) {
    const lower = text.toLowerCase();
    const first = Math.min(
      ...stems.map((stem) => lower.search(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(stem)}`, "u")))
        .filter((at) => at >= 0),
      Infinity,
    );
    const from = first === Infinity ? 0 : Math.max(0, first - Math.floor(SHOWN_CHARACTERS / 3));
    const start = from === 0 ? 0 : Math.max(from, text.lastIndexOf(" ", from) + 1);
    const endAt = Math.min(text.length, start + SHOWN_CHARACTERS);
    const end = endAt === text.length ? endAt : Math.max(text.lastIndexOf(" ", endAt), start + 1);
    text = `${start > 0 ? "…" : ""}${text.slice(start, end).trim()}${end < text.length ? "…" : ""}`;
    shortened = true;
  }
  // Anything changed (a line left out, blank lines joined, a cut): the page offers the excerpt whole too.
  return { parts: markWords(text, stems), shortened: shortened || text !== excerpt };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
