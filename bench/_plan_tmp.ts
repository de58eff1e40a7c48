import { DatabaseSync } from "node:sqlite";
import { auditView, auditWhere, AUDIT_COLUMNS } from "../projections/audit_view.ts";
const db = new DatabaseSync(":memory:");
auditView.init(db);
for (const f of [{ personId: "p" }, { personId: "p", from: "2026-01-01", to: "2026-02-01" }, { personId: "p", keyName: "x" }]) {
  const w = auditWhere(db, f);
  for (const sql of [`SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE ${w.sql} AND position > ? AND position <= ? ORDER BY position LIMIT 1000`,
    `SELECT ${AUDIT_COLUMNS} FROM audit_entries WHERE ${w.sql} AND position < ? ORDER BY position DESC LIMIT 51`]) {
    console.log(sql.slice(0, 0), JSON.stringify(f), db.prepare("EXPLAIN QUERY PLAN " + sql).all(...w.values, 1, 2).map((r: any) => r.detail));
  }
}
