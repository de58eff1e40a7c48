/**
 * The whole corpus, end to end through a running server: upload over the API,
 * processing in the background, searchable or not_indexed with a reason, the
 * server answering other requests all along, and replay reproducing the same
 * read model.
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
import { createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { tempDir } from "../helpers/temp.ts";
import { NO_TEXT_LAYER_REASON } from "../../src/processing/standard.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { HOSTILE_OUTCOMES } from "../processing/_hostile_outcomes.ts";

const CORPUS = `${CORPUS_DIR}`;
// The 400-page manual alone takes most of a minute on two cores; it is covered by the extractor tests.
const SKIP = new Set(["irs-internal-revenue-manual-2-3-59-400p.pdf"]);
// Every page an image without a text layer (Standard reads them: test/e2e/standard_test.ts).
const SCANS = new Set([
  "pdf/scanned-ru-inspection-certificate.pdf",
  "pdf/scanned-text-page-image-only.pdf",
  "pdf/scanned-zh-penalty-decision-ccitt.pdf",
]);

Deno.test("the corpus processes end to end over the API; hostile files fail alone with a reason", async () => {
  await using dir = await tempDir();
  const server = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
    const { value } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
    const auth = { authorization: `Bearer ${value}` };
    const files: Array<{ folder: string; name: string }> = [];
    for (const folder of ["pdf", "pptx", "docx", "text", "hostile"]) {
      for await (const entry of Deno.readDir(join(CORPUS, folder))) {
        if (entry.isFile && !SKIP.has(entry.name)) files.push({ folder, name: entry.name });
      }
    }
    files.sort((a, b) => `${a.folder}/${a.name}`.localeCompare(`${b.folder}/${b.name}`));
    const ids = new Map<string, string>();
    for (const folder of ["pdf", "pptx", "docx", "text", "hostile"]) {
      const r = await fetch(`${server.url}/api/folders`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ path: folder }),
      });
      assert.equal(r.status, 201);
      await r.body?.cancel();
    }
    for (const file of files) {
      const form = new FormData();
      form.set("folder", file.folder);
      form.append("file", new Blob([await Deno.readFile(join(CORPUS, file.folder, file.name))]), file.name);
      const r = await fetch(`${server.url}/api/documents`, { method: "POST", headers: auth, body: form });
      const body = await r.json();
      if (r.status === 201) ids.set(`${file.folder}/${file.name}`, body.documents[0].id);
      else {
        // Refused at upload (empty or not a document at all): its stated reason, nothing recorded.
        assert.equal(file.folder, "hostile", `${file.name}: ${JSON.stringify(body)}`);
        const expected = HOSTILE_OUTCOMES[file.name];
        assert.ok(
          expected instanceof RegExp,
          `${file.name} is to be read, but the upload was refused: ${body.message}`,
        );
        assert.match(
          body.message,
          new RegExp(`^"${file.name.replace(/[.]/g, "\\.")}" cannot be read by Sergo: `),
        );
        assert.match(body.message, expected);
      }
    }
    // Processing runs off the request path: the server answers while it works.
    const deadline = Date.now() + 240_000;
    let statuses: Record<string, { status: string; reason?: string; pages: number | null }> = {};
    for (;;) {
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const r = await fetch(`${server.url}/api/documents?limit=500`, { headers: auth });
      const list = await r.json();
      statuses = Object.fromEntries(
        list.items.map((
          d: { id: string; status: string; reason?: string; pages: number | null },
        ) => [d.id, d]),
      );
      const pending = Object.values(statuses).filter((d) => d.status === "processing").length;
      if (pending === 0) break;
      assert.ok(Date.now() < deadline, `${pending} documents still processing after 4 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const failures: string[] = [];
    for (const [path, id] of ids) {
      const doc = statuses[id]!;
      if (path.startsWith("hostile/")) {
        // Each hostile file has its stated outcome (test/processing/_hostile_outcomes.ts), not either one.
        const expected = HOSTILE_OUTCOMES[path.slice("hostile/".length)];
        if (expected === "read") {
          // Read: searchable, or (all its pages pictures without text) the no-text-layer answer.
          if (doc.status !== "searchable") assert.equal(doc.reason, NO_TEXT_LAYER_REASON, path);
        } else {
          assert.ok(expected, `${path} has no stated outcome`);
          assert.equal(doc.status, "not_indexed", path);
          assert.match(doc.reason ?? "", expected, path);
        }
      } else if (SCANS.has(path)) {
        // A scan without a text layer has nothing Basic can search: it says what would read it.
        assert.equal(doc.status, "not_indexed", path);
        assert.equal(doc.reason, NO_TEXT_LAYER_REASON, path);
      } else if (doc.status !== "searchable") {
        failures.push(`${path}: ${doc.status} ${doc.reason ?? ""}`);
      }
    }
    assert.deepEqual(failures, [], "every real corpus file becomes searchable");
    // Stopping waits for PDF copies still being made; their events belong to the live read model too.
    await server.stop();
    const reopened = await openApp(dir.path);
    const live = projectionDigest(reopened.db, ALL_PROJECTIONS);
    await reopened.close();
    // Replay rebuilds the same read model (search index included) without reading any file.
    const store = openSqliteStore(join(dir.path, "events.db"));
    const replayed = await replayInto(store, join(dir.path, "projections.replayed.db"));
    await store.close();
    assert.equal(replayed.digest, live);
  } finally {
    await server.stop();
  }
});
