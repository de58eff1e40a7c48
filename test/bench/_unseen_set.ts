/**
 * Test helper: what every evaluation set written before any ranking ran on it must hold, checked on its
 * text only (no ranking runs).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { CorpusFile } from "../../bench/_corpus_text.ts";
import { loadQuestions } from "../../bench/_search_quality.ts";

/**
 * Each question of `file` has a unique id, is held out, is tagged cross-language exactly when asked in
 * another language than its page's, and names only kept pages; `loadQuestions` itself checks each evidence
 * phrase against its first answer page's text.
 */
export async function assertUnseenSet(corpus: CorpusFile[], file: string): Promise<void> {
  const questions = await loadQuestions(corpus, file);
  assert.equal(new Set(questions.map((question) => question.id)).size, questions.length);
  const pages = new Map(corpus.map((document) => [document.file, document.pages]));
  for (const question of questions) {
    assert.equal(question.split, "held-out");
    assert.equal(question.kinds.includes("cross-language"), question.language !== question.document_language);
    for (const { file: answer, pages: numbers } of question.answers) {
      for (const page of numbers) {
        assert.ok(
          pages.get(answer)?.[page - 1],
          `Question ${question.id} names "${answer}" page ${page}, which is not kept`,
        );
      }
    }
  }
}
