/**
 * The SSE transport's `Origin` check, as a page in a browser would meet it: a
 * valid key sent from a foreign Origin (a site the person visits, making the
 * browser call a server on their machine) opens no stream and posts no
 * message, and is answered exactly as `/mcp` answers it; the server's own
 * origin and a configured one are let through. A client that does not
 * accept an event stream, or a server that is stopping, opens no session
 * either. The handlers are called
 * directly, as the server calls them.
 */
import assert from "node:assert/strict";
import { agentKeyAuthenticator, createSseTransport } from "../../src/mcp/transports/sse.ts";
import { Fixture } from "./_fixture.ts";

const BASE = "http://127.0.0.1:8787";

Deno.test("/sse refuses a valid key from a foreign Origin with /mcp's 403; its own and configured origins open a stream; no stream without text/event-stream or while stopping", async () => {
  const fixture = await Fixture.open();
  try {
    const ava = await fixture.person("Ava Bennett");
    const folder = await fixture.folder(ava, "Papers");
    const { value: key } = await fixture.agentKey(ava, "reader", "Reads papers.", {
      folders: [folder],
      documents: [],
    });
    const mcp = fixture.endpoint({ allowedOrigins: ["https://app.example.com"] });
    const sse = createSseTransport({
      mcp,
      authenticate: agentKeyAuthenticator(fixture.db),
      allowedOrigins: ["https://app.example.com"],
    });
    try {
      const open = (origin: string | null) =>
        sse.handle(
          new Request(`${BASE}/sse`, {
            headers: {
              authorization: `Bearer ${key}`,
              accept: "text/event-stream",
              ...(origin === null ? {} : { origin }),
            },
          }),
        );
      const viaMcp = (origin: string) =>
        mcp(
          new Request(`${BASE}/mcp`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              origin,
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          }),
        );
      for (const foreign of ["https://evil.example.com", "http://127.0.0.1:9999", "null"]) {
        const refused = await open(foreign);
        const mcpAnswer = await viaMcp(foreign);
        assert.equal(refused.status, 403, `${foreign} opened a stream`);
        assert.equal(mcpAnswer.status, 403);
        assert.deepEqual(await refused.json(), await mcpAnswer.json(), `${foreign}: the same answer as /mcp`);
      }
      assert.equal(sse.open, 0, "no session was opened");
      for (const allowed of [null, BASE, "https://app.example.com"]) {
        const opened = await open(allowed);
        assert.equal(opened.status, 200, `${allowed}`);
        assert.equal(opened.headers.get("content-type"), "text/event-stream");
        await opened.body!.cancel();
      }
      // A client that accepts no event stream is told so; a stopping server opens no more streams.
      const json = await sse.handle(
        new Request(`${BASE}/sse`, {
          headers: { authorization: `Bearer ${key}`, accept: "application/json" },
        }),
      );
      assert.equal(json.status, 406);
      assert.match((await json.json()).error.message, /accept text\/event-stream/);
      sse.close();
      const stopping = await open(null);
      assert.equal(stopping.status, 503);
      assert.match((await stopping.json()).error.message, /The server is stopping/);
      assert.equal(sse.open, 0);
    } finally {
      sse.close();
    }
  } finally {
    await fixture.dispose();
  }
});
