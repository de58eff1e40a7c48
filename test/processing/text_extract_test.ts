import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { extractDocument } from "../../src/processing/extract.ts";
import { corpusBytes } from "./_corpus.ts";

Deno.test("Text: UTF-16 with a BOM is decoded", async () => {
  const result = await extractDocument(await corpusBytes("text/fake-text-utf16-bom.txt"), "fake.txt");
  assert.equal(result.type, "txt");
  assert.match(result.pages[0]!.text, /This is a test document/);
  assert.equal(result.pages[0]!.chunks, undefined);
});

Deno.test("Text: a long novel becomes estimated pages at line boundaries", async () => {
  const bytes = await corpusBytes("text/war-and-peace-gutenberg.txt");
  const result = await extractDocument(bytes, "war-and-peace.txt");
  assert.equal(result.pages_estimated, true);
  assert.ok(Math.abs(result.page_count - bytes.length / 3000) < bytes.length / 3000 * 0.15);
  assertAll(result.pages, (p) => p.text.length <= 3000 && !p.marked);
});

Deno.test("Markdown: chunks carry the nearest heading", async () => {
  const result = await extractDocument(await corpusBytes("text/markitdown-readme.md"), "README.md");
  assert.equal(result.type, "md");
  const sections = result.pages.flatMap((p) => p.chunks ?? []).map((c) => c.section);
  assert.ok(sections.includes("Installation"), JSON.stringify([...new Set(sections)]));
});

Deno.test("Text: every script of the UDHR file survives", async () => {
  const result = await extractDocument(
    await corpusBytes("text/udhr-article-1-all-languages.txt"),
    "udhr.txt",
  );
  const all = result.pages.map((p) => p.text).join("\n");
  for (const re of [/[\u4e00-\u9fff]/, /[\u0600-\u06ff]/, /[\u05d0-\u05ea]/, /[А-Яа-я]/, /[\u0900-\u097f]/]) {
    assert.match(all, re);
  }
});
