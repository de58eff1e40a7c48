import assert from "node:assert/strict";
import { assertAll } from "../helpers/assert_all.ts";
import { join } from "node:path";
import { auditView, queryAudit } from "../../projections/audit_view.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { openProjector } from "../../projections/projector.ts";
import { appendWorkload, openInstall } from "../audit/_workload.ts";

Deno.test("given a mixed workload, the audit view holds each person's entries with actions, actors and details", async () => {
  const install = await openInstall();
  try {
    await appendWorkload(install.store);
    install.projector.catchUp(install.store);
    const db = install.projector.db;
    const ava = queryAudit(db, { personId: "pAva", limit: 100 }).entries;
    assert.deepEqual(ava.map((e) => e.action), [
      "key changed",
      "key rolled",
      "mcp page viewed",
      ...Array(5).fill("mcp search"),
      "key created",
      "pdf copy made",
      "document processed",
      "document uploaded",
      "folder created",
      "folder created",
      "password set",
      "person added",
    ]);
    const [changed, rolled, viewed] = ava;
    assert.deepEqual(changed!.details, { key: "research", name: "energy" });
    assert.equal(changed!.actor, "Ava Bennett");
    assert.equal(changed!.actor_kind, "person");
    assert.equal(rolled!.masked_key, "sgk_s_…c3D4");
    assert.equal(rolled!.details.old_masked_key, "sgk_s_…a1B2");
    assert.equal(viewed!.actor, "sgk_s_…a1B2 (research)");
    assert.deepEqual(viewed!.details, {
      file: "IEO2023_Release_Presentation.pptx",
      page: 2,
      format: "image",
      tool: "view_page",
      is_error: false,
    });
    const search = ava.find((e) => e.details.query === "electric vehicles 0")!;
    assert.equal(search.end_user, "alice@corp");
    assert.equal(search.key_id, "kAva0001");
    assert.equal(search.details.results, 3);
    const uploaded = ava.find((e) => e.action === "document uploaded")!;
    assert.equal(uploaded.details.folder, "Energy outlooks/Basic");
    assert.equal(uploaded.details.file, "IEO2023_Release_Presentation.pptx");
    const processed = ava.find((e) => e.action === "document processed")!;
    assert.deepEqual(processed.details.image_only_pages, [2]);
    assert.equal(processed.actor, "system");
    const created = ava.find((e) => e.action === "key created")!;
    assert.deepEqual(created.details.can_read, { folders: ["Energy outlooks/Basic"], documents: [] });
    const password = ava.find((e) => e.action === "password set")!;
    assert.deepEqual(password.details, {}, "no password hash in the audit view");
    for (const entry of ava) assert.match(entry.hash, /^[0-9a-f]{64}$/);

    const ben = queryAudit(db, { personId: "pBen", limit: 100 }).entries;
    assert.deepEqual(ben.map((e) => e.action).slice(0, 2), ["key deleted", "mcp search"]);
    assert.ok(ben.some((e) => e.action === "processing failed" && e.details.reason === "The file is empty"));
    assertAll(ben, (e) => e.person_id === "pBen");
    assert.deepEqual(ben[0]!.details, { key: "helper", masked_key: "sgk_s_…z9Y8" });
  } finally {
    await install.close();
  }
});

Deno.test("the audit view filters by key, end user, action and time, and pages newest first", async () => {
  const install = await openInstall();
  try {
    await appendWorkload(install.store);
    install.projector.catchUp(install.store);
    const db = install.projector.db;
    const byOldName = queryAudit(db, { personId: "pAva", keyName: "research", limit: 100 }).entries;
    const byNewName = queryAudit(db, { personId: "pAva", keyName: "energy", limit: 100 }).entries;
    assert.equal(byOldName.length, 9);
    assert.deepEqual(byNewName, byOldName);
    assert.equal(queryAudit(db, { personId: "pBen", keyName: "research", limit: 100 }).entries.length, 0);
    assert.equal(queryAudit(db, { personId: "pAva", keyName: "nope", limit: 100 }).entries.length, 0);
    const alice = queryAudit(db, { personId: "pAva", endUser: "alice@corp", limit: 100 }).entries;
    assert.deepEqual(alice.map((e) => e.details.query), [
      "electric vehicles 4",
      "electric vehicles 2",
      "electric vehicles 0",
    ]);
    const searches = queryAudit(db, { personId: "pAva", action: "mcp search", limit: 2 });
    assert.equal(searches.entries.length, 2);
    assert.equal(searches.next_before, searches.entries[1]!.position);
    const next = queryAudit(db, {
      personId: "pAva",
      action: "mcp search",
      limit: 2,
      before: searches.next_before,
    });
    const last = queryAudit(db, {
      personId: "pAva",
      action: "mcp search",
      limit: 2,
      before: next.next_before,
    });
    assert.deepEqual(
      [...searches.entries, ...next.entries, ...last.entries].map((e) => e.details.query),
      [4, 3, 2, 1, 0].map((i) => `electric vehicles ${i}`),
    );
    assert.equal(last.next_before, undefined);
    const window = queryAudit(db, {
      personId: "pAva",
      from: "2026-10-24T09:00:04Z",
      to: "2026-10-24T09:00:06Z",
      limit: 10,
    });
    assert.deepEqual(window.entries.map((e) => e.action), [
      "document uploaded",
      "folder created",
      "folder created",
    ]);
    const plan = db.prepare(
      "EXPLAIN QUERY PLAN SELECT * FROM audit_entries WHERE person_id = ? AND position < ? ORDER BY position DESC LIMIT 51",
    ).all("pAva", 100) as Array<{ detail: string }>;
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
    await appendWorkload(install.store);
    install.projector.catchUp(install.store);
    const fresh = openProjector(join(install.dir, "replay.db"), [auditView], { batchSize: 7 });
    try {
      fresh.catchUp(install.store);
      assert.equal(
        projectionDigest(fresh.db, [auditView]),
        projectionDigest(install.projector.db, [auditView]),
      );
      const rows = fresh.db.prepare("SELECT COUNT(*) AS n FROM audit_entries").get() as { n: number };
      assert.equal(rows.n, 26);
    } finally {
      fresh.close();
    }
  } finally {
    await install.close();
  }
});
