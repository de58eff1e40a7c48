// Sergo console, connection snippets: for a key's name, the server's public
// URL and the key's value (or a placeholder), what to paste into each agent
// app. One source for the console (keys.js shows them when a key is made or
// rolled, and with a placeholder on the key's page), for docs/snippets.md
// (written from `snippetsMarkdown`), and for the tests that parse each
// snippet as its app reads it and use it against a running server
// (test/console/snippets_test.ts). Each app's format was checked against its
// documentation on the date in CHECKED.
"use strict";

(() => {
  /** The mcp-remote release the Claude Desktop snippet runs (a bridge from stdio to HTTP, from npm). */
  const MCP_REMOTE = "mcp-remote@0.15.1";
  /** The day each app's format below was last checked against the app's own documentation. */
  const CHECKED = "2026-12-03";
  /** What the snippets show where the key's value is not known (on the key's page). */
  const PLACEHOLDER = "<agent key>";
  /** The environment variable the snippets that keep the key out of the file read. */
  const KEY_VARIABLE = "SERGO_KEY";
  /** The permissions `mcp-stdio` runs with: it reads and writes the data directory, renders pages (ffi). */
  const STDIO_PERMISSIONS = [
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-env",
    "--allow-sys",
    "--allow-ffi",
  ];

  function isLoopback(url) {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || /^127\./.test(host);
  }

  /**
   * Why an app that connects from its vendor's servers cannot reach `url`, or
   * null when the URL is public https.
   */
  function cloudProblem(url, app) {
    const http = new URL(url).protocol === "http:";
    const loopback = isLoopback(url);
    if (!http && !loopback) return null;
    const what = loopback && http
      ? "is http and on this machine only"
      : loopback
      ? "is on this machine only"
      : "is http, not https";
    return `This address ${what}: ${app} connects from its own servers and needs a public https address. ` +
      "Start serve with --cert and --key (or behind an https proxy) and set SERGO_PUBLIC_URL to that address, " +
      "or open a tunnel to this port (for example cloudflared tunnel --url " + new URL(url).origin + ").";
  }

  function json(value) {
    return JSON.stringify(value, null, 2);
  }

  /** A TOML basic string. */
  function tomlString(value) {
    return JSON.stringify(value);
  }

  /**
   * The snippets for one key, in the order the console shows them. Each has
   * an `id`, the `app` it is for, a `title`, what to do with it (`where`),
   * its `language`, its `text`, the `transport` and `auth` it uses, and the
   * day its format was `checked`; some have a `secret` (the key, to set in
   * the environment rather than in a file people commit) and a `warning`
   * (the URL cannot work for that app as it is). `value` null shows a
   * placeholder for the key. Without OAuth (`SERGO_OAUTH=off`) there is no
   * connector snippet: connector apps can only sign in. `options.stdio`
   * (absolute paths of deno, main.ts, deno.json and the data directory)
   * adds the stdio snippet, for apps on the machine that holds the data.
   */
  function connectionSnippets(name, publicUrl, value, options = {}) {
    const oauth = options.oauth ?? true;
    const key = value ?? PLACEHOLDER;
    const base = publicUrl.replace(/\/+$/, "");
    const mcp = `${base}/mcp`;
    const sse = `${base}/sse`;
    const chatgpt = `${base}/chatgpt/mcp`;
    const bearer = `Bearer ${key}`;
    const secret = { variable: KEY_VARIABLE, text: `export ${KEY_VARIABLE}=${key}` };
    const remoteArgs = ["-y", MCP_REMOTE, mcp, "--header", "Authorization:${SERGO_AUTH}"];
    if (new URL(mcp).protocol === "http:" && !isLoopback(mcp)) remoteArgs.push("--allow-http");
    const common = { checked: CHECKED };
    const list = [
      {
        id: "claude",
        app: "Claude Code",
        title: "Claude Code",
        where: "Run in a terminal:",
        language: "shell",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: `claude mcp add --transport http ${name} ${mcp} \\\n  --header "Authorization: ${bearer}"`,
      },
      {
        id: "claude-desktop",
        app: "Claude Desktop",
        title: "Claude Desktop (with mcp-remote)",
        where:
          "Add to claude_desktop_config.json (it launches local commands, so mcp-remote from npm carries the header; needs Node.js)." +
          (oauth ? " Or add a custom connector with the URL below and sign in." : ""),
        language: "json",
        transport: "stdio, bridged to Streamable HTTP",
        auth: "bearer header",
        text: json({
          mcpServers: { [name]: { command: "npx", args: remoteArgs, env: { SERGO_AUTH: bearer } } },
        }),
      },
      oauth && {
        id: "connector",
        app: "claude.ai connector",
        title: "claude.ai and Claude Desktop connectors (OAuth)",
        where:
          "Settings → Connectors → Add custom connector, with this URL; the app signs in with OAuth and you choose this key on Sergo's consent page (a connector takes no pasted key):",
        language: "text",
        transport: "Streamable HTTP",
        auth: "OAuth",
        text: mcp,
        warning: cloudProblem(mcp, "claude.ai"),
      },
      oauth && {
        id: "chatgpt",
        app: "ChatGPT",
        title: "ChatGPT (OAuth)",
        where:
          "Settings → Apps & Connectors → Advanced → Developer mode, then Create, with this URL and OAuth; ChatGPT uses the search and fetch tools of Sergo's ChatGPT-shaped server, and you choose this key on Sergo's consent page:",
        language: "text",
        transport: "Streamable HTTP",
        auth: "OAuth",
        text: chatgpt,
        warning: cloudProblem(chatgpt, "ChatGPT"),
      },
      {
        id: "json",
        app: "Cursor",
        title: "Cursor",
        where: "Add to .cursor/mcp.json (or ~/.cursor/mcp.json):",
        language: "json",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: json({ mcpServers: { [name]: { url: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "vscode",
        app: "VS Code",
        title: "VS Code",
        where: "Add to .vscode/mcp.json:",
        language: "json",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: json({ servers: { [name]: { type: "http", url: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "windsurf",
        app: "Windsurf",
        title: "Windsurf",
        where: "Add to ~/.codeium/windsurf/mcp_config.json (a remote server's address is serverUrl):",
        language: "json",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: json({ mcpServers: { [name]: { serverUrl: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "codex",
        app: "Codex CLI",
        title: "Codex CLI",
        where:
          `Add to ~/.codex/config.toml; Codex reads the key from ${KEY_VARIABLE} in its environment (it takes no key in the file):`,
        language: "toml",
        transport: "Streamable HTTP",
        auth: "bearer header from an environment variable",
        text: `[mcp_servers.${name}]\nurl = ${tomlString(mcp)}\nbearer_token_env_var = ${
          tomlString(KEY_VARIABLE)
        }`,
        secret,
      },
      {
        id: "gemini",
        app: "Gemini CLI",
        title: "Gemini CLI",
        where: "Add to ~/.gemini/settings.json (httpUrl is Streamable HTTP; url would mean SSE):",
        language: "json",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: json({ mcpServers: { [name]: { httpUrl: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "copilot-studio",
        app: "Copilot Studio",
        title: "Microsoft Copilot Studio",
        where:
          "In your agent: Tools → Add a tool → New tool → Model Context Protocol, and fill in the wizard; then make a connection with the key:",
        language: "text",
        transport: "Streamable HTTP",
        auth: "API key in a header",
        text: [
          `Server name: ${name}`,
          `Server URL: ${mcp}`,
          "Authentication: API key",
          "Type: Header",
          "Header name: Authorization",
          `Connection's key: ${bearer}`,
        ].join("\n"),
        warning: cloudProblem(mcp, "Copilot Studio"),
      },
      {
        id: "continue",
        app: "Continue",
        title: "Continue",
        where: `Save as .continue/mcpServers/${name}.yaml in your workspace:`,
        language: "yaml",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: [
          `name: ${name}`,
          "version: 0.0.1",
          "schema: v1",
          "mcpServers:",
          `  - name: ${name}`,
          "    type: streamable-http",
          `    url: ${mcp}`,
          "    requestOptions:",
          "      headers:",
          `        Authorization: "${bearer}"`,
        ].join("\n"),
      },
      {
        id: "zed",
        app: "Zed",
        title: "Zed",
        where: "Add to Zed's settings.json (zed: open settings file):",
        language: "json",
        transport: "Streamable HTTP",
        auth: "bearer header",
        text: json({ context_servers: { [name]: { url: mcp, headers: { Authorization: bearer } } } }),
      },
      {
        id: "seri",
        app: "seri",
        title: "seri",
        where:
          `Add to .seri/mcp/servers.yaml, and set ${KEY_VARIABLE} in the environment (never in the file, which people commit):`,
        language: "yaml",
        transport: "Streamable HTTP",
        auth: "bearer header from an environment variable",
        text:
          `servers:\n  ${name}:\n    url: ${mcp}\n    headers:\n      Authorization: "Bearer \${env:${KEY_VARIABLE}}"`,
        secret,
        warning: new URL(mcp).protocol === "http:"
          ? "seri takes https addresses only: start serve with --cert and --key (or behind an https proxy) and set SERGO_PUBLIC_URL to that address."
          : null,
      },
      {
        id: "sagewai",
        app: "Sagewai",
        title: "Sagewai",
        where: "Streamable HTTP (preferred), or the legacy SSE transport:",
        language: "python",
        transport: "Streamable HTTP or SSE",
        auth: "bearer header",
        text:
          `tools = await McpClient.connect_http(\n    "${mcp}",\n    headers={"Authorization": "${bearer}"},\n)\n` +
          `# or: tools = await McpClient.connect_sse("${sse}", headers={"Authorization": "${bearer}"})`,
      },
      {
        id: "python",
        app: "Python SDK",
        title: "Python (the official MCP SDK: pip install mcp)",
        where:
          "List the tools and search (the client keeps the SDK's own timeouts: 30 s, and 300 s to read):",
        language: "python",
        transport: "Streamable HTTP",
        auth: "bearer header",
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
          "    timeout = httpx2.Timeout(30.0, read=300.0)",
          "    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:",
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
        transport: "Streamable HTTP",
        auth: "bearer header",
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
      options.stdio && {
        id: "stdio",
        app: "stdio",
        title: "stdio (an app on this machine that launches a command)",
        where:
          "For apps that launch a local command (the mcpServers file of Claude Desktop, Cursor or Windsurf), on the machine that holds Sergo's data; the paths are absolute, so it works from any folder:",
        language: "json",
        transport: "stdio",
        auth: "the key from an environment variable",
        text: json({
          mcpServers: {
            [name]: {
              command: options.stdio.deno,
              args: [
                "run",
                ...STDIO_PERMISSIONS,
                "--config",
                options.stdio.config,
                options.stdio.main,
                "mcp-stdio",
                "--key-env",
                KEY_VARIABLE,
                "--data",
                options.stdio.data,
              ],
              env: { [KEY_VARIABLE]: key },
            },
          },
        }),
      },
    ];
    return list.filter(Boolean).map((s) => ({ ...common, warning: null, secret: null, ...s }));
  }

  /**
   * The snippets as a Markdown page (docs/snippets.md): a table of the apps
   * with their transport, auth and the day their format was checked, then
   * each snippet. `stdio` names the example paths the stdio snippet shows.
   */
  function snippetsMarkdown(name, publicUrl, stdio) {
    const snippets = connectionSnippets(name, publicUrl, null, { stdio });
    const fence = (language, text) => `\`\`\`${language === "shell" ? "sh" : language}\n${text}\n\`\`\``;
    const lines = [
      "# Connection snippets",
      "",
      "<!-- Written from src/console/assets/snippets.js by `deno task snippets-docs`; test/console/snippets_test.ts checks it. -->",
      "",
      `What the console shows for a key, here \`${name}\` at \`${publicUrl}\`, with ${
        "`" + PLACEHOLDER + "`"
      } where the key goes (the console fills it in when the key is made or rolled). Each snippet is parsed as its app reads it and used against a running server by test/console/snippets_test.ts.`,
      "",
      "| App | Transport | Auth | Format checked |",
      "| --- | --- | --- | --- |",
      ...snippets.map((s) => `| ${s.app} | ${s.transport} | ${s.auth} | ${s.checked} |`),
    ];
    for (const s of snippets) {
      lines.push("", `## ${s.title}`, "", s.where, "", fence(s.language, s.text));
      if (s.secret) {
        lines.push("", `Then, in the environment the app starts from:`, "", fence("sh", s.secret.text));
      }
    }
    lines.push(
      "",
      "An app that connects from its vendor's servers (claude.ai, Claude Desktop connectors, ChatGPT, Copilot Studio) needs a public https address: start `serve` with `--cert` and `--key` (or behind an https proxy) and set `SERGO_PUBLIC_URL`, or open a tunnel. The console says so beside those snippets when its address is http or on the machine only.",
      "",
    );
    return lines.join("\n");
  }

  globalThis.SergoSnippets = { connectionSnippets, snippetsMarkdown, MCP_REMOTE, CHECKED, PLACEHOLDER };
})();
