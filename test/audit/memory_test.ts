import assert from "node:assert/strict";
import type { AuditExportBench } from "../../bench/audit_export.ts";

Deno.test("a 100,000-entry export and its verification run in a 128 MB heap, with bounded RSS growth", async () => {
  // A separate process with a capped V8 heap: an export or verify that kept its
  // records (about 95 MB of UTF-8, twice that as JavaScript strings) would die of
  // "out of memory".
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      // 128 MB rather than 64: under a 64 MB cap V8 itself sometimes aborted inside
      // node:crypto's hash update ("Lazy deopt after a fast API call with return value
      // is unsupported", a runtime bug that the GC pressure brings out).
      "--v8-flags=--max-old-space-size=128",
      new URL("../../bench/audit_export.ts", import.meta.url).pathname,
      "--quick",
      "--json",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  const run: AuditExportBench = JSON.parse(new TextDecoder().decode(output.stdout).trim().split("\n").pop()!);
  console.log(run);
  assert.equal(run.events, 100_000);
  assert.ok(run.file_mb > 80, `file ${run.file_mb} MB`);
  // Streaming grows RSS by about 30 MB here; an export holding its 95 MB of records cannot stay under 64.
  assert.ok(run.export_rss_growth_mb < 64, `export grew RSS by ${run.export_rss_growth_mb} MB`);
  assert.ok(run.verify_rss_growth_mb < 64, `verify grew RSS by ${run.verify_rss_growth_mb} MB`);
});
