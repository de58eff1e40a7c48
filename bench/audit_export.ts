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
import { openSqliteStore, type SqliteEventStore } from "../events/sqlite_store.ts";
import type { EventData, SergoEvent } from "../events/types.ts";
import { auditView } from "../projections/audit_view.ts";
import { openProjector, type Projector } from "../projections/projector.ts";
import { exportAudit } from "../src/audit/export.ts";
import { verifyExport } from "../src/audit/verify.ts";

// The log here is volume, not behaviour: a million MCP calls through /mcp would measure the calls, not the
// export. Its events are shaped as the endpoint's audit writes them (src/mcp/audit.ts) and appended in
// batches through the real store; the audit tests' workload (test/audit/_workload.ts) goes the real way.

/** A fresh install: a store and an audit-view projector in a temp directory. */
async function openInstall(): Promise<{
  dir: string;
  dataDir: string;
  eventsPath: string;
  store: SqliteEventStore;
  projector: Projector;
  close(): Promise<void>;
}> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-audit-bench-" });
  const dataDir = join(dir, "data");
  await Deno.mkdir(dataDir);
  const eventsPath = join(dataDir, "events.db");
  const store = openSqliteStore(eventsPath);
  const projector = openProjector(join(dataDir, "projections.db"), [auditView]);
  return {
    dir,
    dataDir,
    eventsPath,
    store,
    projector,
    async close() {
      projector.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const AVA_KEY = { id: "kAva0001", name: "research", last4: "a1B2" };

/** An McpCalled event's data for a search. */
function mcpSearch(person: string, query: string, count: number): EventData<"McpCalled"> {
  return {
    key_id: AVA_KEY.id,
    person_id: person,
    key_name: AVA_KEY.name,
    masked_key: `sgk_s_…${AVA_KEY.last4}`,
    end_user: null,
    tool: "search",
    arguments: { query },
    action: "mcp search",
    details: { query, results: count },
    is_error: false,
    duration_ms: 12,
  };
}

/** Appends `count` MCP calls of one person, in batches through the real store, one second apart. */
async function appendCalls(
  store: SqliteEventStore,
  person: string,
  count: number,
  batch: number,
): Promise<void> {
  let clock = Date.parse("2026-10-24T09:00:00Z");
  for (let done = 0; done < count; done += batch) {
    const events: SergoEvent[] = [];
    for (let i = done; i < Math.min(count, done + batch); i++) {
      clock += 1000;
      events.push({
        type: "McpCalled",
        data: mcpSearch(person, `query ${i}`, i % 20),
        metadata: { time: new Date(clock).toISOString(), actor: `key-${AVA_KEY.id}` },
      });
    }
    await store.append(`key-${AVA_KEY.id}`, events);
  }
}

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
    await appendCalls(install.store, "pAva", events - 1, 10_000);
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
