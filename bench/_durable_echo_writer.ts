/**
 * The durable echo's writer thread (`_durable_echo.ts`): each message's
 * request bodies go into one SQLite transaction, WAL with `synchronous =
 * FULL` as the log's, and the thread answers once the commit is on disk.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";

// deno-lint-ignore no-explicit-any
const scope = self as any;
let db: DatabaseSync | null = null;

scope.onmessage = (message: MessageEvent<{ path: string } | { id: number; bodies: string[] } | "close">) => {
  const request = message.data;
  if (request === "close") {
    db?.close();
    scope.postMessage("closed");
  } else if ("path" in request) {
    db = new DatabaseSync(request.path);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("CREATE TABLE IF NOT EXISTS calls (position INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    scope.postMessage("opened");
  } else {
    const insert = db!.prepare("INSERT INTO calls (body) VALUES (?)");
    db!.exec("BEGIN IMMEDIATE");
    for (const body of request.bodies) insert.run(body);
    db!.exec("COMMIT");
    scope.postMessage(request.id);
  }
};
