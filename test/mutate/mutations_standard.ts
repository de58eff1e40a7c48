/**
 * Planted bugs for issue 26's Standard, vision, drawing and read_document
 * limits (branch h-standard); see `mutations.ts` for the shape.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const DECLARED_SIZE = "test/render/declared_size_test.ts";
const HEADINGS = "test/mcp/heading_lookalikes_test.ts";
const BUDGET = "test/workers/standard_budget_test.ts";
const SHUTDOWN = "test/e2e/standard_shutdown_test.ts";
const VISION_LIMITS = "test/workers/vision_limits_test.ts";

/** This branch's mutations. */
export const MUTATIONS_STANDARD: Mutation[] = [
  {
    name: "drawing: the declared-size guard reads only the raw bytes (no resolved values)",
    file: "src/render/image_size_guard.ts",
    from: "if (!(object instanceof PDFRawStream)) continue;",
    to: "if (object) continue;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "drawing: the declared-size guard ignores what pdf-lib resolved",
    file: "src/render/image_size_guard.ts",
    from: "return larger(raw, larger(scanned, parsed));",
    to: "return raw;",
    tests: [DECLARED_SIZE],
  },
  {
    name: "read_document: heading look-alikes in page text left as they are",
    file: "src/mcp/tools/read_document.ts",
    from: "    : escapeHeadingLookalikes(page.text);",
    to: "    : page.text;",
    tests: [HEADINGS],
  },
  {
    name: "read_document: only ASCII dashes taken for a heading look-alike",
    file: "src/mcp/tools/read_document.ts",
    from: "(?=[-\\u2010-\\u2015\\u2212\\ufe58\\ufe63\\uff0d]{3,}",
    to: "(?=[-]{3,}",
    tests: [HEADINGS],
  },
  {
    name: "Standard: every page transcribed, past the page budget",
    file: "src/processing/standard.ts",
    from: 'for (const { page, verdict } of pages.slice(budget.maxPages)) skip(page, verdict, "pages");',
    to: "",
    tests: [BUDGET],
  },
  {
    name: "Standard: the time budget never runs out",
    file: "src/processing/standard.ts",
    from: "const timer = setTimeout(() => timeUp.abort(), budget.maxMs);",
    to: "const timer = setTimeout(() => {}, budget.maxMs);",
    tests: [BUDGET],
  },
  {
    name: "Standard: a budget-cut document is not told so",
    file: "src/workers/processing_worker.ts",
    from: "return { page_count: pageCount, pages_estimated: estimated, pages, ...incomplete };",
    to: "return { page_count: pageCount, pages_estimated: estimated, pages };",
    tests: [BUDGET],
  },
  {
    name: "processing: no slot kept for a person with nothing being read",
    file: "src/workers/processing_worker.ts",
    from: "if (this.#inFlight.size >= limit && owned > 0) continue;",
    to: "if (this.#inFlight.size >= limit) continue;",
    tests: [BUDGET],
  },
  {
    name: "processing: claims in upload order, not in turns by owner",
    file: "src/workers/processing_worker.ts",
    from: ": claimableProcessingPerPerson(this.#app.db, { now, reclaimFor, perPerson: limit + 1 });",
    to: ": claimableProcessing(this.#app.db, { now, reclaimFor, limit: this.#inFlight.size + limit + 1 });",
    tests: [BUDGET],
  },
  {
    name: "processing: a deletion does not stop the transcription",
    file: "src/workers/processing_worker.ts",
    from: 'if (event.type === "DocumentDeleted") why = "The document was deleted";',
    to: 'if (event.type === "DocumentDeleted") why = null;',
    tests: [BUDGET],
  },
  {
    name: "Tesseract: an aborted page's run is not killed",
    file: "src/processing/transcribers/tesseract.ts",
    from: 'signal?.addEventListener("abort", kill, { once: true });',
    to: "",
    // The SIGTERM test may see the page's run end by itself within its limit: deletion's 5 s tell.
    tests: [BUDGET],
  },
  {
    name: "processing: stopping the worker waits for transcriptions to end",
    file: "src/workers/processing_worker.ts",
    from: "for (const stop of this.#stops.values()) stop.abort(new TranscriptionStopped(STOPPING));",
    to: "",
    tests: [SHUTDOWN],
  },
  {
    name: "processing: a stopped transcription's lease is not given back",
    file: "src/workers/processing_worker.ts",
    from: "if (error.message === STOPPING) await lease.handBack();",
    to: "",
    tests: [SHUTDOWN],
  },
  {
    name: "vision: the answer body read without a cap",
    file: "src/processing/transcribers/vision_http.ts",
    from: "if (size > maxBytes) return null;",
    to: "",
    tests: [VISION_LIMITS],
  },
  {
    name: "vision: max_tokens not asked in the OpenAI shape",
    file: "src/processing/transcribers/vision_http.ts",
    from: "        max_tokens: MAX_ANSWER_TOKENS,\n        temperature: 0,\n        messages: [",
    to: "        temperature: 0,\n        messages: [",
    tests: [VISION_LIMITS],
  },
  {
    name: "Standard: a transcription longer than the page cap kept whole",
    file: "src/processing/standard.ts",
    from: "if (text.length <= MAX_PAGE_TEXT_CHARS) return text;",
    to: "if (text.length >= 0) return text;",
    tests: [VISION_LIMITS],
  },
];
