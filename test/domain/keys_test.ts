import assert from "node:assert/strict";
import { findCredential, getAgentKey, oldValues } from "../../projections/key_scopes.ts";
import { hashSecret } from "../../src/domain/key_format.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { createFolder, ensureFolderPath } from "../../src/domain/folders.ts";
import { changeAgentKey, createAgentKey, deleteAgentKey, rollAgentKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import type { SergoApp } from "../../src/app.ts";
import { tempApp } from "../helpers/temp.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { uploadFile } from "../../src/domain/documents.ts";

/** Ava, and an agent key of hers that reads nothing. */
async function avaWithKey(app: SergoApp) {
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const { key, value } = await createAgentKey(app, {
    personId: ava.person_id,
    name: "kk",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "test");
  return { ava, key, value };
}

function clock(start: string) {
  let now = new Date(start);
  return { now: () => now, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

Deno.test("given a person and a folder, when a key is created, then only its hash is recorded and it reads that folder", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const folder = await ensureFolderPath(
    t.app,
    { personId: ava.person_id, path: "Energy outlooks/Basic" },
    "test",
  );
  const { key, value } = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "energy-outlooks",
    description: "Decks",
    canRead: { folders: [folder.folder_id], documents: [] },
  }, "test");
  const events = t.app.store.readStream(`key-${key.key_id}`);
  assert.equal(events.length, 1);
  assert.ok(!JSON.stringify(events).includes(value), "the key's value must never be in the log");
  assert.equal(findCredential(t.app.db, hashSecret(value), new Date())?.id, key.key_id);
  assert.deepEqual(getAgentKey(t.app.db, key.key_id)?.can_read, {
    folders: [folder.folder_id],
    documents: [],
  });
});

Deno.test("key names follow the rules and are unique per person; descriptions are capped", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(t.app, { name: "Ben Okafor", email: "ben@example.com" });
  const make = (personId: string, name: string, description = "") =>
    createAgentKey(t.app, { personId, name, description, canRead: { folders: [], documents: [] } }, "test");
  for (const bad of ["a", "1abc", "Energy", "energy_outlooks", "x".repeat(33), "-abc", "abc def"]) {
    await assert.rejects(
      make(ava.person_id, bad),
      (e) => e instanceof DomainError && e.code === "invalid" && /Key name/.test(e.message),
    );
  }
  await make(ava.person_id, "ab");
  await make(ava.person_id, "a".repeat(32));
  await assert.rejects(make(ava.person_id, "ab"), /already exists/);
  await make(ben.person_id, "ab"); // another person may use the same name
  await assert.rejects(make(ava.person_id, "long", "x".repeat(1001)), /at most 1000 characters/);
});

Deno.test("a key cannot be given another person's folder or document", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(t.app, { name: "Ben Okafor", email: "ben@example.com" });
  const bens = await createFolder(
    t.app,
    { personId: ben.person_id, parentId: null, name: "Private" },
    "test",
  );
  const before = t.app.head().position;
  await assert.rejects(
    createAgentKey(t.app, {
      personId: ava.person_id,
      name: "peek",
      description: "",
      canRead: { folders: [bens.folder_id], documents: [] },
    }, "test"),
    { message: `No folder with id "${bens.folder_id}"` },
  );
  assert.equal(t.app.head().position, before, "a refused command writes nothing");
  const tempPath = await t.app.blobs.tempPath();
  await Deno.copyFile(`${CORPUS_DIR}/text/markitdown-readme.md`, tempPath);
  const notes = await uploadFile(t.app, {
    personId: ben.person_id,
    folderId: bens.folder_id,
    name: "notes.md",
    tempPath,
  }, "test");
  const afterUpload = t.app.head().position;
  await assert.rejects(
    createAgentKey(t.app, {
      personId: ava.person_id,
      name: "peek",
      description: "",
      canRead: { folders: [], documents: [notes.document_id] },
    }, "test"),
    { message: `No document with id "${notes.document_id}"` },
  );
  // Nor by a change of one of her own keys.
  const { key } = await createAgentKey(t.app, {
    personId: ava.person_id,
    name: "mine",
    description: "",
    canRead: { folders: [], documents: [] },
  }, "test");
  const beforeChange = t.app.head().position;
  assert.equal(beforeChange, afterUpload + 1);
  await assert.rejects(
    changeAgentKey(t.app, {
      personId: ava.person_id,
      keyId: key.key_id,
      canRead: { folders: [], documents: [notes.document_id] },
    }, "test"),
    { message: `No document with id "${notes.document_id}"` },
  );
  assert.equal(t.app.head().position, beforeChange, "a refused command writes nothing");
});

Deno.test("roll: the old value works until its grace ends; rolling again keeps the older value's own expiry", async () => {
  const c = clock("2026-11-29T12:00:00Z");
  await using t = await tempApp({ now: c.now });
  const { ava, key, value: v1 } = await avaWithKey(t.app);
  const r1 = await rollAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, grace: "24h" }, "test");
  assert.equal(r1.oldExpiresAt, "2026-11-30T12:00:00.000Z");
  c.advance(3_600_000);
  const r2 = await rollAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, grace: "1h" }, "test");
  const works = (v: string) => findCredential(t.app.db, hashSecret(v), c.now()) !== undefined;
  assert.ok(works(v1) && works(r1.value) && works(r2.value));
  c.advance(3_600_000); // 14:00: r1's value (grace 1h from 13:00) has expired, v1 (until tomorrow noon) still works
  assert.ok(works(v1));
  assert.equal(works(r1.value), false);
  assert.ok(works(r2.value));
  assert.deepEqual(oldValues(t.app.db, key.key_id, c.now()).map((v) => v.expires_at), [
    "2026-11-30T12:00:00.000Z",
  ]);
  c.advance(86_400_000);
  assert.equal(works(v1), false);
  assert.ok(works(r2.value));
  // Name, description and access stay.
  assert.equal(getAgentKey(t.app.db, key.key_id)?.name, key.name);
  await assert.rejects(
    rollAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, grace: "2d" }, "test"),
    /not one of: now, 1h, 24h, 7d/,
  );
});

Deno.test("roll with grace now stops the old value at once; delete stops every value", async () => {
  const c = clock("2026-11-29T12:00:00Z");
  await using t = await tempApp({ now: c.now });
  const { ava, key, value: v1 } = await avaWithKey(t.app);
  const r1 = await rollAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, grace: "now" }, "test");
  assert.equal(findCredential(t.app.db, hashSecret(v1), c.now()), undefined);
  const r2 = await rollAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, grace: "7d" }, "test");
  assert.ok(findCredential(t.app.db, hashSecret(r1.value), c.now()));
  await deleteAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id }, "test");
  assert.equal(findCredential(t.app.db, hashSecret(r1.value), c.now()), undefined);
  assert.equal(findCredential(t.app.db, hashSecret(r2.value), c.now()), undefined);
  await assert.rejects(
    changeAgentKey(t.app, { personId: ava.person_id, keyId: key.key_id, name: "zz" }, "test"),
    /No agent key/,
  );
});
