/**
 * One MCP `tools/call` over plain HTTP (stateless, no initialize), as a
 * client behind a load balancer sends it: the answer's HTTP status and, on
 * 200, the JSON-RPC result (from a JSON body or an SSE `data:` line).
 *
 * @module
 */

/** What one call got. */
export interface ToolAnswer {
  status: number;
  /** The JSON-RPC result on 200 (null otherwise, or when the body was an error). */
  result: { content: { type: string; text?: string }[]; isError?: boolean } | null;
  /** The text of every text block, joined (empty when none). */
  text: string;
  /** The answer's body as it came. */
  body: string;
}

/**
 * Calls tool `name` at `${url}/mcp` with an agent key; network failures throw.
 * `client`: e.g. one without kept-alive connections, which Deno's fetch would
 * send a POST again on when the connection closes before an answer.
 */
export async function callTool(
  url: string,
  key: string,
  name: string,
  args: Record<string, unknown>,
  id: number | string = 1,
  client?: Deno.HttpClient,
): Promise<ToolAnswer> {
  const response = await fetch(`${url}/mcp`, {
    client,
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = await response.text();
  if (response.status !== 200) return { status: response.status, result: null, text: "", body };
  const json = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? body.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("")
    : body;
  const message = JSON.parse(json) as { result?: ToolAnswer["result"] };
  const result = message.result ?? null;
  const text = (result?.content ?? []).map((block) => block.text ?? "").join("\n");
  return { status: 200, result, text, body };
}
