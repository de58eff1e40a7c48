/**
 * The data set most MCP tests share: Ava's decks and paper, Bob's file, and
 * keys with different scopes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Fixture } from "./_fixture.ts";

/** Ids and key values of the shared data set. */
export interface World {
  fixture: Fixture;
  ava: string;
  folders: { decks: string; decksBasic: string; papers: string; papersBasic: string };
  docs: {
    apache: string;
    aascu: string;
    markitdown: string;
    tracemonkey: string;
    pending: string;
    bobs: string;
  };
  keys: { all: string; decks: string; single: string; empty: string };
  keyIds: { all: string; decks: string; single: string; empty: string };
}

let template: Promise<{ dir: string; world: Omit<World, "fixture"> }> | null = null;

/**
 * Builds the shared data set in a fresh fixture: the first time through the
 * domain commands and the processing worker, then as a copy of that data
 * directory (the same log and files, as a restored backup would be).
 */
export async function buildWorld(): Promise<World> {
  template ??= (async () => {
    const { fixture, ...world } = await makeWorld();
    await fixture.close();
    globalThis.addEventListener("unload", () => removeQuietly(fixture.dir));
    return { dir: fixture.dir, world };
  })();
  const { dir, world } = await template;
  const copy = await Deno.makeTempDir({ prefix: "sergo-mcp-" });
  await copyFolder(dir, copy);
  const fixture = await Fixture.reopen(copy);
  // Tests that share one world at module level need not remove it in a last "cleanup" test.
  globalThis.addEventListener("unload", () => removeQuietly(copy));
  return { fixture, ...world };
}

function removeQuietly(dir: string): void {
  try {
    Deno.removeSync(dir, { recursive: true });
  } catch {
    // Already removed by a test that disposed of its world.
  }
}

async function copyFolder(from: string, to: string): Promise<void> {
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) {
      await Deno.mkdir(`${to}/${entry.name}`);
      await copyFolder(`${from}/${entry.name}`, `${to}/${entry.name}`);
    } else if (entry.isFile) {
      await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
    }
  }
}

async function makeWorld(): Promise<World> {
  const fixture = await Fixture.open();
  const ava = await fixture.person("Ava Bennett");
  const bob = await fixture.person("Bob Stone");
  const decks = await fixture.folder(ava, "Decks");
  const decksBasic = await fixture.folder(ava, "Basic", decks);
  const papers = await fixture.folder(ava, "Papers");
  const papersBasic = await fixture.folder(ava, "Basic", papers);
  const bobFolder = await fixture.folder(bob, "Decks");
  const tracemonkey = await fixture.document(ava, papers, "pdf/tracemonkey-pldi-paper.pdf");
  const markitdown = await fixture.document(ava, papersBasic, "pptx/markitdown-test-deck-chart-table.pptx");
  const aascu = await fixture.document(ava, decksBasic, "pptx/aascu-birth-to-career-equity-charts.pptx");
  // The server ran without LibreOffice so far: the copies waiting fail; the decks after wait for theirs.
  assert.deepEqual((await fixture.copyWithoutLibreOffice()).sort(), [markitdown, aascu].sort());
  const apache = await fixture.document(ava, decksBasic, "pptx/apache-performance-tuning-notes.pptx");
  const bobs = await fixture.document(bob, bobFolder, "pptx/apache-performance-tuning-notes.pptx");
  const pending = await fixture.document(ava, decks, "pptx/markitdown-test-deck-chart-table.pptx", {
    name: "not-yet-read.pptx",
    processed: false,
  });
  const all = await fixture.agentKey(ava, "everything", "Ava's decks and papers.", {
    folders: [decks, papers],
    documents: [],
  });
  const decksKey = await fixture.agentKey(ava, "decks", "Slide decks.", { folders: [decks], documents: [] });
  const single = await fixture.agentKey(ava, "one-paper", "The TraceMonkey paper.", {
    folders: [],
    documents: [tracemonkey],
  });
  const empty = await fixture.agentKey(ava, "nothing", "", { folders: [], documents: [] });
  return {
    fixture,
    ava,
    folders: { decks, decksBasic, papers, papersBasic },
    docs: { apache, aascu, markitdown, tracemonkey, pending, bobs },
    keys: { all: all.value, decks: decksKey.value, single: single.value, empty: empty.value },
    keyIds: { all: all.keyId, decks: decksKey.keyId, single: single.keyId, empty: empty.keyId },
  };
}

/** The shared data set and an endpoint over it (a rate limit no test reaches by accident). */
export async function buildWorldEndpoint(): Promise<
  World & { endpoint: (request: Request) => Promise<Response> }
> {
  const world = await buildWorld();
  const endpoint = world.fixture.endpoint();
  return { ...world, endpoint };
}
