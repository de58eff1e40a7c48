import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { auditView, queryAudit } from "../../projections/audit_view.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openProjector } from "../../projections/projector.ts";
import { AVA_SEARCHES, openInstall, workloadDataDir } from "../audit/_workload.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

async function sha256File(path: string): Promise<string> {
  const bytes = await Deno.readFile(join(CORPUS_DIR, path));
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("given a mixed workload, the audit view holds each person's entries with actions, actors and details", async () => {
  const install = await openInstall();
  try {
    const db = install.projector.db;
    const w = install.workload;
    const ava = queryAudit(db, { personId: w.ava.personId, limit: 100 }).entries;
    assert.deepEqual(ava.map((e) => e.action).reverse(), [
      "person added",
      "password set",
      "personal key created",
      "folder created",
      "folder created",
      "document uploaded",
      "processing started",
      "document processed",
      "pdf copy started",
      "pdf copy made",
      "document uploaded",
      "processing started",
      "document processed",
      "key created",
      ...Array(5).fill("mcp search"),
      "mcp text read",
      "mcp page viewed",
      "key rolled",
      "key changed",
    ]);
    const [changed, rolled, viewed, refused] = ava;
    const masked = `sgk_s_…${w.research.last4}`;
    assert.deepEqual(changed!.details, { key: "research", name: "energy" });
    assert.equal(changed!.actor, "Ava Bennett");
    assert.equal(changed!.actor_kind, "person");
    assert.equal(rolled!.masked_key, `sgk_s_…${w.research.rolledLast4}`);
    assert.equal(rolled!.details.old_masked_key, masked);
    assert.equal(rolled!.details.old_expires_at, w.research.oldWorksUntil);
    assert.equal(viewed!.actor, `${masked} (research)`);
    assert.equal(viewed!.actor_kind, "agent_key");
    assert.deepEqual(viewed!.details, {
      document_id: w.documents.deck,
      file: "docling-sample-table-notes.pptx",
      page: 2,
      format: "image",
      sha256: await sha256File("pptx/docling-sample-table-notes.pptx"),
      tool: "view_page",
      is_error: false,
    });
    // An agent asking for another person's document is on record, with what it was told.
    assert.deepEqual(refused!.details, {
      document_id: w.documents.notes,
      error: "Not found, or not yours to see — the two are deliberately indistinguishable",
      tool: "read_document",
      is_error: true,
    });
    const searches = ava.filter((e) => e.action === "mcp search").reverse();
    assert.deepEqual(
      searches.map((e) => [e.details.query, e.end_user, e.details.results]),
      AVA_SEARCHES.map((s, i) => [s.query, s.endUser, w.avaResults[i]]),
      "each search's query, end user and the number of excerpts the agent was sent",
    );
    assert.ok(w.avaResults.every((n) => n > 0), "each of Ava's searches found the deck");
    assertAll(searches, (e) => e.key_id === w.research.keyId && e.key_name === "research");
    const uploads = ava.filter((e) => e.action === "document uploaded").reverse();
    assert.deepEqual(uploads.map((e) => [e.details.file, e.details.folder, e.actor]), [
      ["docling-sample-table-notes.pptx", "Energy outlooks/Basic", "Ava Bennett"],
      ["scanned-zh-penalty-decision-ccitt.pdf", "Energy outlooks", "Ava Bennett"],
    ]);
    const processed = ava.filter((e) => e.action === "document processed").reverse();
    assert.deepEqual(processed.map((e) => [e.details.file, e.details.image_only_pages, e.actor]), [
      ["docling-sample-table-notes.pptx", [], "system"],
      ["scanned-zh-penalty-decision-ccitt.pdf", [1, 2, 3], "system"],
    ]);
    const created = ava.find((e) => e.action === "key created")!;
    assert.deepEqual(created.details.can_read, { folders: ["Energy outlooks/Basic"], documents: [] });
    assert.equal(created.masked_key, masked);
    const password = ava.find((e) => e.action === "password set")!;
    assert.deepEqual(password.details, {}, "no password hash in the audit view");
    const personal = ava.find((e) => e.action === "personal key created")!;
    assert.deepEqual(personal.details, { masked_key: `sgk_p_…${w.ava.personalKey.slice(-4)}` });
    assertAll(ava, (e) => /^[0-9a-f]{64}$/.test(e.hash) && e.person_id === w.ava.personId);
    const view = JSON.stringify(ava);
    for (const event of install.store.readFrom(0, 1000)) {
      const data = event.data as Record<string, unknown>;
      for (const secret of [data.password_hash, data.key_hash]) {
        if (typeof secret === "string") assert.ok(!view.includes(secret), "no secret's hash in the view");
      }
    }

    const ben = queryAudit(db, { personId: w.ben.personId, limit: 100 }).entries;
    assert.deepEqual(ben.map((e) => e.action).reverse(), [
      "person added",
      "personal key created",
      "document uploaded",
      "processing started",
      "processing failed",
      "key created",
      ...Array(5).fill("mcp search"),
      "key deleted",
    ]);
    const failed = ben.find((e) => e.action === "processing failed")!;
    assert.equal(failed.details.reason, "This file is empty (0 bytes).");
    assert.equal(failed.details.file, "notes.txt");
    assertAll(ben, (e) => e.person_id === w.ben.personId);
    assert.deepEqual(ben[0]!.details, { key: "helper", masked_key: `sgk_s_…${w.helper.last4}` });
    assert.deepEqual(
      ben.filter((e) => e.action === "mcp search").map((e) => e.details.results),
      [0, 0, 0, 0, 0],
      "Ben's key reads one empty file",
    );
  } finally {
    await install.close();
  }
});

Deno.test("the audit view filters by key, end user, action and time, and pages newest first", async () => {
  const install = await openInstall();
  try {
    const db = install.projector.db;
    const { ava, ben, times } = install.workload;
    const byOldName = queryAudit(db, { personId: ava.personId, keyName: "research", limit: 100 }).entries;
    const byNewName = queryAudit(db, { personId: ava.personId, keyName: "energy", limit: 100 }).entries;
    assert.equal(byOldName.length, 10);
    assert.deepEqual(byNewName, byOldName);
    assert.equal(
      queryAudit(db, { personId: ben.personId, keyName: "research", limit: 100 }).entries.length,
      0,
    );
    assert.equal(queryAudit(db, { personId: ava.personId, keyName: "nope", limit: 100 }).entries.length, 0);
    const alice = queryAudit(db, { personId: ava.personId, endUser: "alice@corp", limit: 100 }).entries;
    assert.deepEqual(alice.map((e) => e.details.query), ["footnote", "list items", "test table slide"]);
    const searches = queryAudit(db, { personId: ava.personId, action: "mcp search", limit: 2 });
    assert.equal(searches.entries.length, 2);
    assert.equal(searches.next_before, searches.entries[1]!.position);
    const next = queryAudit(db, {
      personId: ava.personId,
      action: "mcp search",
      limit: 2,
      before: searches.next_before,
    });
    const last = queryAudit(db, {
      personId: ava.personId,
      action: "mcp search",
      limit: 2,
      before: next.next_before,
    });
    assert.deepEqual(
      [...searches.entries, ...next.entries, ...last.entries].map((e) => e.details.query),
      AVA_SEARCHES.map((s) => s.query).reverse(),
    );
    assert.equal(last.next_before, undefined);
    const window = queryAudit(db, {
      personId: ava.personId,
      from: times["energy folder"],
      to: times["deck uploaded"],
      limit: 10,
    });
    assert.deepEqual(window.entries.map((e) => e.action), [
      "pdf copy made",
      "pdf copy started",
      "document processed",
      "processing started",
      "document uploaded",
      "folder created",
      "folder created",
    ]);
    const plan = db.prepare(
      "EXPLAIN QUERY PLAN SELECT * FROM audit_entries WHERE person_id = ? AND position < ? ORDER BY position DESC LIMIT 51",
    ).all(ava.personId, 100) as Array<{ detail: string }>;
    assert.ok(
      plan.some((row) => row.detail.includes("USING INDEX audit_entries_person")),
      JSON.stringify(plan),
    );
  } finally {
    await install.close();
  }
});

Deno.test("replaying the log into a fresh projector gives the same audit view digest", async () => {
  const install = await openInstall();
  try {
    const fresh = openProjector(join(install.dir, "replay.db"), [auditView], { batchSize: 7 });
    try {
      fresh.catchUp(install.store);
      assert.equal(
        projectionDigest(fresh.db, [auditView]),
        projectionDigest(install.projector.db, [auditView]),
      );
      const rows = fresh.db.prepare("SELECT COUNT(*) AS n FROM audit_entries").get() as { n: number };
      assert.equal(rows.n, 35, "every event of the log belongs to someone's trail");
      // The server built its own view while the story was told, event by event: the same view.
      const { dataDir } = await workloadDataDir();
      const live = new DatabaseSync(join(dataDir, "projections.db"), { readOnly: true });
      try {
        assert.equal(projectionDigest(live, [auditView]), projectionDigest(fresh.db, [auditView]));
      } finally {
        live.close();
      }
    } finally {
      fresh.close();
    }
  } finally {
    await install.close();
  }
});
