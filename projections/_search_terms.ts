/**
 * From a user's query to search terms: folded like the index, split into
 * words (two-character tokens for Chinese, Japanese, Korean, Thai), without
 * stop words when other words remain, each quoted so that no user text is
 * read as FTS5 syntax.
 *
 * @module
 */
import { foldText, isUnspacedToken } from "./_text_folding.ts";

/** At most this many distinct terms of a query are searched. */
export const MAX_QUERY_TERMS = 32;

/** The characters FTS5's unicode61 tokenizer keeps in tokens (as configured: letters, numbers, marks, private use). */
const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

// Words that say little about what is asked, in the languages of the corpus.
const STOP_WORDS = new Set(
  (
    // English, with the words questions are made of.
    "a about above after again against all am an and any are aren as at be because been before being below " +
    "between both but by can cannot could couldn did didn do does doesn doing don down during each few for " +
    "from further had has have having he her here hers herself him himself his how i if in into is isn it " +
    "its itself let me more most my myself no nor not of off on once only or other ought our ours ourselves " +
    "out over own same she should so some such than that the their theirs them themselves then there these " +
    "they this those through to too under until up very was wasn we were weren what when where which while " +
    "who whom why with won would you your yours yourself yourselves also will shall might must please " +
    "tell show find explain describe give according mentioned say says said anything something there's " +
    "whats what's how's does do did done get got one ones many much " +
    // French
    "le la les un une des du de d l et est en au aux ce cet cette ces que qui quoi dans pour par sur avec " +
    "sont ou où il elle ils elles nous vous on ne pas plus se sa son ses leur leurs comment quel quelle " +
    "quels quelles " +
    // Spanish and Portuguese
    "el los las y es del al lo que en por para con una unos unas su sus como cual cuál qué cuando dónde " +
    "o um uma os as do da dos das no na nos nas em e é são pelo pela " +
    // German
    "der die das den dem des ein eine einer eines einem einen und ist sind im in zu mit von für auf wie " +
    "was wer wo wann warum welche welcher nicht auch es sie er wir ihr " +
    // Russian
    "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было " +
    "вот от меня еще нет о из ему теперь когда даже ну ли если уже или ни быть был него до вас нибудь " +
    "опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была " +
    "сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним " +
    "здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об " +
    "другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем " +
    "хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между"
  ).split(/\s+/).map((word) => foldText(word).trim()),
);

/**
 * The distinct words of a query, folded, in order of appearance, without stop
 * words unless nothing else is left, and at most {@linkcode MAX_QUERY_TERMS}.
 * Single letters and single unspaced characters are dropped the same way.
 */
export function queryTerms(query: string): string[] {
  // Private-use characters are left out: the index's scope tokens start with one.
  const words = foldText(query).replace(/\p{Co}/gu, " ").match(TOKEN) ?? [];
  const all: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    if (seen.has(word)) continue;
    seen.add(word);
    all.push(word);
  }
  const content = all.filter((word) => !isWeak(word));
  return (content.length > 0 ? content : all).slice(0, MAX_QUERY_TERMS);
}

/** Quotes a term for FTS5 MATCH: the term becomes a string, never an operator. */
export function quoteTerm(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

function isWeak(word: string): boolean {
  if (STOP_WORDS.has(word)) return true;
  const length = [...word].length;
  if (length === 1 && !/\p{N}/u.test(word)) return true;
  return length === 1 && isUnspacedToken(word);
}

/**
 * A term as an FTS5 expression: quoted, and for a single Chinese, Japanese,
 * Korean or Thai character a prefix query, which finds the two-character
 * tokens it starts.
 */
export function termExpression(term: string): string {
  return [...term].length === 1 && isUnspacedToken(term) ? `${quoteTerm(term)}*` : quoteTerm(term);
}
