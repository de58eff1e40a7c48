/**
 * Tool titles on `/mcp`: off by default, because the reference states the
 * `tools/list` answer word for word and it has no title; with
 * `SERGO_MCP_TOOL_TITLES=on` each tool gains `annotations.title` and nothing
 * else changes — the name, description and input schema that a client's
 * trust digest covers (seri's) stay the same bytes, so a server trusted by
 * digest stays trusted.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { loadConfig } from "../../src/config.ts";
import { Fixture, jsonAfter, post, REFERENCE } from "./_fixture.ts";

const DESCRIPTION =
  "EIA's 2023 energy outlook release decks, uploaded as PowerPoint files: the International Energy Outlook 2023 (IEO2023, world projections to 2050) and the Annual Energy Outlook 2023 (AEO2023, United States projections to 2050)";

interface ListedTool {
  name: string;
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
}

/** A digest over what seri fingerprints: the tool's name, description and input schema. */
function trustDigest(tool: ListedTool): string {
  return createHash("sha256").update(
    JSON.stringify([tool.name, tool.description, tool.inputSchema]),
  ).digest("hex");
}

async function listed(fixture: Fixture, value: string, toolTitles: boolean): Promise<ListedTool[]> {
  // The default is what an install gets without the setting.
  const endpoint = toolTitles ? fixture.endpoint({ toolTitles }) : fixture.endpoint();
  const body = await (await post(endpoint, value, { jsonrpc: "2.0", id: 2, method: "tools/list" })).json();
  return body.result.tools;
}

Deno.test("tool titles: none by default (the reference wins); with the setting a title each, and the trust digest unchanged", async () => {
  const fixture = await Fixture.open();
  try {
    const ava = await fixture.person("Ava Bennett");
    const outlooks = await fixture.folder(ava, "Energy outlooks");
    await fixture.folder(ava, "Basic", outlooks);
    const { value } = await fixture.agentKey(ava, "energy-outlooks", DESCRIPTION, {
      folders: [outlooks],
      documents: [],
    });
    const plain = await listed(fixture, value, false);
    const expected = jsonAfter(await Deno.readTextFile(REFERENCE), "so they differ from key to key.") as {
      tools: ListedTool[];
    };
    for (const [i, tool] of plain.entries()) {
      assert.deepEqual(tool.annotations, { readOnlyHint: true, openWorldHint: false }, "no title by default");
      assert.deepEqual({ ...tool, annotations: undefined }, { ...expected.tools[i], annotations: undefined });
    }
    const titled = await listed(fixture, value, true);
    assert.deepEqual(titled.map((tool) => tool.annotations), [
      { title: "Search energy-outlooks", readOnlyHint: true, openWorldHint: false },
      { title: "List the documents in energy-outlooks", readOnlyHint: true, openWorldHint: false },
      { title: "Read a document from energy-outlooks", readOnlyHint: true, openWorldHint: false },
      { title: "View a page from energy-outlooks", readOnlyHint: true, openWorldHint: false },
    ]);
    assert.deepEqual(titled.map(trustDigest), plain.map(trustDigest), "the digest seri trusts is the same");
    for (const [i, tool] of titled.entries()) {
      assert.equal(JSON.stringify(tool.inputSchema), JSON.stringify(plain[i]!.inputSchema), "same bytes");
      assert.equal(tool.description, plain[i]!.description);
    }
  } finally {
    await fixture.dispose();
  }
});

Deno.test("SERGO_MCP_TOOL_TITLES takes on or off, default off", () => {
  const dir = "/tmp/sergo-titles-config";
  const read = (value: string | undefined) => {
    const before = Deno.env.get("SERGO_MCP_TOOL_TITLES");
    if (value === undefined) Deno.env.delete("SERGO_MCP_TOOL_TITLES");
    else Deno.env.set("SERGO_MCP_TOOL_TITLES", value);
    try {
      return loadConfig(["--data", dir]).mcpToolTitles;
    } finally {
      if (before === undefined) Deno.env.delete("SERGO_MCP_TOOL_TITLES");
      else Deno.env.set("SERGO_MCP_TOOL_TITLES", before);
    }
  };
  assert.equal(read(undefined), false);
  assert.equal(read("on"), true);
  assert.equal(read("off"), false);
  assert.throws(() => read("yes"), /SERGO_MCP_TOOL_TITLES must be "on" or "off", got "yes"/);
});
