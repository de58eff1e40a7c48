/**
 * The Standard preset with a vision model over HTTP, end to end against a local
 * server that speaks the OpenAI chat-completions and Anthropic Messages shapes
 * (no real model runs here): the page PNG goes out as the API wants it, the text
 * and the figure answer are recorded with the engine and version, a failing or
 * slow endpoint ends in a not_indexed reason, and replay calls nothing.
 */
import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { join } from "node:path";
import { getDocument, getPages } from "../../projections/catalogue.ts";
import { replayInto } from "../../projections/replay.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { openApp, type SergoApp } from "../../src/app.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createVisionTranscriber, type VisionApi } from "../../src/processing/transcribers/vision_http.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { createRenderPool } from "../../src/render/render_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { tempDir } from "../helpers/temp.ts";

type Behaviour = "answer" | "fail" | "slow";

/** A loopback server in the vision APIs' shape; it counts requests and checks what each carries. */
function visionServer(api: VisionApi, behaviour: Behaviour) {
  const seen: Array<{ png: number; model: string }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = await request.json();
    const png = api === "openai"
      ? body.messages[1].content[1].image_url.url.replace(/^data:image\/png;base64,/, "")
      : body.messages[0].content[0].source.data;
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG page");
    if (api === "openai") assert.equal(request.headers.get("authorization"), "Bearer sk-test-secret");
    else assert.equal(request.headers.get("x-api-key"), "sk-test-secret");
    seen.push({ png: bytes.length, model: body.model });
    if (behaviour === "fail") return new Response("overloaded", { status: 503 });
    if (behaviour === "slow") await new Promise((resolve) => setTimeout(resolve, 4000));
    const n = seen.length;
    const answer = JSON.stringify({
      text: `Диагностическая карта — page image ${n} read by the loopback model`,
      figure_matters: n % 2 === 1,
    });
    return Response.json(
      api === "openai"
        ? { model: "vision-test-2026-01", choices: [{ message: { role: "assistant", content: answer } }] }
        : { model: "vision-test-2026-01", content: [{ type: "text", text: "```json\n" + answer + "\n```" }] },
    );
  });
  const url = `http://127.0.0.1:${server.addr.port}/v1/${api === "openai" ? "chat/completions" : "messages"}`;
  return { url, seen, close: () => server.shutdown() };
}

async function processWith(app: SergoApp, api: VisionApi, url: string, timeoutMs: number): Promise<string> {
  const person = await addPerson(app, { name: "Ava Bennett", email: `ava-${api}@example.com` });
  const temp = await app.blobs.tempPath();
  await Deno.copyFile(join(CORPUS_DIR, "pdf/scanned-ru-inspection-certificate.pdf"), temp);
  const doc = await uploadFile(app, {
    personId: person.person_id,
    folderId: null,
    name: "certificate.pdf",
    tempPath: temp,
    preset: "standard",
  }, "t");
  const pool = createExtractionPool({ concurrency: 1 });
  const renderPool = createRenderPool({ concurrency: 1 });
  const transcriber = createVisionTranscriber({
    api,
    url,
    model: "vision-test",
    apiKey: "sk-test-secret",
    timeoutMs,
    retries: 1,
    backoffMs: 10,
    concurrency: 2,
  });
  const worker = new ProcessingWorker(app, pool, { workerId: "t", standard: { transcriber, renderPool } });
  try {
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
    renderPool.close();
  }
  return doc.document_id;
}

for (const api of ["openai", "anthropic"] as const) {
  Deno.test(`Standard with a vision model (${api} shape): text and marks recorded from its answers; replay calls nothing`, async () => {
    await using dir = await tempDir();
    const model = visionServer(api, "answer");
    const app = await openApp(dir.path);
    try {
      const id = await processWith(app, api, model.url, 10_000);
      assert.equal(model.seen.length, 2, "one request per page");
      assert.ok(model.seen.every((s) => s.model === "vision-test" && s.png > 10_000));
      const doc = getDocument(app.db, id)!;
      assert.equal(doc.status, "searchable", doc.failure_reason ?? "");
      const pages = getPages(app.db, id, 1, 2);
      assertAll(
        pages,
        (p) => /^Диагностическая карта — page image \d read by the loopback model$/.test(p.text),
      );
      // Marks are the model's figure answers (odd answers said a figure matters), whichever page came back first.
      assert.deepEqual(pages.map((p) => p.marked).sort(), [false, true]);
      assert.deepEqual(doc.image_only_pages, []);
      const processed = app.store.readStream(`document-${id}`).findLast((e) =>
        e.type === "DocumentProcessed"
      );
      assert.ok(processed?.type === "DocumentProcessed");
      for (const page of processed.data.pages) {
        assert.equal(
          page.transcription?.engine,
          `${api === "openai" ? "openai-compatible" : "anthropic"}:vision-test`,
        );
        assert.equal(page.transcription?.version, "vision-test-2026-01");
        assert.equal(page.transcription?.because, "missing");
      }
      assert.ok(
        !JSON.stringify(app.store.readFrom(0, 1000)).includes("sk-test-secret"),
        "the key is never recorded",
      );
    } finally {
      await app.close();
    }
    const before = model.seen.length;
    const store = openSqliteStore(join(dir.path, "events.db"));
    await replayInto(store, join(dir.path, "replayed.db"));
    await store.close();
    assert.equal(model.seen.length, before, "replay sends no request");
    await model.close();
  });
}

Deno.test("Standard with a vision model: a failing endpoint and a slow one each end in a not_indexed reason", async () => {
  for (const behaviour of ["fail", "slow"] as const) {
    await using dir = await tempDir();
    const model = visionServer("openai", behaviour);
    const app = await openApp(dir.path);
    try {
      const id = await processWith(app, "openai", model.url, behaviour === "fail" ? 10_000 : 1_000);
      const doc = getDocument(app.db, id)!;
      assert.equal(doc.status, "not_indexed");
      assert.match(
        doc.failure_reason!,
        behaviour === "fail"
          ? /^The scan could not be read: The vision model at 127\.0\.0\.1:\d+ could not read the page: it answered HTTP 503 \(tried 2 times\)$/
          : /^The scan could not be read: .*it did not answer within 1 s \(tried 2 times\)$/,
      );
      assert.equal(model.seen.length, 4, "two pages, each tried twice");
    } finally {
      await app.close();
      await model.close();
    }
  }
});
