/**
 * Audit export benchmark: appends N MCP calls through the real store, projects
 * them, exports one person's audit as JSONL and verifies it, measuring time and
 * how much the process's resident memory grows (peak, sampled during the run).
 *
 * `deno run -A bench/audit_export.ts [--quick] [--json]` (quick: 100,000 events; else 1,000,000).
 * Run it with `--v8-flags=--max-old-space-size=64` to prove the JS heap stays bounded: a
 * run that kept its records would fail with "out of memory".
 *
 * @module
 */
import { join } from "node:path";
import { exportAudit } from "../src/audit/export.ts";
import { verifyExport } from "../src/audit/verify.ts";
import { appendCalls, AVA_KEY, openInstall } from "../test/audit/_workload.ts";

/** What one run measured. */
export interface AuditExportBench {
  events: number;
  append_ms: number;
  project_ms: number;
  export_ms: number;
  verify_ms: number;
  file_mb: number;
  /** Peak RSS growth over the RSS before the export, in MB. */
  export_rss_growth_mb: number;
  verify_rss_growth_mb: number;
}

/** Runs the benchmark with 100,000 events (`quick`) or 1,000,000. */
export async function benchAuditExport(opts: { quick: boolean; events?: number }): Promise<AuditExportBench> {
  const events = opts.events ?? (opts.quick ? 100_000 : 1_000_000);
  const install = await openInstall();
  try {
    let t = performance.now();
    await install.store.append("person-pAva", [{
      type: "PersonAdded",
      data: { person_id: "pAva", name: "Ava Bennett", email: "ava@example.com" },
      metadata: { time: "2026-10-24T08:00:00Z", actor: "cli" },
    }]);
    await appendCalls(install.store, "pAva", AVA_KEY, events - 1, 10_000);
    const append_ms = performance.now() - t;
    t = performance.now();
    install.projector.catchUp(install.store);
    const project_ms = performance.now() - t;

    const mb = () => Deno.memoryUsage().rss / 1e6;
    const out = join(install.dir, "audit.jsonl");
    let base = mb();
    let peak = base;
    const sample = () => (peak = Math.max(peak, mb()));
    t = performance.now();
    const manifest = await exportAudit({
      eventsDbPath: install.eventsPath,
      projectionsDb: install.projector.db,
      dataDir: install.dataDir,
      personId: "pAva",
      format: "jsonl",
      out,
      onProgress: sample,
    });
    sample();
    const export_ms = performance.now() - t;
    const export_rss_growth_mb = peak - base;
    if (manifest.count !== events) throw new Error(`Expected ${events} records, exported ${manifest.count}`);

    base = mb();
    peak = base;
    const timer = setInterval(sample, 50);
    t = performance.now();
    const result = await verifyExport(out);
    clearInterval(timer);
    sample();
    const verify_ms = performance.now() - t;
    if (!result.ok) throw new Error(`The export does not verify: ${result.reason}`);
    return {
      events,
      append_ms: Math.round(append_ms),
      project_ms: Math.round(project_ms),
      export_ms: Math.round(export_ms),
      verify_ms: Math.round(verify_ms),
      file_mb: Math.round((await Deno.stat(out)).size / 1e5) / 10,
      export_rss_growth_mb: Math.round(export_rss_growth_mb),
      verify_rss_growth_mb: Math.round(peak - base),
    };
  } finally {
    await install.close();
  }
}

if (import.meta.main) {
  const run = await benchAuditExport({ quick: Deno.args.includes("--quick") });
  console.log(Deno.args.includes("--json") ? JSON.stringify(run) : run);
}
