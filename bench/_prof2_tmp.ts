import { appendCalls, AVA_KEY, openInstall } from "../test/audit/_workload.ts";
import { exportAudit } from "../src/audit/export.ts";
const inst = await openInstall();
await inst.store.append("person-pAva", [{ type: "PersonAdded", data: { person_id: "pAva", name: "Ava", email: "a@b.co" }, metadata: { time: "2026-01-01T00:00:00Z", actor: "cli" } }]);
await appendCalls(inst.store, "pAva", AVA_KEY, 100000);
inst.projector.catchUp(inst.store);
for (let i = 0; i < 1; i++) {
let t = performance.now();
let last = t;
await exportAudit({ eventsDbPath: inst.eventsPath, projectionsDb: inst.projector.db, dataDir: inst.dataDir, personId: "pAva", format: "jsonl", out: `${inst.dir}/x.jsonl`, onProgress: (d) => { if (d % 20000 === 0) { const n = performance.now(); console.log(d, Math.round(n - last)); last = n; } } });
console.log("export", performance.now() - t);
}
await inst.close();
