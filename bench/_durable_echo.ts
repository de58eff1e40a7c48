/**
 * A bare `Deno.serve` JSON-RPC echo that makes each request durable before it
 * answers: the request's body is written to a SQLite file (WAL, `synchronous =
 * FULL`, as Sergo's log) by a writer thread, requests that arrive together in
 * one transaction, one commit at a time. What an audited call costs at the
 * least on this machine's disk: its group commit and nothing else (no schema,
 * no hash chain, no projections, no auth). The protocol benchmark sets
 * Sergo's audited calls beside it, as beside the plain echo.
 *
 * @module
 */

/** The durable echo's server and what closes it. */
export interface DurableEcho {
  server: Deno.HttpServer<Deno.NetAddr>;
  /** Commits made (each request is in exactly one). */
  commits(): number;
  close(): Promise<void>;
}

/** Starts the durable echo answering with `resultJson`, its SQLite file in `dir`. */
export async function durableEcho(resultJson: string, dir: string): Promise<DurableEcho> {
  const writer = new Worker(new URL("./_durable_echo_writer.ts", import.meta.url), { type: "module" });
  const answered = new Map<number, Array<() => void>>();
  let opened: () => void = () => {};
  let closed: () => void = () => {};
  writer.onmessage = (message: MessageEvent<number | "opened" | "closed">) => {
    if (message.data === "opened") return opened();
    if (message.data === "closed") return closed();
    for (const resolve of answered.get(message.data) ?? []) resolve();
    answered.delete(message.data);
    writing = false;
    flush();
  };
  await new Promise<void>((resolve) => {
    opened = resolve;
    writer.postMessage({ path: `${dir}/durable-echo.db` });
  });
  let pending: Array<{ body: string; resolve: () => void }> = [];
  let writing = false;
  let next = 0;
  let commits = 0;
  // One commit at a time; what arrives meanwhile goes in the next one.
  const flush = () => {
    if (writing || pending.length === 0) return;
    writing = true;
    const id = next++;
    const batch = pending;
    pending = [];
    answered.set(id, batch.map((item) => item.resolve));
    commits++;
    writer.postMessage({ id, bodies: batch.map((item) => item.body) });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const text = await request.text();
    const body = JSON.parse(text);
    await new Promise<void>((resolve) => {
      pending.push({ body: text, resolve });
      setImmediate(flush);
    });
    return new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${resultJson}}`, {
      headers: { "content-type": "application/json" },
    });
  });
  return {
    server,
    commits: () => commits,
    async close() {
      await server.shutdown();
      await new Promise<void>((resolve) => {
        closed = resolve;
        writer.postMessage("close");
      });
      writer.terminate();
    },
  };
}
