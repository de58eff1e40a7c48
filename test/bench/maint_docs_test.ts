import assert from "node:assert/strict";
import { loadMaintDocs } from "../../bench/_maint_docs.ts";
import { assertUnseenSet } from "./_unseen_set.ts";

Deno.test("every question of the fifth set has its evidence on its answer page, and every answer page is kept", async () => {
  const corpus = await loadMaintDocs();
  await assertUnseenSet(corpus, "search_questions_maint.json");
});

Deno.test("every document of the fifth set keeps pages, and one is read past page 100", async () => {
  const corpus = await loadMaintDocs();
  const kept = (pages: string[]) => pages.flatMap((text, i) => text ? [i + 1] : []);
  for (const file of corpus) assert.ok(kept(file.pages).length > 0, file.file);
  assert.ok(corpus.some((file) => kept(file.pages).some((page) => page > 100)));
});
