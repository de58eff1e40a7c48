/**
 * The child of the audit settle test's crash case: opens the data directory
 * given as its first argument as `serve` does (writer thread), answers the
 * given number of audited calls with the key given second, and exits at once,
 * as a crash would: no close, no settle, the calls' entries in the log and
 * not in the audit view. Another connection holds the projections' write
 * lock meanwhile, so that none of them can reach the view before the exit
 * (the audit view's thread would store them within a millisecond or two).
 * Prints how far the view was behind the log.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { auditViewPosition } from "../../projections/audit_view.ts";
import { dataPaths, openApp } from "../../src/app.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { post } from "./_fixture.ts";

const [dir, key, count] = Deno.args as [string, string, string];
const app = await openApp(dir, { writer: "thread" });
const endpoint = createMcpEndpoint({ db: app.db, store: app.store });
const lock = new DatabaseSync(dataPaths(dir).projections);
lock.exec("BEGIN IMMEDIATE");
const answers = await Promise.all(
  Array.from({ length: Number(count) }, (_, id) =>
    post(endpoint, key, {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "list_documents", arguments: {} },
    }).then((response) => response.status)),
);
console.log(JSON.stringify({
  answered: answers.filter((status) => status === 200).length,
  behind: app.head().position - auditViewPosition(app.db),
}));
Deno.exit(0);
