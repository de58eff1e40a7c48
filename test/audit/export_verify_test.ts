import assert from "node:assert/strict";
import { join } from "node:path";
import { createHash, generateKeyPairSync } from "node:crypto";
import { exportAudit, type ExportOptions } from "../../src/audit/export.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { publicKeyPem } from "../../src/audit/signing_key.ts";
import { assertAll } from "../helpers/assert_all.ts";
import { AVA_PASSWORD, type Install, openInstall } from "./_workload.ts";

async function withWorkload(fn: (install: Install) => Promise<void>): Promise<void> {
  const install = await openInstall();
  try {
    await fn(install);
  } finally {
    await install.close();
  }
}

function exportTo(install: Install, file: string, options: Partial<ExportOptions> = {}) {
  return exportAudit({
    eventsDbPath: install.eventsPath,
    projectionsDb: install.projector.db,
    dataDir: install.dataDir,
    personId: install.workload.ava.personId,
    format: "jsonl",
    out: join(install.dir, file),
    now: () => new Date("2026-10-26T00:00:00Z"),
    ...options,
  });
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** The records of a JSONL export (the manifest, its last line, left out). */
async function records(path: string): Promise<Json[]> {
  return (await Deno.readTextFile(path)).trimEnd().split("\n").slice(0, -1).map((line) => JSON.parse(line));
}

/** The index of the one line of a JSONL export that `match` picks. */
function lineOf(lines: string[], match: (record: Json) => boolean): number {
  const found = lines.flatMap((line, i) => (line && match(JSON.parse(line)) ? [i] : []));
  assert.equal(found.length, 1, "exactly one record matches");
  return found[0]!;
}

const searchFor = (query: string) => (r: Json) => r.type === "McpCalled" && r.data.arguments.query === query;

async function editLines(path: string, edit: (lines: string[]) => void): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n");
  edit(lines);
  await Deno.writeTextFile(path, lines.join("\n"));
}

/** Ava's 23 entries: added, password, personal key, 2 folders, 2 uploads with their reading and the deck's copy,
 * her key, 5 searches, a refused read, a page view, the roll and the rename. */
const AVA_RECORDS = 23;

Deno.test("a person's JSONL export verifies, against the install's public key too", async () => {
  await withWorkload(async (install) => {
    const manifest = await exportTo(install, "ava.jsonl");
    assert.equal(manifest.count, AVA_RECORDS);
    const log = install.store.readFrom(0, 1000);
    assert.equal(
      manifest.chain_head.position,
      log.at(-1)!.position,
      "the chain head is the log's last event",
    );
    assert.equal(manifest.chain_head.hash, log.at(-1)!.hash);
    const path = join(install.dir, "ava.jsonl");
    const result = await verifyExport(path);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.count, AVA_RECORDS);
    assert.equal(
      result.redacted,
      6,
      "the password hash, the key hashes of the personal key, the agent key and its roll, and two processing results' text",
    );
    assert.equal(result.trusted_key, false);
    const trusted = await verifyExport(path, { publicKey: await publicKeyPem(install.dataDir) });
    assert.ok(trusted.ok && trusted.trusted_key, JSON.stringify(trusted));
    const text = await Deno.readTextFile(path);
    // Credential hashes never leave the install; the records that held them still verify.
    const secrets = log.flatMap((event) => {
      const data = event.data as Record<string, unknown>;
      return [data.password_hash, data.key_hash, data.token_hash].filter((h): h is string =>
        typeof h === "string"
      );
    });
    assert.equal(secrets.length, 6, "Ava's password, two personal keys, two agent keys, one roll");
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `the hash ${secret} must not be exported`);
    }
    assert.ok(!text.includes(AVA_PASSWORD));
    const exported = await records(path);
    for (const record of exported.filter((r) => r.redacted?.includes("key_hash"))) {
      assert.equal(record.data.key_hash, "[redacted]");
    }
    assert.deepEqual(
      exported.filter((r) => r.redacted).map((r) => r.type),
      [
        "PersonPasswordSet",
        "PersonalKeyCreated",
        "DocumentProcessed",
        "DocumentProcessed",
        "AgentKeyCreated",
        "AgentKeyRolled",
      ],
    );
    // The trail, never the content: a processed page keeps its number and marks, its text only as a hash.
    const deckRead = log.find((e) =>
      e.type === "DocumentProcessed" && e.data.document_id === install.workload.documents.deck
    )!;
    assert.equal(deckRead.type, "DocumentProcessed");
    const pages = deckRead.type === "DocumentProcessed" ? deckRead.data.pages : [];
    const processed = exported.find((r) => r.position === deckRead.position);
    assert.equal(processed.data.pages.length, 3);
    for (const [i, page] of pages.entries()) {
      const out = processed.data.pages[i];
      assert.equal(out.page, page.page);
      assert.equal(out.text_sha256, createHash("sha256").update(page.text).digest("hex"));
      assert.equal(out.characters, [...page.text].length);
      assert.ok(!("text" in out) && !("chunks" in out), JSON.stringify(out));
    }
    assert.ok(pages[1]!.text.includes("A rectangle shape with this text inside"), "the deck's second slide");
    assert.ok(!text.includes("with this text inside"), "no page text is exported");
    // Speaker notes are the deck's content too: a hash each, and none of their words.
    const notes = pages.flatMap((page, i) => page.notes ? [{ i, notes: page.notes }] : []);
    assert.deepEqual(notes.map(({ i }) => i), [1, 2], "the second and third slides have notes");
    for (const { i, notes: said } of notes) {
      const out = processed.data.pages[i];
      assert.equal(out.notes_sha256, createHash("sha256").update(said).digest("hex"));
      assert.ok(!("notes" in out), JSON.stringify(out));
    }
    for (const word of ["Some notes", "second slide", "Final notes", "Second line of notes"]) {
      assert.ok(!text.includes(word), `"${word}" of the speaker notes is exported`);
    }
    const ben = install.workload.ben;
    assert.ok(
      !text.includes("Ben Ortiz") && !text.includes(ben.personId) && !text.includes("meeting notes"),
      "Ben's entries must not be in Ava's export",
    );
    const other = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }) as string;
    const stranger = await verifyExport(path, { publicKey: other });
    assert.deepEqual(stranger, { ok: false, reason: "The manifest is not signed by the given public key" });
  });
});

Deno.test("verify names the record whose bytes changed", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    let line = -1, position = -1;
    await editLines(path, (lines) => {
      line = lineOf(lines, searchFor("rectangle shape"));
      position = JSON.parse(lines[line]!).position;
      lines[line] = lines[line]!.replaceAll("rectangle shape", "rectangle shapes");
    });
    const result = await verifyExport(path);
    assert.deepEqual(result, {
      ok: false,
      record: line + 1,
      reason: `Record ${line + 1} (position ${position}): its content does not match its hash`,
    });
  });
});

Deno.test("verify names a record whose audit fields changed, and a redacted record whose data changed", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    const original = await Deno.readTextFile(path);
    let line = -1;
    await editLines(path, (lines) => {
      line = lineOf(lines, searchFor("merged cells"));
      // The audit block's end user (the data's own is followed by "is_error").
      const audit = '"end_user":null,"key_name":"research"';
      assert.equal(lines[line]!.split(audit).length, 2);
      lines[line] = lines[line]!.replace(audit, '"end_user":"mallory","key_name":"research"');
    });
    const result = await verifyExport(path);
    assert.ok(!result.ok);
    assert.equal(result.record, line + 1);
    assert.match(result.reason, /: its audit fields do not match its link: it was changed/);

    // A key's creation has its hash left out, so its event hash cannot be recomputed: the link still
    // holds its data, and a key that "could read" more than it could is caught.
    await Deno.writeTextFile(path, original);
    await editLines(path, (lines) => {
      line = lineOf(lines, (r) => r.type === "AgentKeyCreated");
      const { energy, basic } = install.workload.folders;
      assert.ok(lines[line]!.includes(`"folders":["${basic}"]`));
      lines[line] = lines[line]!.replace(`"folders":["${basic}"]`, `"folders":["${basic}","${energy}"]`);
    });
    const widened = await verifyExport(path);
    assert.ok(!widened.ok);
    assert.equal(widened.record, line + 1);
    assert.match(widened.reason, /: its audit fields do not match its link/);
  });
});

Deno.test("verify names a dropped record and a reordered pair", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    const original = await Deno.readTextFile(path);
    await editLines(path, (lines) => lines.splice(4, 1));
    const dropped = await verifyExport(path);
    assert.deepEqual(dropped, {
      ok: false,
      record: 5,
      reason: "Record 5 is numbered 6: records are missing, added or out of order",
    });
    await Deno.writeTextFile(path, original);
    await editLines(path, (lines) => {
      [lines[8], lines[9]] = [lines[9]!, lines[8]!];
    });
    const swapped = await verifyExport(path);
    assert.deepEqual(swapped, {
      ok: false,
      record: 9,
      reason: "Record 9 is numbered 10: records are missing, added or out of order",
    });
  });
});

Deno.test("verify refuses an altered manifest and a cut file", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    const original = await Deno.readTextFile(path);
    assert.ok(original.includes(`"count":${AVA_RECORDS},`));
    await Deno.writeTextFile(
      path,
      original.replace(`"count":${AVA_RECORDS},`, `"count":${AVA_RECORDS - 1},`),
    );
    assert.deepEqual(await verifyExport(path), {
      ok: false,
      reason: "The manifest does not match its signature: it was changed after signing",
    });
    const lines = original.trimEnd().split("\n");
    await Deno.writeTextFile(path, [...lines.slice(0, 10), lines[lines.length - 1]].join("\n") + "\n");
    assert.deepEqual(await verifyExport(path), {
      ok: false,
      reason: `The export holds 10 records but its manifest says ${AVA_RECORDS}`,
    });
  });
});

Deno.test("an export by key name verifies with its inclusion proofs, and finds a renamed key by its old name", async () => {
  await withWorkload(async (install) => {
    const byNew = await exportTo(install, "energy.jsonl", { keyName: "energy" });
    const byOld = await exportTo(install, "research.jsonl", { keyName: "research" });
    assert.equal(byNew.count, 10); // created, 5 searches, a refused read, a page view, rolled, renamed
    assert.equal(byOld.count, 10);
    const result = await verifyExport(join(install.dir, "energy.jsonl"));
    assert.ok(result.ok, JSON.stringify(result));
    const exported = await records(join(install.dir, "energy.jsonl"));
    assert.deepEqual(
      (await records(join(install.dir, "research.jsonl"))).map((r) => r.position),
      exported.map((r) => r.position),
    );
    assert.deepEqual(exported.map((r) => r.audit.action), [
      "key created",
      ...Array(5).fill("mcp search"),
      "mcp text read",
      "mcp page viewed",
      "key rolled",
      "key changed",
    ]);
    assertAll(exported, (r) => r.data.key_id === install.workload.research.keyId);
    // A record needs a proof unless the next one continues its chain: the next position, and not redacted.
    assert.deepEqual(exported.map((r) => r.proof === undefined), [
      ...Array(6).fill(false), // the creation and the searches: every other position is Ben's
      true, // the refused read: the page view follows it
      false, // the page view: the roll after it is redacted
      true, // the roll: the rename follows it
      false, // the rename: the last record
    ]);
    assert.ok(exported[0].proof.length > 0, "an isolated record carries its proof");
  });
});

Deno.test("each of two people's exports verifies and holds only their own entries", async () => {
  await withWorkload(async (install) => {
    const { ava, ben } = install.workload;
    const manifest = await exportTo(install, "ben.jsonl", { personId: ben.personId, personEmail: ben.email });
    // added, personal key, uploaded, processing started and failed, key created, 5 searches, key deleted
    assert.equal(manifest.count, 12);
    const result = await verifyExport(join(install.dir, "ben.jsonl"));
    assert.ok(result.ok, JSON.stringify(result));
    const text = await Deno.readTextFile(join(install.dir, "ben.jsonl"));
    assert.ok(!text.includes(ava.personId) && !text.includes("Ava Bennett") && !text.includes("footnote"));
    const exported = await records(join(install.dir, "ben.jsonl"));
    assert.equal(exported.filter((r) => r.audit.action === "mcp search").length, 5);
    assert.deepEqual(exported.at(-1).audit.action, "key deleted");
  });
});

Deno.test("a time-range export holds the records of its window, its ends included", async () => {
  await withWorkload(async (install) => {
    const { times } = install.workload;
    const manifest = await exportTo(install, "range.jsonl", {
      from: times["energy folder"],
      to: times["deck uploaded"],
    });
    const exported = await records(join(install.dir, "range.jsonl"));
    assert.deepEqual(exported.map((r) => r.audit.action), [
      "folder created",
      "folder created",
      "document uploaded",
      "processing started",
      "document processed",
      "pdf copy started",
      "pdf copy made",
    ]);
    assert.equal(manifest.count, 7);
    assert.equal(exported[0].audit.time, times["energy folder"]);
    assert.equal(exported.at(-1).audit.time, times["deck uploaded"]);
    assert.ok((await verifyExport(join(install.dir, "range.jsonl"))).ok);
    // One run of positions: only the record before the redacted reading, and the last, need a proof.
    assert.deepEqual(exported.map((r) => r.proof === undefined), [
      true,
      true,
      true,
      false,
      true,
      true,
      false,
    ]);
  });
});

Deno.test("a CSV export verifies with its manifest beside it, and a changed cell is named", async () => {
  await withWorkload(async (install) => {
    const path = join(install.dir, "ava.csv");
    const manifest = await exportTo(install, "ava.csv", { format: "csv" });
    const beside = JSON.parse(await Deno.readTextFile(`${path}.manifest.json`));
    assert.deepEqual(beside, manifest);
    const result = await verifyExport(path);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.count, AVA_RECORDS);
    const text = await Deno.readTextFile(path);
    const rows = text.trimEnd().split("\n");
    const row = rows.findIndex((line) => line.includes("list items"));
    assert.ok(row > 0 && rows.filter((line) => line.includes("list items")).length === 1);
    await Deno.writeTextFile(path, text.replaceAll("list items", "list itemz"));
    const changed = await verifyExport(path);
    assert.ok(!changed.ok);
    assert.equal(changed.record, row, "the header is row 0");
    assert.match(changed.reason, /: its content does not match its hash$/);
  });
});

Deno.test("an export through the store interface to a stream is the same as from the file", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "file.jsonl");
    const chunks: Uint8Array[] = [];
    const out = new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk) });
    await exportAudit({
      store: install.store,
      projectionsDb: install.projector.db,
      dataDir: install.dataDir,
      personId: install.workload.ava.personId,
      format: "jsonl",
      out,
      now: () => new Date("2026-10-26T00:00:00Z"),
    });
    const decoder = new TextDecoder();
    const streamed = chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join("") +
      decoder.decode();
    assert.equal(streamed, await Deno.readTextFile(join(install.dir, "file.jsonl")));
  });
});
