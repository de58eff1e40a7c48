import assert from "node:assert/strict";
import { convertToPdf } from "../../src/pdf_copy/libreoffice.ts";
import { matchChunksToPages, pdfPageTexts, words } from "../../src/pdf_copy/page_matching.ts";
import { docxChunks } from "./_docx_chunks.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";

const CORPUS = `${CORPUS_DIR}`;

function assertMonotone(pages: number[]): void {
  for (let i = 1; i < pages.length; i++) {
    assert.ok(
      pages[i]! >= pages[i - 1]!,
      `page of chunk ${i} (${pages[i]}) before chunk ${i - 1} (${pages[i - 1]})`,
    );
  }
}

/** Share of chunks whose first words are on the page they were given. */
function shareOnTheirPage(chunks: string[], pages: number[], texts: string[]): number {
  let found = 0;
  chunks.forEach((chunk, index) => {
    const head = words(chunk).slice(0, 4).join(" ");
    const page = words(texts[pages[index]! - 1] ?? "").join(" ");
    if (page.includes(head)) found++;
  });
  return found / chunks.length;
}

for (
  const [file, minChunks] of [
    ["chile-urban-land-policy-es.docx", 100],
    ["media-monitoring-ru-drawing.docx", 50],
    ["un-cedaw-bangladesh-report-ar.docx", 200],
  ] as const
) {
  Deno.test({
    name: `Word chunks take plausible real pages of the PDF copy: ${file}`,
    async fn() {
      await needs("soffice");
      const docx = await Deno.readFile(`${CORPUS}/docx/${file}`);
      const texts = await pdfPageTexts(await convertToPdf(docx, "docx"));
      const chunks = docxChunks(docx, 400);
      assert.ok(chunks.length >= minChunks, `${chunks.length} chunks`);
      const pages = matchChunksToPages(chunks, texts);
      assert.equal(pages.length, chunks.length);
      assertMonotone(pages);
      assert.equal(pages[0], 1);
      assert.ok(pages.at(-1)! >= texts.length - 1, `last chunk on page ${pages.at(-1)} of ${texts.length}`);
      const onPage = shareOnTheirPage(chunks, pages, texts);
      assert.ok(onPage >= 0.85, `${Math.round(onPage * 100)}% of chunks start on their page`);
      // No long stretch stuck on one page: pages advance as the text does.
      const perPage = chunks.length / texts.length;
      let run = 1;
      for (let i = 1; i < pages.length; i++) {
        run = pages[i] === pages[i - 1] ? run + 1 : 1;
        assert.ok(run <= perPage * 4 + 4, `chunks ${i - run + 1}-${i} all on page ${pages[i]}`);
      }
    },
  });
}

Deno.test("matching ignores case, punctuation, line breaks, hyphenation, headers and list numbers", () => {
  const pages = [
    "ANNUAL REPORT 2023\n1. Introduction to the project\nThe com-\nmittee met twice in spring and agreed",
    "ANNUAL REPORT 2023\non the budget for the following year.\n2. Results\nOutcomes were good overall",
    "ANNUAL REPORT 2023\nPage 3\n3. Outlook\nNext year the committee will meet monthly",
  ];
  const chunks = [
    "Introduction to the project",
    "The committee met twice in spring and agreed on the budget for the following year.",
    "Results",
    "Outcomes were good overall",
    "Outlook",
    "Next year the committee will meet monthly",
  ];
  assert.deepEqual(matchChunksToPages(chunks, pages), [1, 1, 2, 2, 3, 3]);
});

Deno.test("a chunk that is not found keeps the page before it, and a far repeat needs confirmation", () => {
  const pages = [
    "alpha beta gamma delta",
    "epsilon zeta",
    "eta theta",
    "iota kappa",
    "lambda mu alpha beta gamma delta",
  ];
  assert.deepEqual(
    matchChunksToPages(["alpha beta gamma delta", "nothing like this", "epsilon zeta"], pages),
    [1, 1, 2],
  );
  // "lambda mu" is 4 pages ahead with nothing after it to confirm: it is not trusted.
  assert.deepEqual(matchChunksToPages(["alpha beta", "lambda mu", "omega"], pages), [1, 1, 1]);
  // Confirmed by the next chunk, the jump is taken.
  assert.deepEqual(matchChunksToPages(["alpha beta", "lambda mu", "alpha beta gamma delta"], pages), [
    1,
    5,
    5,
  ]);
});
