// Sergo console, connection snippets: for a key's name, the server's public
// URL and the key's value, what to paste into each agent app. One source for
// the console (keys.js shows them when a key is made or rolled) and for the
// tests that parse each snippet and, where the app runs on the test machine,
// use it (test/console/snippets_test.ts).
"use strict";

(() => {
  /** The mcp-remote release the Claude Desktop snippet runs (a bridge from stdio to HTTP, from npm). */
  const MCP_REMOTE = "mcp-remote@0.15.1";

  function isLoopback(url) {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || /^127\./.test(host);
  }

  function json(value) {
    return JSON.stringify(value, null, 2);
  }

  /**
   * The snippets for one key, in the order the console shows them. Each has
   * an `id`, the `app` it is for, a `title`, what to do with it (`where`),
   * its `language` and its `text`. Without OAuth (`SERGO_OAUTH=off`) there
   * is no connector snippet: connector apps can only sign in.
   */
  function connectionSnippets(name, publicUrl, value, options = { oauth: true }) {
    const base = publicUrl.replace(/\/+$/, "");
    const mcp = `${base}/mcp`;
    const sse = `${base}/sse`;
    const bearer = `Bearer ${value}`;
    const remoteArgs = ["-y", MCP_REMOTE, mcp, "--header", "Authorization:${SERGO_AUTH}"];
    if (new URL(mcp).protocol === "http:" && !isLoopback(mcp)) remoteArgs.push("--allow-http");
    return [
      {
        id: "claude",
        app: "Claude Code",
        title: "Claude Code",
        where: "Run in a terminal:",
        language: "shell",
        text: `claude mcp add --transport http ${name} ${mcp} \\\n  --header "Authorization: ${bearer}"`,
      },
      {
        id: "json",
        app: "Cursor",
        title: "Cursor",
        where: "Add to .cursor/mcp.json (or ~/.cursor/mcp.json):",
        language: "json",
        text: json({ mcpServers: { [name]: { url: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "vscode",
        app: "VS Code",
        title: "VS Code",
        where: "Add to .vscode/mcp.json:",
        language: "json",
        text: json({ servers: { [name]: { type: "http", url: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "claude-desktop",
        app: "Claude Desktop",
        title: "Claude Desktop",
        where:
          "Add to claude_desktop_config.json (it launches local commands, so mcp-remote from npm carries the header; needs Node.js)." +
          (options.oauth ? " Or add a custom connector with the URL below and sign in." : ""),
        language: "json",
        text: json({
          mcpServers: { [name]: { command: "npx", args: remoteArgs, env: { SERGO_AUTH: bearer } } },
        }),
      },
      options.oauth && {
        id: "connector",
        app: "Claude and ChatGPT connectors",
        title: "claude.ai, Claude Desktop and ChatGPT connectors (OAuth)",
        where:
          "Add a custom connector with this URL; the app signs in with OAuth and you choose this key on Sergo's consent page:",
        language: "text",
        text: mcp,
      },
      {
        id: "seri",
        app: "seri",
        title: "seri",
        where: "Add to .seri/mcp/servers.yaml, and set SERGO_KEY in the environment:",
        language: "yaml",
        text:
          `servers:\n  ${name}:\n    url: ${mcp}\n    headers:\n      Authorization: "Bearer \${env:SERGO_KEY}"\n` +
          `# export SERGO_KEY=${value}`,
      },
      {
        id: "sagewai",
        app: "Sagewai",
        title: "Sagewai",
        where: "Streamable HTTP (preferred), or the legacy SSE transport:",
        language: "python",
        text:
          `tools = await McpClient.connect_http(\n    "${mcp}",\n    headers={"Authorization": "${bearer}"},\n)\n` +
          `# or: tools = await McpClient.connect_sse("${sse}", headers={"Authorization": "${bearer}"})`,
      },
      {
        id: "python",
        app: "Python SDK",
        title: "Python (the official MCP SDK: pip install mcp)",
        where: "List the tools and search:",
        language: "python",
        text: [
          "import asyncio",
          "",
          "import httpx2",
          "from mcp import ClientSession",
          "from mcp.client.streamable_http import streamable_http_client",
          "",
          "",
          "async def main() -> None:",
          `    headers = {"Authorization": "${bearer}"}`,
          "    async with httpx2.AsyncClient(headers=headers) as http:",
          `        async with streamable_http_client("${mcp}", http_client=http) as (read, write):`,
          "            async with ClientSession(read, write) as session:",
          "                await session.initialize()",
          "                tools = await session.list_tools()",
          "                print([tool.name for tool in tools.tools])",
          '                found = await session.call_tool("search", {"query": "what to look for"})',
          "                print(found.content[0].text)",
          "",
          "",
          "asyncio.run(main())",
        ].join("\n"),
      },
      {
        id: "typescript",
        app: "TypeScript SDK",
        title: "TypeScript (the official MCP SDK: @modelcontextprotocol/sdk)",
        where: "List the tools and search:",
        language: "typescript",
        text: [
          'import { Client } from "@modelcontextprotocol/sdk/client/index.js";',
          'import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";',
          "",
          `const transport = new StreamableHTTPClientTransport(new URL("${mcp}"), {`,
          `  requestInit: { headers: { Authorization: "${bearer}" } },`,
          "});",
          'const client = new Client({ name: "my-agent", version: "1.0.0" });',
          "await client.connect(transport);",
          "console.log((await client.listTools()).tools.map((tool) => tool.name));",
          'const found = await client.callTool({ name: "search", arguments: { query: "what to look for" } });',
          "console.log(found.content[0].text);",
          "await client.close();",
        ].join("\n"),
      },
    ].filter(Boolean);
  }

  globalThis.SergoSnippets = { connectionSnippets, MCP_REMOTE };
})();
