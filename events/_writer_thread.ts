/**
 * The log's writer thread: group commits run here, on a connection of its
 * own, so the server's event loop keeps answering requests while SQLite waits
 * for the disk to confirm each commit.
 *
 * @module
 */
import { openLogDatabase, writeBatch, type WriteItem } from "./_write_batch.ts";

/** A request to the writer thread. */
export type WriterRequest =
  | { kind: "open"; path: string; busyTimeoutMs: number }
  | { kind: "write"; id: number; items: WriteItem[] }
  | { kind: "close" };

/** An answer of the writer thread. */
export type WriterResponse =
  | { kind: "opened" }
  | { kind: "written"; id: number; outcomes: ReturnType<typeof writeBatch> }
  | { kind: "failed"; id: number; message: string }
  | { kind: "closed" };

// deno-lint-ignore no-explicit-any
const scope = self as any;
let db: ReturnType<typeof openLogDatabase> | null = null;

scope.onmessage = (message: MessageEvent<WriterRequest>) => {
  const request = message.data;
  switch (request.kind) {
    case "open":
      db = openLogDatabase(request.path, request.busyTimeoutMs);
      scope.postMessage({ kind: "opened" } satisfies WriterResponse);
      return;
    case "write":
      try {
        const outcomes = writeBatch(db!, request.items);
        scope.postMessage({ kind: "written", id: request.id, outcomes } satisfies WriterResponse);
      } catch (error) {
        scope.postMessage(
          {
            kind: "failed",
            id: request.id,
            message: error instanceof Error ? error.message : String(error),
          } satisfies WriterResponse,
        );
      }
      return;
    case "close":
      db?.close();
      db = null;
      scope.postMessage({ kind: "closed" } satisfies WriterResponse);
      return;
  }
};
