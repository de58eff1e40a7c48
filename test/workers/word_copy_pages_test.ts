/**
 * Word files take their PDF copy's pages: every Word file of the corpus is
 * uploaded, read and copied once (LibreOffice), then checked as an agent sees
 * it through the MCP tools: page N's text is the copy's page N (compared with
 * poppler's `pdftotext`, a reader Sergo does not use), sections stay the
 * headings above the text, search repeats no excerpt, replay gives the same
 * pages, and a copy made again places the text by new events.
 */
import type { BlobStore } from "../../src/blob_store.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { zipSync } from "fflate";
import { type DocumentRow, getChunks, getDocument, getPages } from "../../projections/catalogue.ts";
import { replayInto } from "../../projections/replay.ts";
import type { SergoApp } from "../../src/app.ts";
import { recordUpload, requestPdfCopy } from "../../src/domain/documents.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { createAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { setPdfCopyConcurrency } from "../../src/pdf_copy/libreoffice.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { openPdf } from "../../src/render/pdfjs_loader.ts";
import { PageViews } from "../../src/render/page_cache.ts";
import { createRenderPool } from "../../src/render/render_pool.ts";
import { PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempApp } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";
import { callTool } from "../mcp/_fixture.ts";
import { docxParagraphs } from "../pdf_copy/_docx_chunks.ts";
import {
  commonInOrder,
  type PageAgreement,
  pageAgreement,
  popplerPages,
  rightToLeft,
  units,
} from "../pdf_copy/_page_agreement.ts";

/** Share of a page's words that must agree, in order, both ways. */
const MIN_AGREEMENT = 0.95;
/** Pages with at least this share of right-to-left letters are compared letter by letter. */
const RTL_SHARE = 0.1;
/** How much longer (in words) than its copy page a page may be: a few percent, and two words. */
const MAX_LONGER = 1.03;
/** How long making every copy may take (about a minute on an idle machine; over 6 under a loaded one's). */
const COPIES_MS = 15 * 60_000;

type Tool = (name: string, args: Record<string, unknown>) => Promise<{
  content: Array<Record<string, string>>;
  isError: boolean;
}>;

function body(result: { content: Array<Record<string, string>> }): Record<string, unknown> {
  return JSON.parse(result.content[0]!.text!);
}

/** Processes what is pending, then makes every pending copy. */
async function processAndCopy(app: SergoApp, options: { copies: boolean }): Promise<void> {
  const pool = createExtractionPool({ concurrency: 2 });
  const processing = new ProcessingWorker(app, pool, { workerId: "test" });
  // Two LibreOffice processes at once: most of this test's time is spent starting them.
  setPdfCopyConcurrency(2);
  const copies = new PdfCopyWorker(app, { reader: pool, concurrency: 2 });
  try {
    processing.kick();
    await processing.drain();
    if (!options.copies) return;
    // Each kick makes the copies pending now; one that can be neither made nor recorded would come back
    // at every kick, so the copies have a deadline (generous: two cores shared by the whole suite).
    const pending = () =>
      app.db.prepare("SELECT name FROM cat_documents WHERE pdf_copy_status = 'pending' ORDER BY name")
        .all().map((row) => row.name as string);
    await waitFor(async () => {
      copies.kick();
      await copies.drain();
      return pending().length === 0;
    }, {
      ms: COPIES_MS,
      what: "every Word file's PDF copy is made or its failure recorded",
      detail: () => `still pending: ${pending().join(", ")}`,
    });
  } finally {
    await copies.stop();
    await processing.stop();
    await pool.close();
    setPdfCopyConcurrency(1);
  }
}

/** The text layer of each page as pdf.js reads it, items as they come (for right-to-left pages). */
async function pdfjsPages(bytes: Uint8Array): Promise<string[]> {
  const doc = await openPdf(bytes);
  try {
    const out: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      out.push(
        content.items.map((item) => "str" in item ? item.str + (item.hasEOL ? "\n" : " ") : "").join(""),
      );
      page.cleanup();
    }
    return out;
  } finally {
    await doc.destroy();
  }
}

/**
 * Letters in order, lam-alef in either order: unpatched pdf.js (this reference) reads the lam-alef ligature
 * turned round (خالل), Sergo's reader in reading order (خلال).
 */
function letterAgreement(reference: string, text: string): PageAgreement {
  const a = units(reference.replaceAll("لا", "ال"), true);
  const b = units(text.replaceAll("لا", "ال"), true);
  const matched = commonInOrder(a, b);
  return {
    copyUnits: a.length,
    pageUnits: b.length,
    copyInPage: a.length === 0 ? (b.length === 0 ? 1 : 0) : matched / a.length,
    pageInCopy: b.length === 0 ? (a.length === 0 ? 1 : 0) : matched / b.length,
  };
}

Deno.test({
  name: "Word files of the corpus: page N's text is the PDF copy's page N, with sections and marks from it",
  sanitizeResources: false,
  async fn(t) {
    await needs("soffice");
    const pdftotext = await needs("pdftotext");
    await using temp = await tempApp();
    const app = temp.app;
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const word = await createFolder(app, { personId: ava.person_id, parentId: null, name: "Word" }, "t");
    const files = [...Deno.readDirSync(`${CORPUS_DIR}/docx`)].map((entry) => entry.name)
      .filter((name) => name.endsWith(".docx")).sort();
    assert.ok(files.length >= 14, `${files.length} Word files in the corpus`);
    const upload = async (file: string, preset: "basic" | "none", name = file) => {
      const bytes = await Deno.readFile(`${CORPUS_DIR}/docx/${file}`);
      return await recordUpload(app, {
        personId: ava.person_id,
        folderId: word.folder_id,
        name,
        sha256: await app.blobs.write(bytes),
        size: bytes.length,
        type: "docx",
        preset,
      }, "t");
    };
    const docs = new Map<string, DocumentRow>();
    for (const file of files) docs.set(file, await upload(file, "basic"));
    const unread = await upload("docling-word-sample.docx", "none", "not-read.docx");
    const key = await createAgentKey(app, {
      personId: ava.person_id,
      name: "word-files",
      description: "Word files",
      canRead: { folders: [word.folder_id], documents: [] },
    }, "t");
    const renderPool = createRenderPool({ concurrency: 1 });
    const endpoint = createMcpEndpoint({
      db: app.db,
      store: app.store,
      settings: { rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 },
      pageViews: new PageViews(app.blobs as BlobStore, renderPool),
    });
    const tool: Tool = (name, args) => callTool(endpoint, key.value, name, args);
    const handbook = docs.get("doj-chapter13-trustee-handbook-long.docx")!.document_id;
    const chile = docs.get("chile-urban-land-policy-es.docx")!.document_id;
    try {
      await processAndCopy(app, { copies: false });
      const estimatedSections = new Map<string, Array<string | null>>();
      for (const [file, doc] of docs) {
        estimatedSections.set(file, distinctRuns(getChunks(app.db, doc.document_id).map((c) => c.section)));
      }

      await t.step("before the copy exists nothing changes: estimated pages, no page view yet", async () => {
        const read = body(await tool("read_document", { document_id: chile, page: 1 }));
        assert.equal(read.pages_estimated, true);
        const listed = body(await tool("list_documents", {})) as { items: Array<Record<string, unknown>> };
        assert.equal(listed.items.find((item) => item.document_id === chile)!.pages_estimated, true);
        const view = await tool("view_page", { document_id: chile, page: 1 });
        assert.equal(view.isError, true);
        assert.match(view.content[0]!.text!, /still being made/);
      });

      const started = performance.now();
      await processAndCopy(app, { copies: true });
      console.log(
        `  ${files.length + 1} Word files copied and placed in ${Math.round(performance.now() - started)} ms`,
      );

      for (const file of files) {
        await t.step(`${file}: every page is the copy's page`, async () => {
          const doc = getDocument(app.db, docs.get(file)!.document_id)!;
          assert.equal(doc.pdf_copy_status, "made", doc.pdf_copy_reason ?? "");
          const copyBytes = await app.blobs.read(doc.pdf_copy_sha256!);
          const copyPath = join(temp.dir, `${doc.document_id}.pdf`);
          await Deno.writeFile(copyPath, copyBytes);
          const raw = await popplerPages(pdftotext, copyPath, true);
          const reading = await popplerPages(pdftotext, copyPath, false);
          const layer = await pdfjsPages(copyBytes);
          assert.equal(raw.length, doc.pdf_copy_pages, "pdftotext and Sergo count the same pages");
          const listed = (body(await tool("list_documents", {})) as { items: Array<Record<string, unknown>> })
            .items.find((item) => item.document_id === doc.document_id)!;
          assert.equal(listed.pages, doc.pdf_copy_pages);
          assert.equal(listed.pages_estimated, undefined);
          let worst = { page: 1, score: 2, agreement: null as PageAgreement | null, reader: "" };
          for (let page = 1; page <= doc.pdf_copy_pages!; page++) {
            const read = body(await tool("read_document", { document_id: doc.document_id, page }));
            assert.equal(read.pages, doc.pdf_copy_pages);
            assert.equal(read.pages_estimated, undefined);
            const text = read.text === "(nothing on this page)" ? "" : read.text as string;
            // deno-lint-ignore no-control-regex
            const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.exec(text);
            assert.equal(
              control,
              null,
              `page ${page} holds the control character ${JSON.stringify(control?.[0])}`,
            );
            // Pages with right-to-left text against pdf.js's own text layer, letter by letter
            // (poppler gives right-to-left lines, table cells and text boxes in other orders);
            // every other page against poppler.
            const rtl = rightToLeft(raw[page - 1]! + text, RTL_SHARE);
            const agreement = rtl
              ? letterAgreement(layer[page - 1]!, text)
              : pageAgreement(raw[page - 1]!, reading[page - 1]!, text);
            const score = Math.min(agreement.copyInPage, agreement.pageInCopy);
            if (score < worst.score) worst = { page, score, agreement, reader: rtl ? "pdf.js" : "pdftotext" };
            if (agreement.copyUnits > 0) {
              assert.notEqual(text, "", `page ${page} of the copy has text, Sergo's none`);
            }
            assert.ok(
              agreement.pageUnits <= agreement.copyUnits * MAX_LONGER + 2,
              `page ${page}: ${agreement.pageUnits} words against ${agreement.copyUnits} on the copy's page`,
            );
          }
          const w = worst.agreement!;
          console.log(
            `  ${file}: ${doc.pdf_copy_pages} pages; worst page ${worst.page} against ${worst.reader}: ` +
              `${pct(w.copyInPage)} of the copy's words in Sergo's page, ${
                pct(w.pageInCopy)
              } of Sergo's in the copy's ` +
              `(${w.copyUnits} and ${w.pageUnits} ${worst.reader === "pdf.js" ? "letters" : "words"})`,
          );
          assert.ok(worst.score >= MIN_AGREEMENT, `page ${worst.page} agrees only ${pct(worst.score)}`);
          // Marks come from the copy's pages and stay within them.
          const marks = body(await tool("read_document", { document_id: doc.document_id, page: 1 }))
            .pages_to_view as number[];
          assert.ok(marks.every((page) => page >= 1 && page <= doc.pdf_copy_pages!));
          // The chart's page is marked; a file of lists and headings only has nothing to view.
          if (file === "docling-chart-drawingml.docx") assert.deepEqual(marks, [1]);
          if (file === "docling-nested-lists.docx") assert.deepEqual(marks, []);
        });
      }

      await t.step("sections: every heading stays, in order, and stands above its text", () => {
        for (const [file, doc] of docs) {
          const chunks = getChunks(app.db, doc.document_id);
          // Text the copy shows above the first heading (a page number, a header) has no section.
          const placed = distinctRuns(chunks.map((c) => c.section).filter((s) => s !== null));
          const estimated = estimatedSections.get(file)!.filter((s) => s !== null);
          const kept = commonInOrder(estimated.map(String), placed.map(String));
          assert.equal(kept, placed.length, `${file}: the copy's sections are the Word file's, in its order`);
          assert.ok(
            kept >= estimated.length * 0.98,
            `${file}: ${kept} of ${estimated.length} sections kept on the copy's pages`,
          );
        }
      });

      await t.step("an excerpt running onto the next page keeps that page and its section", async () => {
        const chunks = getChunks(app.db, handbook);
        // A page that starts in the middle of a section: its first chunk continues the page before.
        const index = chunks.findIndex((chunk, i) =>
          i > 0 && chunk.page === chunks[i - 1]!.page + 1 && chunk.section !== null &&
          chunk.section === chunks[i - 1]!.section && chunk.text.split(/\s+/).length > 40 &&
          !chunk.text.startsWith(chunk.section)
        );
        assert.ok(index > 0, "the handbook has sections running across pages");
        const chunk = chunks[index]!;
        const query = chunk.text.split(/\s+/).slice(0, 12).join(" ");
        const result = JSON.parse((await tool("search", { query, limit: 20 })).content[0]!.text!) as Array<
          { document_id: string; hits: Array<{ page: number; section?: string; excerpt: string }> }
        >;
        // The excerpt is the chunk, or its first passage when the chunk is long.
        const hit = result.find((d) => d.document_id === handbook)?.hits
          .find((h) => chunk.text.startsWith(h.excerpt.slice(0, 200)));
        assert.ok(hit, `search finds the start of page ${chunk.page}`);
        assert.equal(hit.page, chunk.page);
        assert.equal(hit.section, chunk.section);
      });

      await t.step(
        "search over the long handbook repeats no excerpt, in one answer or across offsets",
        async () => {
          // The handbook says some sentences word for word many times.
          const counts = new Map<string, number>();
          for (
            const p of docxParagraphs(
              await Deno.readFile(`${CORPUS_DIR}/docx/${files.find((f) => f.startsWith("doj"))}`),
            )
          ) {
            if (p.length > 60) counts.set(p, (counts.get(p) ?? 0) + 1);
          }
          const repeated = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3);
          assert.ok(repeated[0]![1] >= 4, `the most repeated paragraph comes ${repeated[0]![1]} times`);
          for (const [sentence] of repeated) {
            const seen = new Set<string>();
            for (let offset = 0; offset <= 80; offset += 10) {
              const result = await tool("search", {
                query: sentence.slice(0, 200),
                limit: 10,
                offset,
                folders: ["Word"],
              });
              if (result.content[0]!.text!.startsWith("Nothing")) break;
              for (
                const d of JSON.parse(result.content[0]!.text!) as Array<
                  { document_id: string; hits: Array<{ page: number; excerpt: string }> }
                >
              ) {
                for (const hit of d.hits) {
                  const id = JSON.stringify([d.document_id, hit.page, hit.excerpt]);
                  assert.ok(!seen.has(id), `offset ${offset} repeats an excerpt of page ${hit.page}`);
                  seen.add(id);
                }
              }
            }
            assert.ok(seen.size > 0);
          }
        },
      );

      await t.step(
        "a Word file read with preset none: no text, the copy's page count in all four tools",
        async () => {
          const doc = getDocument(app.db, unread.document_id)!;
          assert.equal(doc.pdf_copy_status, "made");
          const pages = doc.pdf_copy_pages!;
          const listed = (body(await tool("list_documents", {})) as { items: Array<Record<string, unknown>> })
            .items.find((item) => item.document_id === doc.document_id)!;
          assert.equal(listed.pages, pages);
          assert.equal(listed.status, "not_indexed");
          const whole = body(await tool("read_document", { document_id: doc.document_id }));
          assert.equal(whole.pages, pages);
          assert.equal(whole.text, "(no text in this document)");
          const first = await tool("read_document", { document_id: doc.document_id, page: 1 });
          assert.equal(first.isError, false);
          assert.equal(body(first).text, "(no text in this document)");
          const past = await tool("read_document", { document_id: doc.document_id, page: pages + 1 });
          assert.equal(past.content[0]!.text, `This document has ${pages} pages`);
          const view = await tool("view_page", { document_id: doc.document_id, page: 1 });
          assert.equal(view.content[0]!.text, `not-read.docx — page 1 of ${pages}`);
          const found = await tool("search", { query: "docling", folders: ["Word"] });
          assert.ok(!found.content[0]!.text!.includes(doc.document_id), "a file without text is not found");
        },
      );

      await t.step(
        "replay gives the same pages; a copy made again places the text by new events",
        async () => {
          const replayed = join(temp.dir, "replayed.db");
          await replayInto(app.store, replayed);
          const db = new DatabaseSync(replayed, { readOnly: true });
          try {
            const rows = (d: DatabaseSync) =>
              d.prepare("SELECT document_id, page, text, marked FROM cat_pages ORDER BY document_id, page")
                .all();
            assert.deepEqual(rows(db), rows(app.db));
          } finally {
            db.close();
          }
          const small = docs.get("docling-word-sample.docx")!.document_id;
          const before = app.store.readStream(`document-${small}`).length;
          const pagesBefore = getPages(app.db, small, 1, 100);
          await requestPdfCopy(app, { personId: ava.person_id, documentId: small }, "t");
          await processAndCopy(app, { copies: true });
          const added = app.store.readStream(`document-${small}`).slice(before).map((e) => e.type);
          assert.deepEqual(added, ["PdfCopyRequested", "PdfCopyStarted", "PdfCopyMade", "DocumentProcessed"]);
          assert.deepEqual(getPages(app.db, small, 1, 100), pagesBefore);
        },
      );
    } finally {
      renderPool.close();
    }
  },
});

Deno.test({
  name: "a Word file with the same paragraph on many pages places each copy of it on its own page",
  async fn() {
    await needs("soffice");
    await using temp = await tempApp();
    const app = temp.app;
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const PAGES = 12;
    const paragraph =
      "The trustee shall file a final report and account of the administration of the estate " +
      "with the court and the United States trustee within the time the rules allow.";
    const bytes = repeatedParagraphDocx(paragraph, PAGES);
    const doc = await recordUpload(app, {
      personId: ava.person_id,
      folderId: null,
      name: "repeated.docx",
      sha256: await app.blobs.write(bytes),
      size: bytes.length,
      type: "docx",
      preset: "basic",
    }, "t");
    await processAndCopy(app, { copies: true });
    const after = getDocument(app.db, doc.document_id)!;
    assert.equal(after.pdf_copy_status, "made", after.pdf_copy_reason ?? "");
    assert.equal(after.page_count, PAGES);
    assert.equal(after.pages_estimated, false);
    const pages = getPages(app.db, doc.document_id, 1, PAGES);
    const chunks = getChunks(app.db, doc.document_id);
    for (let n = 1; n <= PAGES; n++) {
      const text = pages[n - 1]!.text;
      assert.equal(
        text.split("final report and account").length - 1,
        1,
        `page ${n} holds the paragraph once`,
      );
      assert.equal(/^Part \d+/.test(text), (n - 1) % 3 === 0, `page ${n} starts with a heading or not`);
      const sections = [...new Set(chunks.filter((c) => c.page === n).map((c) => c.section))];
      assert.deepEqual(sections, [`Part ${partOf(n)}`], `page ${n} stands under the heading above it`);
    }
  },
});

/** The part a page of the test-built Word file stands in: a heading every three pages. */
function partOf(page: number): number {
  return Math.floor((page - 1) / 3) + 1;
}

/**
 * A minimal Word file: the same paragraph on every page, pages broken by hand,
 * a heading "Part N" at the top of every third page.
 */
function repeatedParagraphDocx(paragraph: string, pages: number): Uint8Array {
  const enc = (s: string) => new TextEncoder().encode(s);
  const body: string[] = [];
  for (let n = 1; n <= pages; n++) {
    if ((n - 1) % 3 === 0) {
      body.push(
        `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Part ${partOf(n)}</w:t></w:r></w:p>`,
      );
    }
    body.push(`<w:p><w:r><w:t>${paragraph}</w:t></w:r></w:p>`);
    if (n < pages) body.push(`<w:p><w:r><w:br w:type="page"/></w:r></w:p>`);
  }
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  return zipSync({
    "[Content_Types].xml": enc(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
        `<Default Extension="xml" ContentType="application/xml"/>` +
        `<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
        `<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>` +
        `</Types>`,
    ),
    "_rels/.rels": enc(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
        `</Relationships>`,
    ),
    "word/_rels/document.xml.rels": enc(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` +
        `</Relationships>`,
    ),
    "word/styles.xml": enc(
      `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1">` +
        `<w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style></w:styles>`,
    ),
    "word/document.xml": enc(
      `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body.join("")}</w:body></w:document>`,
    ),
  });
}

/** Values with runs of equal ones collapsed. */
function distinctRuns<T>(values: readonly T[]): T[] {
  return values.filter((value, i) => i === 0 || value !== values[i - 1]);
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
