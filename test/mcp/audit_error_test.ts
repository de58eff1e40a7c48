/**
 * A failed call's audit entry says why, in the words the agent was sent, and
 * keeps at most 1,000 characters of them: the unknown-folder answer of a key
 * with twenty long folder names is several thousand characters long.
 */
import assert from "node:assert/strict";
import { served } from "./_served.ts";

Deno.test("a failed call's audit entry keeps the first 1,000 characters of the answer the agent was sent", async () => {
  await using s = await served();
  const names = Array.from(
    { length: 20 },
    (_, i) => `${String(i).padStart(2, "0")} ${"reports ".repeat(24)}`.trim(),
  );
  const folders = [];
  for (const name of names) folders.push(await s.folder(name));
  const key = await s.key("long-names", { folders, documents: [] });

  const short = await s.call(key, "search", { query: "x", folders: ["nope"] });
  assert.equal(short.isError, true);
  const answer = short.content[0]!.text!;
  assert.ok(answer.startsWith("No folder named 'nope' here. Use one of: 00 reports"), answer.slice(0, 80));
  assert.ok(answer.length > 3_000, `${answer.length} characters`);
  s.server.app.settle();
  const audited = s.server.app.store.readFrom(0, 10_000).filter((e) => e.type === "McpCalled").at(-1)!;
  assert.equal(audited.type, "McpCalled");
  const details = audited.type === "McpCalled" ? audited.data.details : {};
  assert.equal(details.error, answer.slice(0, 1_000));
});
