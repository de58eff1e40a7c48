/**
 * The console's search page says why cross-language search is off: the
 * dictionaries turned off, or not readable (the same reason as `/healthz`),
 * rather than that none is installed.
 */
import assert from "node:assert/strict";
import { SESSION_COOKIE } from "../../src/auth/api_auth.ts";
import { createConsole } from "../../src/console/console.ts";
import { issueLoginToken } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { useInstalledDictionaries } from "../../src/search/installed_dictionaries.ts";
import { testServer } from "../http/_server.ts";
import { tempDir } from "../helpers/temp.ts";

/** The search page's note on cross-language search, as a person signed in to the console reads it. */
async function searchNote(
  env: Record<string, string>,
  prepare?: (dir: string) => Promise<void>,
): Promise<{ note: string; health: unknown }> {
  await using server = await testServer({ env, prepare });
  const ava = await addPerson(server.app, { name: "Ava Bennett", email: "ava@example.com" });
  const cookie = `${SESSION_COOKIE}=${
    (await issueLoginToken(server.app, { personId: ava.person_id }, "person-ava")).value
  }`;
  // The server reads them in the background; this waits for that reading to end, however it ends.
  if (env.SERGO_DICTIONARIES !== "off") await useInstalledDictionaries().catch(() => {});
  const response = await createConsole(server.services)(
    new Request("http://127.0.0.1:8787/search", { headers: { cookie } }),
  );
  assert.equal(response.status, 200);
  const page = await response.text();
  const health = (await (await server.fetch("/healthz")).json()).dictionaries;
  return {
    note: page.match(/<p class="hint">([^<]*(?:Cross-language|cross-language)[^<]*)<\/p>/)?.[1] ?? "",
    health,
  };
}

Deno.test("the search page says cross-language search is off because SERGO_DICTIONARIES is off", async () => {
  const { note } = await searchNote({ SERGO_DICTIONARIES: "off" });
  assert.equal(note, "Cross-language search is off: SERGO_DICTIONARIES is set to off.");
});

Deno.test("the search page says the dictionaries could not be read, and why, as /healthz does", async () => {
  // One FreeDict dictionary, and the data folder's file they are kept in is a folder: they cannot be kept.
  await using dictd = await tempDir();
  for (const suffix of [".index", ".dict.dz"]) {
    await Deno.copyFile(
      `/usr/share/dictd/freedict-eng-fra${suffix}`,
      `${dictd.path}/freedict-eng-fra${suffix}`,
    );
  }
  const file = dictd.path;
  const { note, health } = await searchNote(
    { SERGO_DICTIONARIES: file },
    (dir) => Deno.mkdir(`${dir}/dictionaries.sqlite/in-the-way`, { recursive: true }),
  );
  assert.match(
    note,
    new RegExp(
      `^Cross-language search is off: the dictionaries in ${file} could not be read \\(\\S.*\\)\\.$`,
    ),
  );
  assert.doesNotMatch(note, /no bilingual dictionary is installed/);
  const reason = note.match(/could not be read \((.*)\)\.$/)![1]!;
  assert.ok(
    String((health as { detail: string }).detail).includes(reason),
    `/healthz gives the same reason: ${JSON.stringify(health)}`,
  );
});
