/**
 * The thread that stores the audit view's entries of MCP calls
 * (`audit_calls_thread.ts`): each message's entries and the view's checkpoint
 * in one transaction on a connection of its own, skipping the entries the
 * stored checkpoint already holds, as the projector would.
 *
 * @module
 */
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { INSERT_ENTRY } from "./audit_view.ts";
import { statement } from "./_statements.ts";
import { APPLIED, type AuditCallsRequest, DONE, FAILED } from "./audit_calls_thread.ts";

// deno-lint-ignore no-explicit-any
const scope = self as any;
let db: DatabaseSync | null = null;
let done: Int32Array | null = null;

function apply(db: DatabaseSync, last: number, rows: SQLInputValue[][]): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    const stored = (statement(db, "SELECT position FROM projection_checkpoints WHERE name = ?").get(
      "audit_view",
    ) as { position: number } | undefined)?.position ?? 0;
    const insert = statement(db, INSERT_ENTRY);
    for (const row of rows) if ((row[0] as number) > stored) insert.run(...row);
    statement(
      db,
      "INSERT INTO projection_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position WHERE excluded.position > projection_checkpoints.position",
    ).run("audit_view", last);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

scope.onmessage = (message: MessageEvent<AuditCallsRequest>) => {
  const request = message.data;
  switch (request.kind) {
    case "open":
      db = new DatabaseSync(request.path);
      db.exec("PRAGMA busy_timeout = 10000");
      db.exec("PRAGMA synchronous = NORMAL");
      done = request.done;
      return;
    case "apply":
      // After a failure nothing more is applied here: the projector applies the rest itself.
      if (Atomics.load(done!, FAILED) === 0) {
        try {
          apply(db!, request.last, request.rows);
          Atomics.add(done!, APPLIED, 1);
        } catch (error) {
          Atomics.store(done!, FAILED, 1);
          console.error("Storing MCP calls' audit entries failed; the event loop stores them:", error);
        }
      }
      Atomics.add(done!, DONE, 1);
      Atomics.notify(done!, DONE);
      scope.postMessage("done");
      return;
    case "close":
      db?.close();
      db = null;
      scope.postMessage("closed");
      return;
  }
};
