/**
 * The Standard preset end to end with the real Tesseract: every scanned PDF of
 * the corpus uploaded over the API with Standard, its printed words found by the
 * MCP `search` tool and read by `read_document`; the bad OCR layer replaced, a
 * born-digital PDF's layer kept; hostile huge images failing alone while the
 * server answers; replay rebuilding the same read model without transcribing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { replayInto } from "../../projections/replay.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { openApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { createAgentKey, createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { probeTesseract } from "../../src/processing/transcribers/tesseract.ts";
import { tempDir } from "../helpers/temp.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

const FILES = [
  "pdf/scanned-ru-inspection-certificate.pdf",
  "pdf/scanned-ru-tax-form-bad-ocr.pdf",
  "pdf/scanned-text-page-image-only.pdf",
  "pdf/scanned-zh-penalty-decision-ccitt.pdf",
  "pdf/arabic-rtl-word-export.pdf",
  "hostile/huge-jpeg-40000x512.pdf",
  "hostile/huge-smask-34862x4332.pdf",
  "hostile/jpeg-claims-7300x7600-in-4-bytes.pdf",
];

/** Words printed on each scan (checked on the page images), with the page they are on. */
const PRINTED: Array<{ file: string; query: string; page: number; words: string[] }> = [
  {
    file: "scanned-ru-inspection-certificate.pdf",
    query: "Диагностическая карта технического осмотра",
    page: 1,
    words: ["Диагностическая", "Регистрационный"],
  },
  {
    file: "scanned-ru-tax-form-bad-ocr.pdf",
    query: "Сумма налога упрощенной системы",
    page: 2,
    words: ["налога"],
  },
  {
    file: "scanned-text-page-image-only.pdf",
    query: "Docling bundles PDF document conversion",
    page: 1,
    words: ["Docling"],
  },
  {
    file: "scanned-zh-penalty-decision-ccitt.pdf",
    query: "行政处罚决定书",
    page: 1,
    words: ["行政处罚决定书", "哈尔滨"],
  },
];

async function mcp(url: string, key: string, name: string, args: Record<string, unknown>) {
  const r = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = await r.json();
  assert.ok(body.result, JSON.stringify(body));
  return body.result as { content: Array<{ text: string }>; isError: boolean };
}

Deno.test("Standard reads every scanned PDF of the corpus: search finds and read_document reads its printed words", async () => {
  assert.ok(await probeTesseract(), "Tesseract is not installed: .ci/run installs tesseract-ocr");
  await using dir = await tempDir();
  const server = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
    const { value } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
    const auth = { authorization: `Bearer ${value}` };
    const ids = new Map<string, string>();
    for (const file of FILES) {
      const form = new FormData();
      form.set("preset", "standard");
      form.append("file", new Blob([await Deno.readFile(join(CORPUS_DIR, file))]), file.split("/")[1]!);
      const r = await fetch(`${server.url}/api/documents`, { method: "POST", headers: auth, body: form });
      const body = await r.json();
      assert.equal(r.status, 201, JSON.stringify(body));
      assert.equal(body.documents[0].preset, "standard");
      ids.set(file.split("/")[1]!, body.documents[0].id);
    }
    // The server answers while pages are transcribed; progress shows on the API.
    let sawProgress = false;
    let list: Array<
      { id: string; name: string; status: string; reason?: string; image_only_pages: number[] }
    >;
    const deadline = Date.now() + 420_000;
    for (;;) {
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      list = (await (await fetch(`${server.url}/api/documents?limit=100`, { headers: auth })).json()).items;
      sawProgress ||= list.some((d) =>
        (d as { transcribed?: { pages_done: number } }).transcribed !== undefined
      );
      if (list.every((d) => d.status !== "processing")) break;
      assert.ok(Date.now() < deadline, "Standard took more than 7 minutes");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.ok(sawProgress, "no progress was shown while pages were transcribed");
    const byName = new Map(list.map((d) => [d.name, d]));
    for (const file of FILES.filter((f) => f.startsWith("pdf/"))) {
      const doc = byName.get(file.split("/")[1]!)!;
      assert.equal(doc.status, "searchable", `${file}: ${doc.reason}`);
      assert.deepEqual(doc.image_only_pages, [], `${file}: image-only pages are transcribed`);
    }
    // Hostile huge images fail alone, each with a one-sentence reason.
    for (const file of FILES.filter((f) => f.startsWith("hostile/"))) {
      const doc = byName.get(file.split("/")[1]!)!;
      if (doc.status === "not_indexed") assert.ok(doc.reason && !doc.reason.includes("\n"), file);
      else assert.equal(doc.status, "searchable", file);
    }
    // The 40,000-pixel JPEG is drawn smaller and read (it holds no text); the 4-byte JPEG draws nothing.
    for (const name of ["huge-jpeg-40000x512.pdf", "jpeg-claims-7300x7600-in-4-bytes.pdf"]) {
      assert.equal(byName.get(name)!.status, "not_indexed", name);
      assert.match(byName.get(name)!.reason!, /^No text: tesseract found none/, name);
    }

    // What the log records: engine and version on every transcribed page, why it was transcribed.
    const pagesOf = (name: string) => {
      const events = server.app.store.readStream(`document-${ids.get(name)}`);
      const processed = events.findLast((e) => e.type === "DocumentProcessed");
      assert.ok(processed?.type === "DocumentProcessed", name);
      return processed.data.pages;
    };
    const tax = pagesOf("scanned-ru-tax-form-bad-ocr.pdf");
    assert.deepEqual(tax.map((p) => p.transcription?.because), Array(8).fill("garbage"));
    assert.ok(
      tax.every((p) => p.transcription?.engine === "tesseract" && /^5\./.test(p.transcription.version)),
    );
    assert.ok(
      tax.every((p) => p.transcription?.languages === "rus+eng"),
      "Cyrillic pages are read as Russian",
    );
    assert.equal(pagesOf("scanned-zh-penalty-decision-ccitt.pdf")[0]!.transcription?.languages, "chi_sim");
    // The Docling scan's turned pages (2 upside down, 4 on its side) are turned back and read like the others.
    const docling = pagesOf("scanned-text-page-image-only.pdf");
    assert.deepEqual(docling.map((p) => p.transcription?.rotated), [undefined, 180, undefined, 90]);
    for (const page of docling) assert.match(page.text, /Docling bundles PDF document conversion/);
    // Marks under Standard: a page of plain lines is not marked; the ruled inspection form is (its lines).
    assert.deepEqual(docling.map((p) => p.marked), [false, false, false, false]);
    assert.equal(pagesOf("scanned-ru-inspection-certificate.pdf")[0]!.marked, true);
    // A good born-digital layer is kept as Basic read it.
    const arabic = pagesOf("arabic-rtl-word-export.pdf");
    assert.equal(arabic[0]!.transcription, undefined);
    assert.match(arabic[0]!.text, /البرمجة/);

    const { value: agent } = await createAgentKey(server.app, {
      personId: ava.person_id,
      name: "scans",
      description: "Scanned documents",
      canRead: { folders: [], documents: [...ids.values()] },
    }, "t");
    for (const printed of PRINTED) {
      const id = ids.get(printed.file)!;
      const found = await mcp(server.url, agent, "search", { query: printed.query });
      assert.equal(found.isError, false);
      const results = JSON.parse(found.content[0]!.text) as Array<
        { document_id: string; hits: Array<{ page: number }>; image_only_pages?: number[] }
      >;
      const hit = results.find((r) => r.document_id === id);
      assert.ok(
        hit,
        `${printed.file}: "${printed.query}" not found: ${found.content[0]!.text.slice(0, 300)}`,
      );
      assert.ok(hit.hits.some((h) => h.page === printed.page), `${printed.file}: page ${printed.page}`);
      const read = await mcp(server.url, agent, "read_document", { document_id: id, page: printed.page });
      const page = JSON.parse(read.content[0]!.text) as { text: string };
      for (const word of printed.words) {
        assert.ok(page.text.includes(word), `${printed.file}: "${word}" not read`);
      }
    }
    // The garbage layer is gone: its Latin misreading no longer matches.
    const taxPage = JSON.parse(
      (await mcp(server.url, agent, "read_document", {
        document_id: ids.get("scanned-ru-tax-form-bad-ocr.pdf"),
        page: 2,
      }))
        .content[0]!.text,
    ) as { text: string };
    assert.ok(!taxPage.text.includes("CyMMa Hanora"), "the garbage OCR layer is replaced");

    await server.stop();
    const reopened = await openApp(dir.path);
    const live = projectionDigest(reopened.db, ALL_PROJECTIONS);
    await reopened.close();
    // Replay rebuilds the same read model from the recorded transcriptions: no page is drawn or read.
    const store = openSqliteStore(join(dir.path, "events.db"));
    const replayed = await replayInto(store, join(dir.path, "projections.replayed.db"));
    await store.close();
    assert.equal(replayed.digest, live);
  } finally {
    await server.stop();
  }
});
