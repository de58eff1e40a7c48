/**
 * Specifications of text analysis: a query's word meets the page's word in
 * its other forms, in the languages of the corpus. Words are taken from the
 * corpus files.
 */
import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import {
  analyze,
  DEFAULT_ANALYSIS,
  latinLanguageOf,
  queryTerms,
  TermMatcher,
} from "../../src/analysis/analysis.ts";

/** Whether every term of a query would find the text, analyzed as the index analyzes it. */
function finds(query: string, text: string, options = DEFAULT_ANALYSIS): boolean {
  const terms = queryTerms(query, options);
  const indexed = new Set(analyze(text, options));
  // A query that analyses to no terms finds nothing (every() alone would say it finds anything).
  return terms.length > 0 && terms.every((term) => term.terms.some((t) => indexed.has(t)));
}

Deno.test("Russian inflections meet: романам and роман, квартирой and квартиры", () => {
  assert.ok(finds("романам", "Новые романы и роман года в библиотеке"));
  assert.ok(finds("роман", "рекомендации по романам"));
  assert.ok(finds("контракт", "3.1.Цена Контракта составляет"));
  assert.ok(finds("неустойки", "Размер неустойки, определенный пунктами 7.1.1-7.1.5"));
  // From the corpus's press digest and state contract: the question's case is not the page's.
  assert.ok(finds("советской квартирой", "как новые советские квартиры сразу же требуют ремонта"));
  assert.ok(finds("при землетрясении", "обстоятельств непреодолимой силы (землетрясение и другие"));
  // Off, a Russian word meets only itself.
  const off = { ...DEFAULT_ANALYSIS, russianStemming: false };
  assert.ok(!finds("романам", "Новые романы и роман года в библиотеке", off));
  assert.ok(!finds("советской квартирой", "как новые советские квартиры сразу же требуют ремонта", off));
});

Deno.test("Arabic and Persian words meet without their prefixes and suffixes", () => {
  // و, ال, بال and the feminine ending come off: المساواة, والمساواة, بالمساواة.
  assert.ok(finds("المساواة", "ملتزمة ببلوغ هدفَي كفالة المساواة بين الجنسين"));
  assert.ok(finds("والمساواة", "كفالة المساواة بين الجنسين"));
  // ال before ا, which folding writes اال (see folding.ts), comes off too.
  assert.ok(finds("الانتخابات", "قانون انتخاب النساء"));
  assert.ok(finds("انتخاب", "والانتخابات البرلمانية"));
  assert.ok(finds("حقوق", "في الكرامة والحقوق"));
  // Persian: with and without the zero-width non-joiner, with the plural ها.
  assert.ok(finds("می‌آیند", "تمام افراد بشر آزاد بدنیا میایند"));
  assert.ok(finds("حقوق", "از لحاظ حیثیت و حقوق با هم برابرند"));
});

Deno.test("English, French, Spanish, German and Portuguese words meet their other forms", () => {
  assert.ok(finds("repondant accord", "Plus de 89 % des répondants sont en accord"), "typed without accents");
  assert.ok(finds("sécurité cyclistes", "Améliorer la sécurité des cyclistes et des piétons"));
  assert.ok(finds("vivienda", "la ejecución de la vivienda de interés social"));
  assert.ok(finds("viviendas exentas", "el 78% de las viviendas está exento de pago"));
  assert.ok(finds("Traumata", "Psychische Traumata führen häufig zu dissoziativer Spaltung"));
  assert.ok(finds("direitos", "iguais em dignidade e direito"));
  assert.ok(finds("disbursement confirmed", "disbursements to creditors are made soon after confirmation"));
  assert.equal(latinLanguageOf("Le transport actif est une composante essentielle de la communauté"), "fr");
  assert.equal(
    latinLanguageOf("La segregación social es un mecanismo de reproducción de las desigualdades"),
    "es",
  );
  assert.equal(latinLanguageOf("Die Trauerarbeit besteht in der allmählichen Überwindung der Trauer"), "de");
});

Deno.test("numbers are found however their digits are grouped; codes are not stemmed", () => {
  assert.ok(finds("39921700", "Цена Контракта составляет 39 921 700,00 руб."));
  assert.ok(finds("4755785.11", "营业收入（元） 4,755,785.11 5,699,227.63"));
  assert.ok(finds("1 000 000", "a budget of 1,000,000 dollars"));
  assert.deepEqual(queryTerms("IP54 Caa1")[0]!.terms, ["ip54"]);
  assert.deepEqual(queryTerms("IP54 Caa1")[1]!.terms, ["caa1"]);
});

Deno.test("a Chinese query finds its words' two-character tokens; segmentation adds dictionary words", () => {
  const page = "东北电气发展股份有限公司 2018 年第一季度报告全文 营业收入（元） 4,755,785.11";
  const terms = queryTerms("东北电气2018年第一季度营业收入是多少");
  const words = terms.map((term) => term.word);
  assert.ok(words.includes("营业") && words.includes("收入"), `words: ${words.join(" ")}`);
  const positions = new TermMatcher(terms).positions(page, "en");
  assert.ok(positions[words.indexOf("营业")]!.length > 0);
  // With segmentation (measured and off), the index and the query also hold ICU's words of three characters or more.
  const segmented = { ...DEFAULT_ANALYSIS, segmentation: true };
  assert.ok(analyze(page, segmented).includes("有限公司"));
  assert.ok(!analyze(page).includes("有限公司"));
  const query = queryTerms("有限公司的报告", segmented);
  const company = query.findIndex((term) => term.word === "有限公司");
  assert.ok(company >= 0 && query[company]!.terms.every((term) => analyze(page, segmented).includes(term)));
  assert.equal(new TermMatcher(query, segmented).positions(page, "en")[company]!.length, 1);
});

Deno.test("analyzed text never holds a private-use character, so no page can forge a scope token", () => {
  const forged = "quokka \ue0001098101110 \ue0002098101110047 text";
  assertAll(analyze(forged), (term) => !/\p{Co}/u.test(term));
  assertAll(
    queryTerms(forged),
    (term) => term.terms.length > 0 && term.terms.every((t) => !/\p{Co}/u.test(t)),
  );
});

Deno.test("German text is stemmed as German: Entwicklungen meets Entwicklung, Bedingungen meets Bedingung", () => {
  // Words of the corpus's German essay (cg-jung-ejournal-de): plurals only the German stemmer takes back.
  const text =
    "Die Entwicklungen der Psychologie und die Bedingungen der Traumata sind nicht einfach zu verstehen";
  assert.equal(latinLanguageOf(text), "de");
  assert.ok(finds("Entwicklung", text));
  assert.ok(finds("Bedingung", text));
  // English stemming of the page would leave the plurals as they are, and the questions would not find it.
  assert.ok(!analyze(text, DEFAULT_ANALYSIS).includes("entwicklungen"));
});
