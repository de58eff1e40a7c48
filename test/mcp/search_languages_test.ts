/**
 * `search` in the languages of the corpus, through the MCP tool: a question
 * asked in another inflected form than the page's finds that page.
 */
import assert from "node:assert/strict";
import { callTool, Fixture } from "./_fixture.ts";

interface Group {
  document_id: string;
  hits: Array<{ page?: number; excerpt: string }>;
}

Deno.test("a Russian question in other cases than the page's finds that page first", async () => {
  const fixture = await Fixture.open();
  try {
    const person = await fixture.person("Vera Orlova");
    const folder = await fixture.folder(person, "Пресса");
    const digest = await fixture.document(person, folder, "docx/media-monitoring-ru-drawing.docx");
    const key = await fixture.agentKey(person, "press", "Press digests.", {
      folders: [folder],
      documents: [],
    });
    const endpoint = fixture.endpoint();
    const search = async (query: string): Promise<Group[]> => {
      const result = await callTool(endpoint, key.value, "search", { query });
      assert.equal(result.isError, false);
      const text = result.content[0]!.text!;
      assert.ok(text.startsWith("["), `"${query}" found nothing: ${text}`);
      return JSON.parse(text) as Group[];
    };
    // The digest writes «новые советские квартиры»; no word of it is written as the question writes it.
    const groups = await search("советской квартирой");
    assert.equal(groups[0]!.document_id, digest);
    assert.match(groups[0]!.hits[0]!.excerpt, /советские квартиры/);
    // The page says «обзавестись собственным гимном» and «гимн»: «гимнами» meets both.
    const anthem = await search("гимнами Новосибирской");
    assert.equal(anthem[0]!.document_id, digest);
    assert.match(anthem[0]!.hits[0]!.excerpt, /гимн/);
  } finally {
    await fixture.dispose();
  }
});
