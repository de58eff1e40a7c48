import { DatabaseSync } from "node:sqlite";
import { ALL_PROJECTIONS } from "./projections/all.ts";
import { projectionDigest } from "./projections/digest.ts";
const dir = Deno.args[0];
const a = new DatabaseSync(`${dir}/projections.db`), b = new DatabaseSync(`${dir}/${Deno.args[1]}`);
for (const p of ALL_PROJECTIONS) for (const t of p.tables) {
  const one = { name: p.name, tables: [t] } as any;
  const da = projectionDigest(a, [one]), db = projectionDigest(b, [one]);
  if (da !== db) {
    console.log("DIFF", t);
    if (t === "search_vocab") {
      const ra = a.prepare("select * from search_vocab order by term limit 100000").all() as any[];
      const rb = new Map((b.prepare("select * from search_vocab").all() as any[]).map((r) => [r.term, r]));
      let n = 0; for (const r of ra) { const o = rb.get(r.term); if (!o || o.doc !== r.doc || o.cnt !== r.cnt) { if (n++ < 40) console.log(r.term, r.doc, r.cnt, o?.doc, o?.cnt); } }
      console.log("vocab sizes", ra.length, rb.size, "diffs", n);
    }
  }
}
