import { appendWorkload, openInstall } from "../test/audit/_workload.ts";
import { exportAudit } from "../src/audit/export.ts";
import { verifyExport } from "../src/audit/verify.ts";
import { queryAudit } from "../projections/audit_view.ts";
const inst = await openInstall();
await appendWorkload(inst.store);
inst.projector.catchUp(inst.store);
console.log(queryAudit(inst.projector.db, { personId: "pAva", limit: 100 }).entries.map(e => `${e.position} ${e.action} ${e.actor} ${JSON.stringify(e.details)}`).join("\n"));
for (const format of ["jsonl", "csv"] as const) {
  const out = `${inst.dir}/a.${format}`;
  const m = await exportAudit({ eventsDbPath: inst.eventsPath, projectionsDb: inst.projector.db, dataDir: inst.dataDir, personId: "pAva", format, out });
  console.log(m.count, m.range);
  console.log(await verifyExport(out));
  if (format === "jsonl") console.log((await Deno.readTextFile(out)).split("\n").slice(0, 3).join("\n"));
  else console.log((await Deno.readTextFile(out)).split("\n").slice(0, 3).join("\n"));
}
await inst.close();
