/**
 * "Process again" with Standard through the API (what the console's form
 * sends): a scan uploaded with Basic is not_indexed with what would read it;
 * `POST /api/documents/:id/process {"preset":"standard"}` reads it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/cli/serve.ts";
import { createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { NO_TEXT_LAYER_REASON } from "../../src/processing/standard.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("the API processes a scan again with Standard", async () => {
  await needs("tesseract");
  await using dir = await tempDir();
  const server = await startServer(loadConfig(["--data", dir.path, "--port", "0"]), { quiet: true });
  try {
    const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
    const { value } = await createPersonalKey(server.app, { personId: ava.person_id }, "t");
    const auth = { authorization: `Bearer ${value}` };
    const form = new FormData();
    form.append(
      "file",
      new Blob([await Deno.readFile(join(CORPUS_DIR, "pdf/scanned-text-page-image-only.pdf"))]),
      "scan.pdf",
    );
    const up =
      await (await fetch(`${server.url}/api/documents`, { method: "POST", headers: auth, body: form }))
        .json();
    const id = up.documents[0].id as string;
    const settled = async () => {
      for (let i = 0; i < 1200; i++) {
        const doc = await (await fetch(`${server.url}/api/documents/${id}`, { headers: auth })).json();
        if (doc.status !== "processing") return doc;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error("still processing after 5 minutes");
    };
    const basic = await settled();
    assert.equal(basic.status, "not_indexed");
    assert.equal(basic.reason, NO_TEXT_LAYER_REASON);
    const r = await fetch(`${server.url}/api/documents/${id}/process`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ preset: "standard" }),
    });
    assert.ok(r.ok, await r.text());
    const standard = await settled();
    assert.equal(standard.status, "searchable", standard.reason);
    assert.equal(standard.preset, "standard");
    assert.deepEqual(standard.image_only_pages, []);
  } finally {
    await server.stop();
  }
});
