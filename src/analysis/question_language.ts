/**
 * The language of a question. A page tells its language by its commonest
 * words ({@linkcode latinLanguageOf}), but a question is a dozen words and
 * often holds none or one of them ("Wie melden sich E-Mail-Programme beim
 * Mailserver des Providers an?" has only "sich"), so it was taken for English
 * and its words translated as English ones. Here a question's language is
 * its commonest words' when they agree (at least two, one language); else the
 * language that ELD (the `eld` package's character n-gram detector) reads, when
 * the question also holds a function word of that language (a question word,
 * an article, a preposition): a list of names or terms with none of them stays
 * English, so an English question of names is not left untranslated.
 *
 * @module
 */
import { eld } from "eld/extrasmall";
import { type LatinLanguage, latinLanguageOf, markerCounts } from "./analysis.ts";
import { foldCharacters } from "./folding.ts";

/** Words a question in each language is made of (folded), beside the commonest words of its pages. */
const FUNCTION_WORDS: Readonly<Record<Exclude<LatinLanguage, "en">, ReadonlySet<string>>> = Object
  .fromEntries(
    Object.entries({
      de: "der die das und ist nicht ein eine zu mit von den dem sich auf fur im wie was wer wo wann warum " +
        "welche welcher welches ich mein meine kann man des beim",
      fr:
        "le la les des et est une du dans pour qui sur pas au avec ce sont par il comment quel quelle quels " +
        "quelles pourquoi que qu quoi ou je mon",
      es:
        "el los las del y es una por para con se su al como mas pero sus lo que cual cuales cuando donde quien hay",
      pt: "os do da dos das um uma para com nao em no na ao pelo pela e que qual quais quando onde como sao",
      nl:
        "het een dat zijn niet voor aan ook wordt worden bij naar deze kunnen geen heeft hebben ze wat welke " +
        "waar waarom wanneer hoe ik mijn kan",
      id:
        "yang dan di ini itu dengan untuk dari dalam tidak adalah pada ke akan apa bagaimana mengapa kapan siapa",
    }).map(([language, words]) => [language, new Set(words.split(" "))]),
  ) as unknown as Record<Exclude<LatinLanguage, "en">, ReadonlySet<string>>;

/** ELD's codes of the languages told apart here (it knows Malay, not Indonesian: they share most words). */
const ELD_CODES: Readonly<Record<string, LatinLanguage>> = {
  en: "en",
  de: "de",
  fr: "fr",
  es: "es",
  pt: "pt",
  nl: "nl",
  ms: "id",
};

/** The Latin-script language a question is asked in (English when nothing says otherwise). */
export function questionLanguageOf(question: string): LatinLanguage {
  const counts = markerCounts(question);
  const most = Math.max(0, ...counts.values());
  const leaders = [...counts].filter(([, count]) => count === most);
  if (most >= 2 && leaders.length === 1) return leaders[0]![0];
  const read = detected(question);
  const words = foldCharacters(question).match(/\p{L}+/gu) ?? [];
  if (read !== "en" && words.some((word) => FUNCTION_WORDS[read].has(word))) return read;
  return most >= 2 ? latinLanguageOf(question) : "en";
}

/** The language ELD scores highest among those told apart here. */
function detected(question: string): LatinLanguage {
  const scores = eld.detect(question).getScores() as Record<string, number>;
  let best: LatinLanguage = "en";
  let score = 0;
  for (const [code, language] of Object.entries(ELD_CODES)) {
    if ((scores[code] ?? 0) > score) {
      best = language;
      score = scores[code]!;
    }
  }
  return best;
}
