/**
 * What the tools say about folders and excerpts: the folder names of a key in
 * a stable order (the key's "can read" order, the folders inside by name),
 * the same in the descriptions and in "No folder named …"; the real folder of
 * a file a key reads on its own; no excerpt twice.
 */
import assert from "node:assert/strict";
import { uploadFile } from "../../src/domain/documents.ts";
import type { SergoApp } from "../../src/app.ts";
import { getDocument } from "../../projections/catalogue.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { createAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { tempApp } from "../helpers/temp.ts";
import { callTool, post } from "./_fixture.ts";

Deno.test("folder names come in the key's order, then by name, the same in descriptions and errors", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const numbers = Array.from({ length: 30 }, (_, i) => String(i + 1).padStart(2, "0"));
  // Made in a shuffled order, so neither ids nor creation order give the zones' order.
  const zones = new Map<string, string>();
  for (const n of [...numbers].sort(() => Math.random() - 0.5)) {
    zones.set(
      n,
      (await createFolder(t.app, { personId: ava.person_id, parentId: null, name: `Zone ${n}` }, "t"))
        .folder_id,
    );
  }
  for (const name of ["c10", "b", "A", "c9"]) {
    await createFolder(t.app, { personId: ava.person_id, parentId: zones.get("01")!, name }, "t");
  }
  const key = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "zones",
    description: "Zones",
    canRead: { folders: numbers.map((n) => zones.get(n)!), documents: [] },
  }, "t");
  const endpoint = createMcpEndpoint({ db: t.app.db, store: t.app.store });
  const first20 = numbers.slice(0, 20).map((n) => `Zone ${n}`).join(", ");

  const listed = await (await post(endpoint, key.value, { jsonrpc: "2.0", id: 1, method: "tools/list" }))
    .json();
  const tools = listed.result.tools as Array<
    { name: string; inputSchema: { properties: Record<string, { description?: string }> } }
  >;
  for (const name of ["search", "list_documents"]) {
    const description = tools.find((tool) => tool.name === name)!.inputSchema.properties.folders!
      .description!;
    assert.ok(description.includes(`by name: ${first20}, … — or any folder`), description);
  }
  const wrong = await callTool(endpoint, key.value, "search", { query: "x", folders: ["Zone 99"] });
  assert.equal(
    wrong.content[0]!.text,
    `No folder named 'Zone 99' here. Use one of: ${first20}, … — or a folder inside them: A, b, c9, c10`,
  );

  // Given in another order, the key lists them in that order.
  const reversed = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "zones-reversed",
    description: "Zones",
    canRead: { folders: [...numbers].reverse().map((n) => zones.get(n)!), documents: [] },
  }, "t");
  const again = await callTool(endpoint, reversed.value, "list_documents", { folders: ["Zone 99"] });
  assert.ok(
    again.content[0]!.text!.startsWith("No folder named 'Zone 99' here. Use one of: Zone 30, Zone 29, "),
  );
});

Deno.test("a key that reads a single file gives that file's real folder", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const energy = await createFolder(t.app, {
    personId: ava.person_id,
    parentId: null,
    name: "Energy outlooks",
  }, "t");
  const basic = await createFolder(t.app, {
    personId: ava.person_id,
    parentId: energy.folder_id,
    name: "Basic",
  }, "t");
  const doc = await readFile(
    t.app,
    ava.person_id,
    basic.folder_id,
    "outlook.md",
    "# Coal\n\nCoal demand falls.\n",
  );
  const key = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "one-file",
    description: "",
    canRead: { folders: [], documents: [doc] },
  }, "t");
  const endpoint = createMcpEndpoint({ db: t.app.db, store: t.app.store });
  const folder = "Ava Bennett's documents/Energy outlooks/Basic";
  const listed = JSON.parse((await callTool(endpoint, key.value, "list_documents", {})).content[0]!.text!);
  assert.equal(listed.items[0].folder, folder);
  const read = JSON.parse(
    (await callTool(endpoint, key.value, "read_document", { document_id: doc })).content[0]!.text!,
  );
  assert.equal(read.folder, folder);
  const found = JSON.parse(
    (await callTool(endpoint, key.value, "search", { query: "coal" })).content[0]!.text!,
  );
  assert.equal(found[0].folder, folder);
});

Deno.test("search gives an excerpt once: not twice in one answer, not again at a later offset", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = await createFolder(
    t.app,
    { personId: ava.person_id, parentId: null, name: "Handbooks" },
    "t",
  );
  const repeated = "The trustee must file the final report within thirty days.";
  // A first page whose three sections say the same sentence, and later pages that say it again.
  const sections = [1, 2, 3].map(() => `## Duties\n\n${repeated}`);
  for (let i = 2; i <= 12; i++) {
    sections.push(`## Duties\n\n${repeated}\n\n${`Other words on part ${i}. `.repeat(110)}`);
  }
  const doc = await readFile(t.app, ava.person_id, folder.folder_id, "handbook.md", sections.join("\n\n"));
  const pagesSaying =
    (t.app.db.prepare("SELECT COUNT(*) AS n FROM cat_pages WHERE document_id = ? AND text LIKE ?")
      .get(doc, `%${repeated}%`) as { n: number }).n;
  assert.ok(pagesSaying >= 10, `the sentence is on ${pagesSaying} pages`);
  const key = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "handbooks",
    description: "",
    canRead: { folders: [folder.folder_id], documents: [] },
  }, "t");
  const endpoint = createMcpEndpoint({ db: t.app.db, store: t.app.store });
  const seen: string[] = [];
  // Page through the answers as an agent does: at the offset each answer offers.
  for (let offset: number | null = 0; offset !== null;) {
    const result = await callTool(endpoint, key.value, "search", {
      query: "trustee final report",
      limit: 2,
      offset,
    });
    for (const hit of JSON.parse(result.content[0]!.text!)[0].hits) {
      seen.push(`${doc} ${hit.page} ${hit.excerpt}`);
    }
    const more = result.content[1]?.text?.match(
      /^More excerpts past these: search again with offset (\d+)\.$/,
    );
    offset = more ? Number(more[1]) : null;
  }
  assert.equal(seen.length, pagesSaying, "one excerpt per page");
  assert.equal(new Set(seen).size, seen.length);
});

/** Uploads a Markdown file of this text and has the processing worker read it; returns its id. */
async function readFile(
  app: SergoApp,
  personId: string,
  folderId: string,
  name: string,
  text: string,
): Promise<string> {
  const tempPath = await Deno.makeTempFile();
  await Deno.writeTextFile(tempPath, text);
  const doc = await uploadFile(app, { personId, folderId, name, tempPath }, "t");
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(app, pool, { workerId: "test", only: new Set([doc.document_id]) });
    worker.kick();
    await worker.drain();
  } finally {
    await pool.close();
  }
  assert.equal(getDocument(app.db, doc.document_id)?.status, "searchable");
  return doc.document_id;
}
