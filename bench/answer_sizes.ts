/**
 * The largest answer each tool gives, measured on the corpus's largest
 * documents through the real endpoints (`/mcp` and `/chatgpt/mcp`), against
 * what the apps take: claude.ai's ~150,000 characters of a tool result and
 * Claude Code's 25,000-token default (`MAX_MCP_OUTPUT_TOKENS`). Text is
 * counted in characters of the tool result as sent (its content blocks'
 * JSON) and in tokens by Anthropic's tokenizer (`@anthropic-ai/tokenizer`,
 * the published Claude tokenizer; newer models count a little differently);
 * a picture by its size and its cost as Claude counts images
 * (width × height ÷ 750 tokens), a one-page PDF by its bytes and base64.
 *
 * Run: `deno run -A --no-lock bench/answer_sizes.ts` (prints a Markdown table
 * and the figures as JSON on its last line). The tokenizer is loaded at run
 * time, not listed in `deno.json`: it depends on `@types/node@18`, which would
 * replace the project's Node types (and their `node:sqlite`) in every check.
 *
 * @module
 */
import { createMcpEndpoint } from "../src/mcp/endpoint.ts";
import { CHATGPT_SHAPE } from "../src/mcp/chatgpt/shape.ts";
import { PageViews } from "../src/render/page_cache.ts";
import { createRenderPool } from "../src/render/render_pool.ts";
import { Fixture } from "../test/mcp/_fixture.ts";

/** Anthropic's published tokenizer, by a specifier `deno check` does not follow (see the module doc). */
const TOKENIZER = ["npm:@anthropic-ai", "tokenizer@0.0.4"].join("/");
const { countTokens } = await import(TOKENIZER) as { countTokens: (text: string) => number };

/** claude.ai's limit on a tool result, in characters. */
const CLAUDE_AI_CHARS = 150_000;
/** Claude Code's default `MAX_MCP_OUTPUT_TOKENS`. */
const CLAUDE_CODE_TOKENS = 25_000;

/** The largest documents of each kind in the corpus (by pages or text), and queries that hit their long pages. */
const DOCUMENTS = [
  "pdf/irs-internal-revenue-manual-2-3-59-400p.pdf",
  "text/war-and-peace-gutenberg.txt",
  "docx/doj-chapter13-trustee-handbook-long.docx",
  "pptx/how-we-refactor-groups-pictures.pptx",
  "pdf/cancer-council-breast-cancer-guide.pdf",
  "pdf/chelsea-active-transport-plan-fr.pdf",
  "pdf/ibm-redbook-db2-rcac-sampled.pdf",
  "pdf/tracemonkey-pldi-paper.pdf",
  // Scripts that take more tokens per character than English.
  "pdf/cjk-zh-quarterly-report.pdf",
  "docx/un-cedaw-bangladesh-report-ar.docx",
];
const QUERIES = [
  "command code terminal input output",
  "Pierre Natasha Andrew prince war",
  "trustee debtor plan payments",
  "营业收入 净利润 季度",
  "المرأة التمييز الاتفاقية",
  "breast cancer treatment surgery",
  "transport cycling walking",
  "row column access control",
];
/** Pages drawn by `view_page` per PDF, to find the largest picture and one-page PDF. */
const VIEW_PAGES = 6;

interface Answer {
  content: Array<
    { type: string; text?: string; data?: string; mimeType?: string; resource?: { blob: string } }
  >;
  isError: boolean;
}

interface Figure {
  tool: string;
  what: string;
  chars: number;
  tokens: number | null;
  note: string;
}

type Endpoint = (request: Request) => Promise<Response>;

async function call(endpoint: Endpoint, key: string, name: string, args: unknown): Promise<Answer> {
  const response = await endpoint(
    new Request("http://127.0.0.1:8787/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name, arguments: args },
      }),
    }),
  );
  const body = await response.json();
  if (!body.result) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
  return body.result;
}

/** What an app gets of a text answer: its blocks' text (what the model reads), counted. */
function textFigure(tool: string, what: string, answer: Answer): Figure {
  const text = answer.content.map((block) => block.text ?? "").join("\n");
  return { tool, what, chars: text.length, tokens: countTokens(text), note: "" };
}

function pngSize(base64: string): { width: number; height: number } {
  const bytes = Uint8Array.from(atob(base64.slice(0, 64)), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

async function main(): Promise<void> {
  const fixture = await Fixture.open();
  const pool = createRenderPool({ concurrency: 1 });
  try {
    const person = await fixture.person("Ava Bennett");
    const folder = await fixture.folder(person, "Largest");
    const ids = new Map<string, string>();
    for (const path of DOCUMENTS) {
      const started = performance.now();
      ids.set(path, await fixture.document(person, folder, path));
      console.error(`read ${path} in ${Math.round(performance.now() - started)} ms`);
    }
    const { value: key } = await fixture.agentKey(person, "largest", "The corpus's largest documents.", {
      folders: [folder],
      documents: [],
    });
    const reference = createMcpEndpoint({
      db: fixture.db,
      store: fixture.store,
      settings: { rateLimitPerSecond: 10_000 },
      pageViews: new PageViews(fixture.blobs, pool),
    });
    const chatgpt = createMcpEndpoint({
      db: fixture.db,
      store: fixture.store,
      settings: { rateLimitPerSecond: 10_000 },
      shape: CHATGPT_SHAPE,
    });
    const figures: Figure[] = [];
    const largest = (all: Figure[]) => all.reduce((a, b) => (b.chars > a.chars ? b : a));
    const costliest = (all: Figure[]) => all.reduce((a, b) => ((b.tokens ?? 0) > (a.tokens ?? 0) ? b : a));
    const both = (all: Figure[]) => [...new Set([largest(all), costliest(all)])];

    // read_document without a page: whole pages up to 24,000 characters, on every document.
    const reads: Figure[] = [];
    for (const [path, id] of ids) {
      reads.push(
        textFigure(
          "read_document",
          `whole, ${path.split("/").pop()}`,
          await call(reference, key, "read_document", { document_id: id }),
        ),
      );
    }
    // Every document's: the characters are capped alike, the tokens depend on the script.
    figures.push(...reads);

    // search with limit 20: the 20 excerpts of the longest pages.
    const searches: Figure[] = [];
    for (const query of QUERIES) {
      searches.push(
        textFigure(
          "search",
          `limit 20, '${query}'`,
          await call(reference, key, "search", { query, limit: 20 }),
        ),
      );
    }
    figures.push(...both(searches));

    // view_page: the largest picture and the largest one-page PDF of the first pages of each PDF.
    let png = { chars: 0, what: "", tokens: 0, width: 0, height: 0 };
    let pdf = { chars: 0, what: "", bytes: 0 };
    for (const [path, id] of ids) {
      if (!path.endsWith(".pdf")) continue;
      for (let page = 1; page <= VIEW_PAGES; page++) {
        const image = await call(reference, key, "view_page", { document_id: id, page });
        const data = image.content[1]?.data;
        if (data && data.length > png.chars) {
          const { width, height } = pngSize(data);
          png = {
            chars: data.length,
            what: `${path.split("/").pop()} p. ${page}`,
            tokens: Math.round(width * height / 750),
            width,
            height,
          };
        }
        const onePage = await call(reference, key, "view_page", { document_id: id, page, format: "pdf" });
        const blob = onePage.content[1]?.resource?.blob;
        if (blob && blob.length > pdf.chars) {
          pdf = {
            chars: blob.length,
            what: `${path.split("/").pop()} p. ${page}`,
            bytes: Math.floor(blob.length * 3 / 4),
          };
        }
      }
    }
    figures.push({
      tool: "view_page",
      what: `image, ${png.what}`,
      chars: png.chars,
      tokens: png.tokens,
      note: `PNG ${png.width} × ${png.height}, base64 ${
        png.chars.toLocaleString("en-US")
      } characters; tokens as an image`,
    });
    figures.push({
      tool: "view_page",
      what: `pdf, ${pdf.what}`,
      chars: pdf.chars,
      tokens: null,
      note: `one-page PDF of ${pdf.bytes.toLocaleString("en-US")} bytes, base64 ${
        pdf.chars.toLocaleString("en-US")
      } characters`,
    });

    // The ChatGPT shape: 20 results, and a page read by fetch (the longest page of the search results).
    const gptSearches: Figure[] = [];
    const fetches: Figure[] = [];
    for (const query of QUERIES) {
      const found = await call(chatgpt, key, "search", { query });
      gptSearches.push(textFigure("chatgpt search", `'${query}'`, found));
      for (const result of JSON.parse(found.content[0]!.text!).results as Array<{ id: string }>) {
        fetches.push(
          textFigure("chatgpt fetch", result.id, await call(chatgpt, key, "fetch", { id: result.id })),
        );
      }
    }
    figures.push(...both(gptSearches), ...both(fetches));

    console.log("| Tool | Largest answer measured | Characters | Tokens | Note |");
    console.log("|---|---|---:|---:|---|");
    for (const f of figures) {
      console.log(
        `| ${f.tool} | ${f.what} | ${f.chars.toLocaleString("en-US")} | ${
          f.tokens?.toLocaleString("en-US") ?? "—"
        } | ${f.note} |`,
      );
    }
    console.log(
      JSON.stringify({ claudeAiChars: CLAUDE_AI_CHARS, claudeCodeTokens: CLAUDE_CODE_TOKENS, figures }),
    );
  } finally {
    pool.close();
    await fixture.dispose();
  }
}

await main();
