import { DatabaseSync } from "node:sqlite";
import { EVENT_SCHEMAS } from "../events/types.ts";
const db = new DatabaseSync("/work/main/bench/data/replay-10000/events.db");
for (let k = 0; k < 2; k++) {
let t = performance.now();
const rows = [] as any[];
for (let p = 0; ; p += 2000) { const r = db.prepare("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?").all(p, 2000); if (!r.length) break; rows.push(...r); }
console.log("sql", (performance.now() - t).toFixed(0));
t = performance.now();
const parsed = rows.map((r) => [r.type, JSON.parse(r.data), JSON.parse(r.metadata)]);
console.log("json", (performance.now() - t).toFixed(0));
const times: Record<string, number> = {};
for (const [type, data] of parsed) { const t1 = performance.now(); (EVENT_SCHEMAS as any)[type].safeParse(data); times[type] = (times[type] ?? 0) + performance.now() - t1; }
console.log(times);
}
