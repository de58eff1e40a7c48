/**
 * A Sergo MCP endpoint for the conformance suite, which cannot send headers:
 * a small local proxy in front of the real endpoint adds the agent key to
 * every request, and passes Host and Origin through untouched.
 *
 * Prints `http://127.0.0.1:<port>/mcp` on its first line once it listens.
 *
 * @module
 */
import { Fixture } from "../mcp/_fixture.ts";

const fixture = await Fixture.open();
const person = await fixture.person("Ava Bennett");
const folder = await fixture.folder(person, "Decks");
await fixture.document(person, folder, "pptx/markitdown-test-deck-chart-table.pptx");
const { value } = await fixture.agentKey(person, "conformance", "Decks for the conformance suite.", {
  folders: [folder],
  documents: [],
});
const endpoint = fixture.endpoint();

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
  (request) =>
    new URL(request.url).pathname === "/mcp"
      ? endpoint(withKey(request))
      : new Response("Not found", { status: 404 }),
);

const stop = async () => {
  await server.shutdown();
  await fixture.dispose();
  Deno.exit(0);
};
Deno.addSignalListener("SIGTERM", stop);
Deno.addSignalListener("SIGINT", stop);
