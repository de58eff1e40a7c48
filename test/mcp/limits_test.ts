/**
 * The reference's limits, each pinned from both sides and asked through
 * `/mcp` over data made by the domain commands and the real workers: the
 * 24,000-character read, a page longer than that, at most half of `limit`
 * (rounded up) from one document, offsets up to 80, `list_documents` up to
 * 100, 20 folder names in a description, pictures at most 1,568 px on their
 * longer side and of the page asked for, and the messages for documents still
 * being read and for pages without text.
 */
import assert from "node:assert/strict";
import type { BlobStore } from "../../src/blob_store.ts";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { Buffer } from "node:buffer";
import { getPages } from "../../projections/catalogue.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { pdftoppmPng, pngSize } from "../render/_png.ts";
import { served, type ToolResult } from "./_served.ts";

/** One page carrying about 32,000 characters of War and Peace in a tiny font. */
async function longPagePdf(): Promise<Uint8Array> {
  const book = await Deno.readTextFile(`${CORPUS_DIR}/text/war-and-peace-gutenberg.txt`);
  const text = book.slice(10_000, 60_000).replace(/[^\x20-\x7e]+/g, " ").replace(/ +/g, " ").slice(0, 32_000);
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([612, 792]);
  for (let line = 0; line * 320 < text.length; line++) {
    page.drawText(text.slice(line * 320, line * 320 + 320), { x: 10, y: 780 - line * 7, size: 1.8, font });
  }
  return await pdf.save();
}

/** Two pages showing the TraceMonkey paper's first page: 612 x 1,026 and 612 x 1,027 points. */
async function tallPagesPdf(): Promise<Uint8Array> {
  const source = await PDFDocument.load(await Deno.readFile(`${CORPUS_DIR}/pdf/tracemonkey-pldi-paper.pdf`));
  const pdf = await PDFDocument.create();
  const [embedded] = await pdf.embedPdf(source, [0]);
  for (const height of [1026, 1027]) {
    pdf.addPage([612, height]).drawPage(embedded!, { x: 0, y: height - 792 });
  }
  return await pdf.save();
}

/** A picture as a grid of mean brightness (0–255), 24 cells a side. */
async function brightnessGrid(png: Uint8Array): Promise<number[]> {
  const image = await loadImage(png);
  const canvas = createCanvas(24, 24);
  const context = canvas.getContext("2d");
  context.fillStyle = "white";
  context.fillRect(0, 0, 24, 24);
  context.drawImage(image, 0, 0, 24, 24);
  const { data } = context.getImageData(0, 0, 24, 24);
  const grid: number[] = [];
  for (let i = 0; i < data.length; i += 4) grid.push((data[i]! + data[i + 1]! + data[i + 2]!) / 3);
  return grid;
}

function distance(a: number[], b: number[]): number {
  return a.reduce((sum, value, i) => sum + Math.abs(value - b[i]!), 0) / a.length;
}

Deno.test({
  name: "the reference's limits, through /mcp, over files the workers read",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using s = await served({ SERGO_SEARCH_DEPTH: "200" });
    const docsFolder = await s.folder("Docs");
    const tracemonkey = await s.upload("pdf/tracemonkey-pldi-paper.pdf", { folder: docsFolder });
    const deck = await s.upload("pptx/markitdown-test-deck-chart-table.pptx", { folder: docsFolder });
    const redbook = await s.upload("pdf/ibm-redbook-db2-rcac-sampled.pdf", { folder: docsFolder });
    const longPage = await s.upload({ name: "long-page.pdf", bytes: await longPagePdf() }, {
      folder: docsFolder,
    });
    // Apart, so that its copy of the paper's first page does not compete in searches.
    const tall = await s.upload({ name: "tall-pages.pdf", bytes: await tallPagesPdf() }, {
      folder: await s.folder("Sizes"),
    });
    await s.process();
    await s.copy();
    // Read after the copies are made: a text file would get a PDF copy too, which no test here needs.
    const whitespace = await s.upload("hostile/whitespace-only.txt", { folder: docsFolder });
    // Two long texts that match the same words on every page, for searches deeper than 100 excerpts.
    const book = await Deno.readFile(`${CORPUS_DIR}/text/war-and-peace-gutenberg.txt`);
    const deep = await s.folder("Deep");
    for (
      const [name, from] of [["war-and-peace-part-1.txt", 100_000], [
        "war-and-peace-part-2.txt",
        400_000,
      ]] as const
    ) {
      await s.upload({ name, bytes: book.subarray(from, from + 240_000) }, { folder: deep });
    }
    await s.process();
    const stillReading = await s.upload("pdf/tracemonkey-pldi-paper.pdf", { folder: docsFolder });
    const reader = await s.key("reader", { folders: [docsFolder], documents: [] });
    const deepReader = await s.key("deep", { folders: [deep], documents: [] });
    const sizes = await s.key("sizes", { folders: [], documents: [tall] });

    async function json(
      args: Record<string, unknown>,
      tool = "read_document",
    ): Promise<Record<string, unknown>> {
      const result = await s.call(reader, tool, args);
      assert.equal(result.isError, false, result.content[0]?.text ?? "");
      return JSON.parse(result.content[0]!.text!);
    }

    /** Hits per document id in a search result. */
    function hitsPerDocument(result: ToolResult): Map<string, number> {
      const groups = JSON.parse(result.content[0]!.text!) as Array<{ document_id: string; hits: unknown[] }>;
      return new Map(groups.map((group) => [group.document_id, group.hits.length]));
    }

    await t.step(
      "read_document without page: whole pages up to 24,000 characters, and not one page fewer",
      async () => {
        const whole = await json({ document_id: tracemonkey });
        const text = whole.text as string;
        const last = Number(/^1-(\d+)$/.exec(whole.pages_read as string)![1]);
        assert.ok(last >= 2 && last < 14, `pages 1-${last}`);
        assert.ok(text.length <= 24_000, `${text.length} characters`);
        assert.equal(whole.more, `Pages ${last + 1}-14 not included — ask for a page to read on`);
        // The same pages asked as a range give the same text; the next page would not have fitted.
        const range = await json({ document_id: tracemonkey, page: 1, to_page: last });
        assert.equal(range.text, text);
        const next = (await json({ document_id: tracemonkey, page: last + 1, to_page: last + 1 }))
          .text as string;
        assert.match(next, new RegExp(`^--- page ${last + 1}( \\(.*\\))? ---\\n`));
        assert.ok(
          text.length + 2 + next.length > 24_000,
          `page ${last + 1} (${next.length}) would have fitted`,
        );
        // A range is held to the same limit and names what it left out.
        const all = await json({ document_id: tracemonkey, page: 1, to_page: 14 });
        assert.equal(all.text, text);
        assert.equal(all.pages_read, `1-${last}`);
        assert.equal(all.more, `Pages ${last + 1}-14 not included — ask for them`);
      },
    );

    await t.step(
      "a page longer than 24,000 characters is cut at exactly 24,000, with the reference's note",
      async () => {
        const stored = getPages(s.server.app.db, longPage, 1, 1)[0]!.text;
        assert.ok(stored.length > 25_000, `the page holds ${stored.length} characters`);
        const note =
          "[This page is longer than 24,000 characters and was cut here; the rest of it cannot be read as text — `view_page` shows the whole page.]";
        const one = await json({ document_id: longPage, page: 1 });
        assert.equal(one.text, `${stored.slice(0, 24_000)}\n${note}`);
        const whole = await json({ document_id: longPage });
        assert.equal(whole.text, `${`--- page 1 ---\n${stored}`.slice(0, 24_000)}\n${note}`);
        assert.equal(whole.more, undefined);
        assert.equal(whole.pages_read, undefined);
      },
    );

    await t.step(
      "search takes exactly half of limit, rounded up, from the best document, for odd and even limits",
      async () => {
        for (const limit of [1, 2, 3, 5, 7]) {
          const result = await s.call(reader, "search", {
            query: "trace compilation of loops, the performance of tables and data",
            limit,
          });
          assert.equal(result.isError, false, result.content[0]!.text!);
          const counts = hitsPerDocument(result);
          const best = [...counts.keys()][0]!;
          const total = [...counts.values()].reduce((a, b) => a + b, 0);
          assert.equal(total, limit, `limit ${limit}: ${total} excerpts`);
          assert.equal(
            counts.get(best),
            Math.ceil(limit / 2),
            `limit ${limit}: ${counts.get(best)} from the best document`,
          );
          for (const [id, n] of counts) {
            assert.ok(n <= Math.ceil(limit / 2), `limit ${limit}: ${n} from ${id}`);
          }
        }
      },
    );

    await t.step("search offset: 80 is taken and never offered past, 81 is refused", async () => {
      const query = "the prince and his father";
      const search = (args: Record<string, unknown>) => s.call(deepReader, "search", { query, ...args });
      const shown = (result: ToolResult) => [...hitsPerDocument(result).values()].reduce((a, b) => a + b, 0);
      // Offset 60 with 20 ends at 80: the next page is offered. From 61 it would start past 80: not offered.
      const at60 = await search({ limit: 20, offset: 60 });
      assert.equal(shown(at60), 20);
      assert.deepEqual(at60.content[1], {
        text: "More excerpts past these: search again with offset 80.",
        type: "text",
      });
      const at61 = await search({ limit: 20, offset: 61 });
      assert.equal(shown(at61), 20);
      assert.equal(at61.content.length, 1, "offset 81 is not offered");
      const at80 = await search({ limit: 20, offset: 80 });
      assert.equal(at80.isError, false);
      assert.equal(shown(at80), 20, "200 passages deep, offset 80 has a full page");
      assert.equal(at80.content.length, 1, "no offset past 80 is offered");
      assert.deepEqual(await search({ offset: 81 }), {
        content: [{ text: "`offset` must be a whole number from 0 to 80.", type: "text" }],
        isError: true,
      });
      assert.equal(shown(await search({ limit: 20 })), 20);
      assert.equal(shown(await search({})), 10, "10 by default");
      assert.deepEqual(await search({ limit: 21 }), {
        content: [{ text: "`limit` must be a whole number from 1 to 20.", type: "text" }],
        isError: true,
      });
    });

    await t.step("list_documents: limit 100 is taken, 101 refused; 101 documents page at 100", async () => {
      const many = await s.folder("Many");
      for (let i = 1; i <= 101; i++) {
        await s.upload({
          name: `note-${String(i).padStart(3, "0")}.txt`,
          bytes: new TextEncoder().encode(`Note ${i}`),
        }, {
          folder: many,
          preset: "none",
        });
      }
      const key = await s.key("many", { folders: [many], documents: [] });
      const list = async (args: Record<string, unknown>) => {
        const result = await s.call(key, "list_documents", args);
        return result.content[0]!.text!.startsWith("{") ? JSON.parse(result.content[0]!.text!) : result;
      };
      const first = await list({ limit: 100 });
      assert.equal(first.total, 101);
      assert.equal(first.items.length, 100);
      assert.equal(first.next_offset, 100);
      assert.equal(first.items[0].document, "note-101.txt", "newest first");
      const rest = await list({ limit: 100, offset: 100 });
      assert.deepEqual(rest.items.map((item: { document: string }) => item.document), ["note-001.txt"]);
      assert.equal(rest.next_offset, undefined);
      const byDefault = await list({});
      assert.equal(byDefault.items.length, 50);
      assert.equal(byDefault.next_offset, 50);
      assert.deepEqual(await list({ offset: 101 }), {
        content: [{ text: "Nothing past this point.", type: "text" }],
        isError: false,
      });
      assert.deepEqual(await list({ limit: 101 }), {
        content: [{ text: "`limit` must be a whole number from 1 to 100.", type: "text" }],
        isError: true,
      });
    });

    await t.step("tool descriptions list 20 folder names in full; with 21 the first 20 and …", async () => {
      const folders: string[] = [];
      for (let i = 1; i <= 21; i++) folders.push(await s.folder(`Shelf ${String(i).padStart(2, "0")}`));
      const names = folders.map((_, i) => `Shelf ${String(i + 1).padStart(2, "0")}`);
      const describe = async (count: number) => {
        const key = await s.key(`shelves-${count}`, { folders: folders.slice(0, count), documents: [] });
        const response = await s.post(key, { jsonrpc: "2.0", id: 1, method: "tools/list" });
        const tools = (await response.json()).result.tools as Array<
          { name: string; inputSchema: { properties: { folders?: { description: string } } } }
        >;
        return tools.filter((tool) => tool.inputSchema.properties.folders).map((tool) =>
          tool.inputSchema.properties.folders!.description
        );
      };
      /** The names each description lists, checked to be the same in both. */
      const listed = async (count: number) => {
        const [search, list] = await describe(count);
        const tail = " — or any folder inside them, by its own name";
        assert.ok(
          search!.startsWith("Only search these folders, by name: ") && search!.endsWith(tail),
          search!,
        );
        assert.equal(list, search!.replace("Only search", "Only list"));
        return search!.slice("Only search these folders, by name: ".length, -tail.length).split(", ");
      };
      const twenty = await listed(20);
      assert.equal(twenty.length, 20);
      assert.deepEqual([...twenty].sort(), names.slice(0, 20));
      const twentyOne = await listed(21);
      assert.equal(twentyOne.length, 21);
      assert.equal(twentyOne[20], "…");
      assert.equal(new Set(twentyOne.slice(0, 20)).size, 20);
      assert.ok(twentyOne.slice(0, 20).every((name) => names.includes(name)), twentyOne.join(", "));
    });

    await t.step(
      "view_page: a page 1,567.5 px tall at 110 dpi is drawn 1,568 px; one 1,569 px tall is scaled to 1,568",
      async () => {
        const drawn = [];
        for (const page of [1, 2]) {
          const result = await s.call(sizes, "view_page", { document_id: tall, page });
          assert.equal(result.isError, false, result.content[0]!.text!);
          drawn.push(pngSize(Buffer.from(result.content[1]!.data!, "base64")));
        }
        assert.deepEqual(drawn, [{ width: 935, height: 1568 }, { width: 934, height: 1568 }]);
      },
    );

    for (
      const [label, id, pages, asked] of [
        ["a PDF's", tracemonkey, 4, [3]],
        ["a deck's PDF copy", deck, 6, [4]],
      ] as const
    ) {
      await t.step(
        `view_page draws the page asked for: ${label} pages match pdftoppm's of the same page, at its size`,
        async () => {
          const row = s.document(id);
          const sha = row.type === "pdf" ? row.sha256 : row.pdf_copy_sha256!;
          assert.ok(sha, `${row.name} has a PDF to draw from (copy: ${row.pdf_copy_status})`);
          const pdfPath = (s.server.app.blobs as BlobStore).path(sha);
          const poppler = [];
          for (let page = 1; page <= pages; page++) poppler.push(await pdftoppmPng(pdfPath, page));
          const grids = await Promise.all(poppler.map(brightnessGrid));
          for (const page of asked) {
            const result = await s.call(reader, "view_page", { document_id: id, page });
            assert.equal(result.isError, false, result.content[0]!.text!);
            assert.match(result.content[0]!.text!, new RegExp(` — page ${page} of \\d+$`));
            const png = Buffer.from(result.content[1]!.data!, "base64");
            assert.deepEqual(pngSize(png), pngSize(poppler[page - 1]!));
            const ours = await brightnessGrid(png);
            const distances = grids.map((grid) => distance(ours, grid));
            const nearest = distances.indexOf(Math.min(...distances)) + 1;
            assert.equal(
              nearest,
              page,
              `page ${page} looks most like pdftoppm's page ${nearest}: ${distances}`,
            );
          }
        },
      );
    }

    await t.step(
      "a document still being read: read_document and view_page say so, word for word",
      async () => {
        const message =
          "This document is still being processed, so its text is not ready yet — try again in a minute.";
        for (
          const [tool, args] of [["read_document", {}], ["read_document", { page: 1 }], ["view_page", {
            page: 1,
          }]]
        ) {
          assert.deepEqual(
            await s.call(reader, tool as string, { document_id: stillReading, ...args as object }),
            {
              content: [{ text: message, type: "text" }],
              isError: true,
            },
            `${tool} ${JSON.stringify(args)}`,
          );
        }
      },
    );

    await t.step(
      "a page without text reads '(nothing on this page)'; a document without text '(no text in this document)'",
      async () => {
        const page = await json({ document_id: redbook, page: 17 });
        assert.equal(page.text, "(nothing on this page)");
        const range = await json({ document_id: redbook, page: 17, to_page: 17 });
        assert.equal(range.text, "--- page 17 ---\n(nothing on this page)");
        const empty = await json({ document_id: whitespace });
        assert.equal(empty.text, "(no text in this document)");
      },
    );
  },
});
