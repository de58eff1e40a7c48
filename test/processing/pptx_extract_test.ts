import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { extractDocument } from "../../src/processing/extract.ts";
import type { ExtractResult } from "../../src/processing/extract_result.ts";
import { corpusBytes } from "./_corpus.ts";

async function read(path: string): Promise<ExtractResult> {
  return await extractDocument(await corpusBytes("pptx/" + path), path);
}

Deno.test("PowerPoint: one page per slide, in order, with the MANIFEST's slide counts", async () => {
  const counts: [string, number][] = [
    ["aascu-birth-to-career-equity-charts.pptx", 34],
    ["ohio-ela-standards-smartart-notes.pptx", 48],
    ["hebrew-lab-exam-charts-tables.pptx", 41],
    ["docling-sample-table-notes.pptx", 3],
  ];
  for (const [file, count] of counts) {
    const result = await read(file);
    assert.equal(result.page_count, count, file);
    assert.deepEqual(result.pages.map((p) => p.page), Array.from({ length: count }, (_, i) => i + 1));
  }
  const deck = await read("markitdown-test-deck-chart-table.pptx");
  assert.match(deck.pages[0]!.text, /^AutoGen: Enabling Next-Gen LLM Applications/);
  assert.match(deck.pages[2]!.text, /^A table to test parsing/);
});

Deno.test("PowerPoint: chart text, tables and marks on the markitdown deck", async () => {
  const deck = await read("markitdown-test-deck-chart-table.pptx");
  const chart = deck.pages[3]!;
  assert.match(chart.text, /a3f6004b-6f4f-4ea8-bee3-3741f4dc385f/, "chart title");
  assert.match(chart.text, /Series 1/, "series name");
  assert.match(chart.text, /2001/, "category label");
  assert.equal(chart.marked, true);
  const table = deck.pages[2]!;
  assert.match(table.text, /ColA \| ColB \| ColC/);
  assert.equal(table.marked, false, "a table's text is complete");
  assert.equal(deck.pages[5]!.marked, true, "slide 6 is a picture");
  assert.equal(deck.pages[0]!.marked, false);
});

Deno.test("PowerPoint: speaker notes are kept apart from slide text", async () => {
  const deck = await read("docling-sample-table-notes.pptx");
  assert.equal(deck.pages[1]!.notes, "Some notes on the second slide.");
  assert.doesNotMatch(deck.pages[1]!.text, /Some notes/);
  assert.equal(deck.pages[0]!.notes, undefined);
  const ohio = await read("ohio-ela-standards-smartart-notes.pptx");
  const notes = ohio.pages.map((p) => p.notes ?? "").join("").length;
  assert.ok(notes > 8000, `about 10k chars of notes, got ${notes}`);
});

Deno.test("PowerPoint: SmartArt text is read and marks its slide", async () => {
  const deck = await read("smartart-simple.pptx");
  assert.equal(deck.pages[0]!.marked, true);
  assert.ok(deck.pages[0]!.text.length > 50);
});

Deno.test("PowerPoint: text-only slides are not marked", async () => {
  const deck = await read("indonesian-biology-text-heavy.pptx");
  assert.equal(deck.page_count, 28);
  const withText = deck.pages.filter((p) => p.text.length > 0);
  assert.equal(withText.length, 26);
  assertAll(withText, (p) => !p.marked);
  // Slides 15 and 26 hold only an ActiveX control: nothing to read, so they are to view.
  for (const n of [15, 26]) {
    assert.deepEqual([deck.pages[n - 1]!.marked, deck.pages[n - 1]!.image_only], [true, true]);
  }
});

Deno.test("PowerPoint: Hebrew slide text is extracted", async () => {
  const deck = await read("hebrew-lab-exam-charts-tables.pptx");
  assert.match(deck.pages.map((p) => p.text).join("\n"), /[\u05d0-\u05ea]{3,}/);
  assert.ok(deck.pages.some((p) => p.marked));
});
