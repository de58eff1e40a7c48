import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { extractDocument } from "../../src/processing/extract.ts";
import type { ExtractResult } from "../../src/processing/extract_result.ts";
import { corpusBytes } from "./_corpus.ts";

async function read(path: string): Promise<ExtractResult> {
  return await extractDocument(await corpusBytes("docx/" + path), path);
}

function sections(result: ExtractResult): (string | null)[] {
  const out: (string | null)[] = [];
  for (const page of result.pages) {
    for (const chunk of page.chunks ?? []) {
      if (out.length === 0 || out[out.length - 1] !== chunk.section) out.push(chunk.section);
    }
  }
  return out;
}

Deno.test("Word: chunks carry the headings of the document as sections", async () => {
  const result = await read("docling-word-sample.docx");
  assert.equal(result.pages_estimated, true);
  assert.deepEqual(sections(result), [null, "Swimming in the lake", "Let’s swim!", "Let’s eat"]);
  const page = result.pages[0]!;
  assert.equal(page.text, page.chunks!.map((c) => c.text).join("\n\n"));
});

Deno.test("Word: localized heading styles (Überschrift) are headings", async () => {
  const result = await read("cg-jung-ejournal-de-footnotes.docx");
  const s = sections(result);
  assert.ok(s.includes("2.1. Umgang mit dem Tod – früher und heute"));
  assert.ok(s.includes("5.3. C.G. Jung – Stirb und Werde"));
});

Deno.test("Word: a long handbook gets estimated pages of about 3,000 characters", async () => {
  const result = await read("doj-chapter13-trustee-handbook-long.docx");
  assert.ok(result.page_count > 250 && result.page_count < 320, String(result.page_count));
  assertAll(result.pages, (p) => p.text.length <= 3100);
  assert.ok(sections(result).includes("CHAPTER 1 – INTRODUCTION"));
});

Deno.test("Word: table cells are joined on rows", async () => {
  const result = await read("markitdown-test-doc.docx");
  assert.match(result.pages.map((p) => p.text).join("\n"), /\S+ \| \S+/);
  const rich = await read("docling-rich-table-cells.docx");
  assert.ok(rich.pages[0]!.text.split("\n").filter((l) => l.includes(" | ")).length >= 9);
});

Deno.test("Word: a native chart is read and marks its page", async () => {
  const result = await read("docling-chart-drawingml.docx");
  assert.equal(result.pages[0]!.marked, true);
});

Deno.test("Word: Arabic and Russian text is extracted", async () => {
  assert.match((await read("un-cedaw-bangladesh-report-ar.docx")).pages[3]!.text, /[\u0627-\u064a]{4,}/);
  assert.match((await read("spb-state-contract-ru-tables.docx")).pages[0]!.text, /[А-Яа-я]{4,}/);
});

Deno.test("Word: footnotes are appended to the chunk citing them", async () => {
  const result = await read("brazil-visa-form-footnotes.docx");
  assert.match(result.pages.map((p) => p.text).join("\n"), /\[1\] \S+/);
});
