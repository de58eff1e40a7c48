/**
 * A Sergo MCP endpoint for the conformance suite, which cannot send headers:
 * a small local proxy in front of the real endpoint adds the agent key to
 * every request, and passes Host and Origin through untouched.
 *
 * Serves the key's reference server at `/mcp` and its ChatGPT-shaped one at
 * `/chatgpt/mcp`. Prints `http://127.0.0.1:<port>/mcp` on its first line once
 * it listens.
 *
 * @module
 */
import { Fixture } from "../mcp/_fixture.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { CHATGPT_SHAPE } from "../../src/mcp/chatgpt/shape.ts";

const fixture = await Fixture.open();
const person = await fixture.person("Ava Bennett");
const folder = await fixture.folder(person, "Decks");
await fixture.document(person, folder, "pptx/markitdown-test-deck-chart-table.pptx");
const { value } = await fixture.agentKey(person, "conformance", "Decks for the conformance suite.", {
  folders: [folder],
  documents: [],
});
const endpoint = fixture.endpoint();
const chatgpt = createMcpEndpoint({
  db: fixture.db,
  store: fixture.store,
  settings: { rateLimitPerSecond: 10_000 },
  shape: CHATGPT_SHAPE,
});

function withKey(request: Request): Request {
  const headers = new Headers(request.headers);
  headers.set("authorization", `Bearer ${value}`);
  return new Request(request, { headers });
}

const server = Deno.serve(
  {
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("PORT") ?? 0),
    onListen: ({ port }) => console.log(`http://127.0.0.1:${port}/mcp`),
  },
  (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/mcp") return endpoint(withKey(request));
    if (path === "/chatgpt/mcp") return chatgpt(withKey(request));
    return new Response("Not found", { status: 404 });
  },
);

const stop = async () => {
  await server.shutdown();
  await fixture.dispose();
  Deno.exit(0);
};
Deno.addSignalListener("SIGTERM", stop);
Deno.addSignalListener("SIGINT", stop);
