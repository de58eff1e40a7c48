import assert from "node:assert/strict";
import { loadMaintDocs } from "../../bench/_maint_docs.ts";
import { loadQuestions } from "../../bench/_search_quality.ts";

Deno.test("every question of the fifth set has its evidence on its answer page, and every answer page is kept", async () => {
  const corpus = await loadMaintDocs();
  // Only reads the questions and checks each evidence phrase against its first answer page's text: no ranking.
  const questions = await loadQuestions(corpus, "search_questions_maint.json");
  assert.equal(new Set(questions.map((question) => question.id)).size, questions.length);
  const pages = new Map(corpus.map((file) => [file.file, file.pages]));
  for (const question of questions) {
    assert.equal(question.split, "held-out");
    assert.equal(question.kinds.includes("cross-language"), question.language !== question.document_language);
    for (const { file, pages: numbers } of question.answers) {
      for (const page of numbers) {
        assert.ok(
          pages.get(file)?.[page - 1],
          `Question ${question.id} names "${file}" page ${page}, which is not kept`,
        );
      }
    }
  }
});

Deno.test("every document of the fifth set keeps pages, and one is read past page 100", async () => {
  const corpus = await loadMaintDocs();
  const kept = (pages: string[]) => pages.flatMap((text, i) => text ? [i + 1] : []);
  for (const file of corpus) assert.ok(kept(file.pages).length > 0, file.file);
  assert.ok(corpus.some((file) => kept(file.pages).some((page) => page > 100)));
});
