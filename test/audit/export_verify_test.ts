import assert from "node:assert/strict";
import { join } from "node:path";
import { createHash, generateKeyPairSync } from "node:crypto";
import { exportAudit, type ExportOptions } from "../../src/audit/export.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { publicKeyPem } from "../../src/audit/signing_key.ts";
import { appendWorkload, type Install, openInstall } from "./_workload.ts";

async function withWorkload(fn: (install: Install) => Promise<void>): Promise<void> {
  const install = await openInstall();
  try {
    await appendWorkload(install.store);
    install.projector.catchUp(install.store);
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
    personId: "pAva",
    format: "jsonl",
    out: join(install.dir, file),
    now: () => new Date("2026-10-26T00:00:00Z"),
    ...options,
  });
}

async function editLines(path: string, edit: (lines: string[]) => void): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n");
  edit(lines);
  await Deno.writeTextFile(path, lines.join("\n"));
}

Deno.test("a person's JSONL export verifies, against the install's public key too", async () => {
  await withWorkload(async (install) => {
    const manifest = await exportTo(install, "ava.jsonl");
    assert.equal(manifest.count, 16);
    assert.equal(manifest.chain_head.position, 26);
    const path = join(install.dir, "ava.jsonl");
    const result = await verifyExport(path);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.count, 16);
    assert.equal(
      result.redacted,
      4,
      "the password hash, the key hashes of a creation and a roll, and the text of a processing result",
    );
    assert.equal(result.trusted_key, false);
    const trusted = await verifyExport(path, { publicKey: await publicKeyPem(install.dataDir) });
    assert.ok(trusted.ok && trusted.trusted_key);
    const text = await Deno.readTextFile(path);
    assert.ok(!text.includes("$argon2id$secret"), "the password hash must not leave the install");
    // Credential hashes never leave the install either; the records that held them still verify.
    const hashes = install.store.readFrom(0, 1000).flatMap((event) => {
      const data = event.data as Record<string, unknown>;
      return [data.key_hash, data.token_hash].filter((h): h is string => typeof h === "string");
    });
    assert.ok(hashes.length >= 2);
    for (const hash of hashes) {
      assert.ok(!text.includes(hash), `the credential hash ${hash} must not be exported`);
    }
    // The trail, never the content: a processed page keeps its number and marks, its text only as a hash.
    const processed = text.trim().split("\n").map((line) => JSON.parse(line))
      .find((record) => record.type === "DocumentProcessed");
    assert.deepEqual(processed.data.pages[0], {
      page: 1,
      marked: true,
      image_only: false,
      text_sha256: createHash("sha256").update("Title").digest("hex"),
      characters: 5,
    });
    assert.ok(!text.includes('"Title"'), "no page text is exported");
    const keyRecords = text.trim().split("\n").map((line) => JSON.parse(line))
      .filter((record) => record.type === "AgentKeyCreated" || record.type === "AgentKeyRolled");
    assert.ok(keyRecords.length >= 2);
    for (const record of keyRecords) assert.equal(record.data.key_hash, "[redacted]");
    assert.ok(
      !text.includes("Ben Ortiz") && !text.includes("notes 1"),
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
    await editLines(path, (lines) => {
      lines[8] = lines[8]!.replaceAll("electric vehicles 0", "electric vehicles 9");
    });
    const result = await verifyExport(path);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.record, 9);
    assert.match(
      !result.ok ? result.reason : "",
      /Record 9 \(position 13\): its content does not match its hash/,
    );
  });
});

Deno.test("verify names a record whose audit fields changed", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    await editLines(path, (lines) => {
      lines[7] = lines[7]!.replace('"end_user":null', '"end_user":"mallory"');
    });
    const result = await verifyExport(path);
    assert.ok(!result.ok);
    assert.equal(result.record, 8);
    assert.match(result.reason, /audit fields do not match its link/);
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
    assert.ok(!swapped.ok);
    assert.equal(swapped.record, 9);
    assert.match(swapped.reason, /numbered 10/);
  });
});

Deno.test("verify refuses an altered manifest and a cut file", async () => {
  await withWorkload(async (install) => {
    await exportTo(install, "ava.jsonl");
    const path = join(install.dir, "ava.jsonl");
    const original = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, original.replace('"count":16', '"count":15'));
    assert.deepEqual(await verifyExport(path), {
      ok: false,
      reason: "The manifest does not match its signature: it was changed after signing",
    });
    const lines = original.trimEnd().split("\n");
    await Deno.writeTextFile(path, [...lines.slice(0, 10), lines[lines.length - 1]].join("\n") + "\n");
    const cut = await verifyExport(path);
    assert.ok(!cut.ok);
    assert.match(cut.reason, /holds 10 records but its manifest says 16/);
  });
});

Deno.test("an export by key name verifies with its inclusion proofs, and finds a renamed key by its old name", async () => {
  await withWorkload(async (install) => {
    const byNew = await exportTo(install, "energy.jsonl", { keyName: "energy" });
    const byOld = await exportTo(install, "research.jsonl", { keyName: "research" });
    assert.equal(byNew.count, 9); // created, 5 searches, 1 page view, rolled, changed
    assert.equal(byOld.count, 9);
    const result = await verifyExport(join(install.dir, "energy.jsonl"));
    assert.ok(result.ok, JSON.stringify(result));
    const records = (await Deno.readTextFile(join(install.dir, "energy.jsonl"))).trimEnd().split("\n").slice(
      0,
      -1,
    )
      .map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => r.audit.action), [
      "key created",
      ...Array(5).fill("mcp search"),
      "mcp page viewed",
      "key rolled",
      "key changed",
    ]);
    assert.ok(records[0].proof.length > 0, "an isolated record carries its proof");
    assert.equal(records[7].proof, undefined, "a record whose chain continues needs none");
  });
});

Deno.test("each of two people's exports verifies and holds only their own entries", async () => {
  await withWorkload(async (install) => {
    const ben = await exportTo(install, "ben.jsonl", { personId: "pBen", personEmail: "ben@example.com" });
    assert.equal(ben.count, 10); // added, uploaded, failed, key created, 5 searches, key deleted
    const result = await verifyExport(join(install.dir, "ben.jsonl"));
    assert.ok(result.ok, JSON.stringify(result));
    const text = await Deno.readTextFile(join(install.dir, "ben.jsonl"));
    assert.ok(!text.includes("pAva") && !text.includes("Ava Bennett"));
  });
});

Deno.test("a time-range export is one chain: only its last record needs a proof", async () => {
  await withWorkload(async (install) => {
    const manifest = await exportTo(install, "range.jsonl", {
      from: "2026-10-24T09:00:04Z",
      to: "2026-10-24T09:00:06Z",
    });
    assert.equal(manifest.count, 3);
    assert.ok((await verifyExport(join(install.dir, "range.jsonl"))).ok);
    const records = (await Deno.readTextFile(join(install.dir, "range.jsonl"))).trimEnd().split("\n").slice(
      0,
      -1,
    )
      .map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => r.proof === undefined), [true, true, false]);
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
    assert.equal(result.count, 16);
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.replaceAll("electric vehicles 2", "electric vehicles 7"));
    const changed = await verifyExport(path);
    assert.ok(!changed.ok);
    assert.equal(changed.record, 11);
    assert.match(changed.reason, /its content does not match its hash/);
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
      personId: "pAva",
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
