import assert from "node:assert/strict";
import { guideText, loadGuidesDocs } from "../../bench/_guides_docs.ts";
import { assertUnseenSet } from "./_unseen_set.ts";

Deno.test("a DocBook section reads as its body, without its navigation header and footer", () => {
  const text = guideText(
    `<html><body><div class="navheader"><table><tr><th>2.5. Memory</th></tr></table><hr></div>` +
      `<div class="section"><h2 class="title">2.5. Memory &amp; disk</h2><p>You need   at least
      780MB of memory.</p><table><tr><td>sda</td><td>First hard disk</td></tr></table></div>` +
      `<div class="navfooter"><a href="ch03.html">Next</a></div></body></html>`,
  );
  assert.equal(text, "2.5. Memory & disk\n\nYou need at least 780MB of memory.\n\nsda\tFirst hard disk");
});

Deno.test("a Sphinx page reads as its main body, without the sidebar or the headings' permalink marks", () => {
  const text = guideText(
    `<html><body><div class="related">Previous</div><div class="body" role="main"><section>` +
      `<h1>5. Managing Packages<a class="headerlink" href="#pkgs" title="Permalink to this heading">¶</a></h1>` +
      `<p>Upload the <code>.changes</code> file last.</p></section></div>` +
      `<div class="sphinxsidebar" role="navigation"><h4>Next topic</h4></div></body></html>`,
  );
  assert.equal(text, "5. Managing Packages\n\nUpload the .changes file last.");
});

Deno.test("every question of the fourth set has its evidence on its answer page, and every answer page is kept", async () => {
  const corpus = await loadGuidesDocs();
  await assertUnseenSet(corpus, "search_questions_guides.json");
});
