import assert from "node:assert/strict";
import { benchAuditExport } from "../../bench/audit_export.ts";

Deno.test("a 100,000-entry export and its verification stay within a fixed memory bound", async () => {
  const run = await benchAuditExport({ quick: true });
  console.log(run);
  assert.equal(run.events, 100_000);
  // The file is ~95 MB; holding its records would grow RSS by far more than this bound.
  assert.ok(run.file_mb > 80, `file ${run.file_mb} MB`);
  assert.ok(run.export_rss_growth_mb < 64, `export grew RSS by ${run.export_rss_growth_mb} MB`);
  assert.ok(run.verify_rss_growth_mb < 64, `verify grew RSS by ${run.verify_rss_growth_mb} MB`);
});
