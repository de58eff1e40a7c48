/**
 * A child process for the crash test: adds people and folders in a loop,
 * through the real app (log + projections), until it is killed.
 *
 * Usage: deno run … test/helpers/append_loop.ts DATA_DIR
 */
import { openApp } from "../../src/app.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createFolder } from "../../src/domain/folders.ts";

const app = await openApp(Deno.args[0]!);
console.log("ready");
for (let i = 0;; i++) {
  const person = await addPerson(app, { name: `Person ${i}`, email: `p${i}-${Deno.pid}@example.com` });
  await Promise.all([
    createFolder(app, { personId: person.person_id, parentId: null, name: "A" }, "test"),
    createFolder(app, { personId: person.person_id, parentId: null, name: "B" }, "test"),
  ]);
}
