/**
 * What never leaves the install in a person's audit export: the hash of every
 * credential they were given — password, invitation and reset links, console
 * sign-ins, personal keys, agent keys and their rolls — nor any document's
 * content: a Word file's reading keeps each page's hash, not its text, its
 * chunks or its headings. Each record says which fields it left out, and the
 * export still verifies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { exportAudit } from "../../src/audit/export.ts";
import { ensureSigningKey } from "../../src/audit/signing_key.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createAgentKey, createPersonalKey, issueLoginToken, rollAgentKey } from "../../src/domain/keys.ts";
import { addPerson, issuePasswordLink, setPasswordHash } from "../../src/domain/people.ts";
import { recordUpload } from "../../src/domain/documents.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { tempApp } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("an audit export holds no credential's hash: password, links, sign-ins, personal and agent keys, rolls", async () => {
  await using t = await tempApp();
  const app = t.app;
  await ensureSigningKey(app.dataDir);
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const actor = `person-${ava.person_id}`;
  await issuePasswordLink(app, { personId: ava.person_id, purpose: "invite" }, "cli");
  await setPasswordHash(app, ava.person_id, await hashPassword("a long passphrase of my own"));
  await issuePasswordLink(app, { personId: ava.person_id, purpose: "reset" }, "cli");
  await issueLoginToken(app, { personId: ava.person_id }, actor);
  await createPersonalKey(app, { personId: ava.person_id }, actor);
  const { key } = await createAgentKey(app, {
    personId: ava.person_id,
    name: "reader",
    description: "Reads.",
    canRead: { folders: [], documents: [] },
  }, actor);
  await rollAgentKey(app, { personId: ava.person_id, keyId: key.key_id, grace: "1h" }, actor);
  const out = join(t.dir, "ava.jsonl");
  await exportAudit({
    store: app.store,
    projectionsDb: app.db,
    dataDir: app.dataDir,
    personId: ava.person_id,
    format: "jsonl",
    out,
  });
  const text = await Deno.readTextFile(out);
  const records: Json[] = text.trimEnd().split("\n").slice(0, -1).map((line) => JSON.parse(line));
  const secrets = app.store.readFrom(0, 1000).flatMap((event) => {
    const data = event.data as Record<string, unknown>;
    return ["password_hash", "token_hash", "key_hash"].flatMap((field) =>
      typeof data[field] === "string" ? [{ type: event.type, field, hash: data[field] as string }] : []
    );
  });
  assert.deepEqual(secrets.map((s) => s.type), [
    "PasswordLinkIssued",
    "PersonPasswordSet",
    "PasswordLinkIssued",
    "LoginTokenIssued",
    "PersonalKeyCreated",
    "AgentKeyCreated",
    "AgentKeyRolled",
  ]);
  for (const secret of secrets) {
    assert.ok(!text.includes(secret.hash), `${secret.type}'s ${secret.field} is exported`);
    const record = records.find((r) => r.type === secret.type && r.data[secret.field] === "[redacted]");
    assert.ok(record, `${secret.type} is exported with its ${secret.field} left out`);
    assert.ok(record.redacted.includes(secret.field));
  }
  const verified = await verifyExport(out);
  assert.ok(verified.ok, JSON.stringify(verified));
});

Deno.test("an audit export of a Word file's reading holds each page's hash, none of its text, chunks or headings", async () => {
  await using t = await tempApp();
  const app = t.app;
  await ensureSigningKey(app.dataDir);
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const bytes = await Deno.readFile(`${CORPUS_DIR}/docx/docling-nested-lists.docx`);
  const doc = await recordUpload(app, {
    personId: ava.person_id,
    folderId: null,
    name: "lists.docx",
    sha256: await app.blobs.write(bytes),
    size: bytes.length,
    type: "docx",
    preset: "basic",
  }, `person-${ava.person_id}`);
  const pool = createExtractionPool({ concurrency: 1 });
  try {
    const worker = new ProcessingWorker(app, pool, { workerId: "test" });
    worker.kick();
    await within(worker.drain(), { ms: 60_000, what: "the reading of the Word file" });
  } finally {
    await pool.close();
  }
  const read = app.store.readStream(`document-${doc.document_id}`).find((e) =>
    e.type === "DocumentProcessed"
  );
  assert.ok(read?.type === "DocumentProcessed");
  const chunks = read.data.pages.flatMap((page) => page.chunks ?? []);
  assert.ok(chunks.length > 0 && read.data.pages.every((page) => page.text.length > 0), "a Word file read");
  const out = join(t.dir, "ava.jsonl");
  await exportAudit({
    store: app.store,
    projectionsDb: app.db,
    dataDir: app.dataDir,
    personId: ava.person_id,
    format: "jsonl",
    out,
  });
  const text = await Deno.readTextFile(out);
  const record = text.split("\n").map((line) => line && JSON.parse(line)).find((r: Json) =>
    r?.type === "DocumentProcessed"
  );
  assert.ok(record, "the reading is in the export");
  for (const page of record.data.pages) {
    assert.deepEqual(Object.keys(page).filter((k) => ["text", "chunks"].includes(k)), []);
  }
  for (const chunk of chunks) {
    for (const piece of [chunk.text, chunk.section].filter((s): s is string => !!s && s.length >= 12)) {
      assert.ok(
        !text.includes(JSON.stringify(piece).slice(1, -1).slice(0, 60)),
        `"${piece.slice(0, 60)}" is exported`,
      );
    }
  }
  assert.ok((await verifyExport(out)).ok);
});
