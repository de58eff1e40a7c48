/**
 * Every connection snippet the console shows (src/console/assets/snippets.js)
 * is parsed as its app parses it, and used against the real `serve`: by the
 * app itself where it runs here (mcp-remote from npm for Claude Desktop, the
 * Python and TypeScript SDK snippets run as written), otherwise by the
 * official SDK client with exactly the URL and headers the snippet gives.
 * docs/connecting-agents.md shows the same snippets.
 */
import assert from "node:assert/strict";
import { EXAMPLE_STDIO } from "./_docs_paths.ts";
import { assertAll } from "../helpers/assert_all.ts";
import { parse as parseYaml } from "yaml";
import { parse as parseToml } from "smol-toml";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { type OAuthWorld, startOAuthWorld } from "../auth/_oauth.ts";
import "../../src/console/assets/snippets.js";
import { needs } from "../helpers/dependencies.ts";
import { within } from "../helpers/wait.ts";

interface Snippet {
  id: string;
  app: string;
  title: string;
  where: string;
  language: string;
  text: string;
  transport: string;
  auth: string;
  checked: string;
  warning: string | null;
  secret: { variable: string; text: string } | null;
}

interface StdioPaths {
  deno: string;
  config: string;
  main: string;
  data: string;
}

const { connectionSnippets, snippetsMarkdown, MCP_REMOTE, PLACEHOLDER } = (globalThis as unknown as {
  SergoSnippets: {
    connectionSnippets(
      name: string,
      url: string,
      value: string | null,
      options?: { oauth?: boolean; stdio?: StdioPaths },
    ): Snippet[];
    snippetsMarkdown(name: string, url: string, stdio: typeof EXAMPLE_STDIO): string;
    MCP_REMOTE: string;
    PLACEHOLDER: string;
  };
}).SergoSnippets;

/** The value a snippet's `export VAR=value` line sets. */
function exported(snippet: Snippet): Record<string, string> {
  assert.ok(snippet.secret, `the ${snippet.app} snippet gives the key apart from the file`);
  const [, variable, value] = /^export ([A-Z_]+)=(\S+)$/.exec(snippet.secret.text)!;
  return { [variable!]: value! };
}

const QUERY = "MarkItDown converting files to Markdown";
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

function byId(snippets: Snippet[], id: string): Snippet {
  const found = snippets.find((s) => s.id === id);
  assert.ok(found, `there is a snippet for ${id}`);
  return found;
}

/** Splits a shell command as a POSIX shell would (quotes, and backslash-newline continuations). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else word = (word ?? "") + c;
    } else if (c === "\\" && command[i + 1] === "\n") {
      i++;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** Connects the official client with a URL and headers, lists the tools and searches. */
async function useWith(
  url: string,
  headers: Record<string, string>,
  transport: "http" | "sse" = "http",
): Promise<{ server: string; tools: string[]; found: string }> {
  const client = new Client({ name: "snippet-check", version: "1.0.0" });
  await client.connect(
    transport === "http"
      ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
      : new SSEClientTransport(new URL(url), { requestInit: { headers } }),
  );
  try {
    const { tools } = await client.listTools();
    const found = await client.callTool({ name: "search", arguments: { query: QUERY } });
    return {
      server: client.getServerVersion()!.name,
      tools: tools.map((t: { name: string }) => t.name),
      found: (found.content as Array<{ text: string }>)[0]!.text,
    };
  } finally {
    await client.close();
  }
}

function assertWorks(world: OAuthWorld, used: { server: string; tools: string[]; found: string }): void {
  assert.equal(used.server, "decks");
  assert.deepEqual(used.tools, ["search", "list_documents", "read_document", "view_page"]);
  assert.match(used.found, /markitdown-readme\.md/);
  assert.ok(world.url.startsWith("http://127.0.0.1:"));
}

/** Speaks MCP over a child's stdio: one JSON-RPC message a line. */
async function overStdio(
  child: Deno.ChildProcess,
): Promise<{ tools: string[]; found: string; server: string }> {
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const send = (message: unknown) => writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const answer = async (id: number): Promise<Record<string, unknown>> => {
    for (;;) {
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith("{")) continue;
        const message = JSON.parse(line);
        if (message.id === id) return message;
      }
      const { value, done } = await within(reader.read(), { ms: 180_000, what: "the bridge's next output" });
      if (done) throw new Error("The bridge ended before answering");
      buffer += value;
    }
  };
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "claude-desktop-stand-in", version: "1" },
      },
    });
    const init = await answer(1) as { result: { serverInfo: { name: string } } };
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = await answer(2) as { result: { tools: Array<{ name: string }> } };
    await send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "search", arguments: { query: QUERY } },
    });
    const found = await answer(3) as { result: { content: Array<{ text: string }> } };
    return {
      server: init.result.serverInfo.name,
      tools: list.result.tools.map((t) => t.name),
      found: found.result.content[0]!.text,
    };
  } finally {
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
  }
}

Deno.test({
  name: "every connection snippet parses as its app reads it, and works against a running server",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using world = await startOAuthWorld();
    await world.processed();
    const key = world.decksKey.value;
    const snippets = connectionSnippets("decks", world.url, key);
    const mcp = `${world.url}/mcp`;

    await t.step("Claude Code: a `claude mcp add` command with the URL and the header", async () => {
      const words = shellWords(byId(snippets, "claude").text);
      assert.deepEqual(words, [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        "decks",
        mcp,
        "--header",
        `Authorization: Bearer ${key}`,
      ]);
      const [name, value] = words[8]!.split(/:\s*/);
      assertWorks(world, await useWith(words[6]!, { [name!]: value! }));
    });

    await t.step("Cursor: mcpServers with url and headers", async () => {
      const config = JSON.parse(byId(snippets, "json").text);
      const server = config.mcpServers.decks;
      assert.deepEqual(Object.keys(server), ["url", "headers"]);
      assertWorks(world, await useWith(server.url, server.headers));
    });

    await t.step("VS Code: servers with type http, url and headers", async () => {
      const config = JSON.parse(byId(snippets, "vscode").text);
      const server = config.servers.decks;
      assert.equal(server.type, "http");
      assertWorks(world, await useWith(server.url, server.headers));
    });

    await t.step(
      "Claude Desktop: a local command, mcp-remote from npm, which lists the tools and searches",
      async () => {
        const config = JSON.parse(byId(snippets, "claude-desktop").text);
        const server = config.mcpServers.decks;
        assert.equal(server.command, "npx");
        assert.deepEqual(server.args, ["-y", MCP_REMOTE, mcp, "--header", "Authorization:${SERGO_AUTH}"]);
        assert.ok(
          !("type" in server) && !("url" in server),
          "Claude Desktop's file takes commands, not URLs",
        );
        const home = await Deno.makeTempDir({ prefix: "sergo-mcp-remote-" });
        const child = new Deno.Command(await needs(server.command), {
          args: server.args,
          env: { ...server.env, MCP_REMOTE_CONFIG_DIR: home, npm_config_update_notifier: "false" },
          stdin: "piped",
          stdout: "piped",
          stderr: "null",
        }).spawn();
        try {
          assertWorks(world, await overStdio(child));
        } finally {
          try {
            child.kill("SIGTERM");
          } catch {
            // it ended by itself
          }
          await child.status;
          await Deno.remove(home, { recursive: true }).catch(() => {});
        }
        // The bridge never got a challenge: it sent the key.
        const calls = world.running.app.store.readFrom(0, 100_000).filter((e) => e.type === "McpCalled");
        assertAll(calls, (e) => e.data.details.oauth_app === undefined);
      },
    );

    await t.step(
      "connectors (claude.ai, Claude Desktop, ChatGPT): the URL leads to OAuth discovery",
      async () => {
        const url = byId(snippets, "connector").text;
        assert.equal(url, mcp);
        const challenge = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        await challenge.body?.cancel();
        const metadata = /resource_metadata="([^"]+)"/.exec(challenge.headers.get("www-authenticate") ?? "")
          ?.[1];
        assert.ok(metadata);
        assert.equal((await (await fetch(metadata)).json()).resource, url);
      },
    );

    await t.step(
      "seri: servers.yaml with ${env:SERGO_KEY}, the key given apart, never in the file",
      async () => {
        const snippet = byId(snippets, "seri");
        const config = parseYaml(snippet.text);
        const server = config.servers.decks;
        assert.equal(server.url, mcp);
        assert.equal(server.headers.Authorization, "Bearer ${env:SERGO_KEY}");
        assert.ok(!snippet.text.includes(key), "the file itself holds no key, not even in a comment");
        const env = exported(snippet);
        // seri's one expansion: ${env:VAR}.
        const expanded = server.headers.Authorization.replace(
          /\$\{env:([A-Z_]+)\}/g,
          (_: string, v: string) => env[v]!,
        );
        assert.equal(expanded, `Bearer ${key}`);
        assertWorks(world, await useWith(server.url, { Authorization: expanded }));
      },
    );

    await t.step("Windsurf: mcpServers with serverUrl and headers", async () => {
      const server = JSON.parse(byId(snippets, "windsurf").text).mcpServers.decks;
      assert.deepEqual(Object.keys(server), ["serverUrl", "headers"]);
      assertWorks(world, await useWith(server.serverUrl, server.headers));
    });

    await t.step(
      "Codex CLI: config.toml with url and bearer_token_env_var, the key given apart",
      async () => {
        const snippet = byId(snippets, "codex");
        const config = parseToml(snippet.text) as { mcp_servers: Record<string, Record<string, string>> };
        const server = config.mcp_servers.decks!;
        assert.deepEqual(Object.keys(server), ["url", "bearer_token_env_var"]);
        assert.equal(server.url, mcp);
        assert.ok(!snippet.text.includes(key), "Codex takes no key in its file");
        const env = exported(snippet);
        // Codex sends `Authorization: Bearer <the variable's value>`.
        assertWorks(
          world,
          await useWith(server.url, { Authorization: `Bearer ${env[server.bearer_token_env_var!]}` }),
        );
      },
    );

    await t.step("Gemini CLI: mcpServers with httpUrl (Streamable HTTP, not url, which is SSE)", async () => {
      const server = JSON.parse(byId(snippets, "gemini").text).mcpServers.decks;
      assert.deepEqual(Object.keys(server), ["httpUrl", "headers"]);
      assertWorks(world, await useWith(server.httpUrl, server.headers));
    });

    await t.step("Zed: context_servers with url and headers", async () => {
      const server = JSON.parse(byId(snippets, "zed").text).context_servers.decks;
      assert.deepEqual(Object.keys(server), ["url", "headers"]);
      assertWorks(world, await useWith(server.url, server.headers));
    });

    await t.step("Continue: a block file with a streamable-http server and its headers", async () => {
      const block = parseYaml(byId(snippets, "continue").text);
      assert.equal(block.schema, "v1");
      assert.equal(typeof block.version, "string");
      const [server] = block.mcpServers;
      assert.equal(server.type, "streamable-http");
      assertWorks(world, await useWith(server.url, server.requestOptions.headers));
    });

    await t.step("Copilot Studio: the wizard's fields, an API key in the Authorization header", async () => {
      const snippet = byId(snippets, "copilot-studio");
      const fields = Object.fromEntries(
        snippet.text.split("\n").map((
          line,
        ) => [line.slice(0, line.indexOf(": ")), line.slice(line.indexOf(": ") + 2)]),
      );
      assert.equal(fields["Server name"], "decks");
      assert.equal(fields["Authentication"], "API key");
      assert.equal(fields["Type"], "Header");
      assertWorks(
        world,
        await useWith(fields["Server URL"]!, { [fields["Header name"]!]: fields["Connection's key"]! }),
      );
    });

    await t.step(
      "cloud apps (connectors, ChatGPT, Copilot Studio) are told this loopback http address cannot work",
      () => {
        for (const id of ["connector", "chatgpt", "copilot-studio"]) {
          const warning = byId(snippets, id).warning ?? "";
          assert.match(warning, /http and on this machine only/, id);
          assert.match(warning, /--cert/, id);
          assert.match(warning, /SERGO_PUBLIC_URL/, id);
          assert.match(warning, /tunnel/, id);
        }
        assert.match(byId(snippets, "seri").warning ?? "", /https addresses only/);
        for (
          const s of snippets.filter((s) =>
            !["connector", "chatgpt", "copilot-studio", "seri"].includes(s.id)
          )
        ) {
          assert.equal(s.warning, null, `${s.app} connects from this machine: no warning`);
        }
        assert.equal(byId(snippets, "chatgpt").text, `${world.url}/chatgpt/mcp`);
      },
    );

    await t.step("stdio: the command with absolute paths and --data works from another folder", async () => {
      const root = new URL("../../", import.meta.url);
      const withStdio = connectionSnippets("decks", world.url, key, {
        stdio: {
          deno: Deno.execPath(),
          config: new URL("deno.json", root).pathname,
          main: new URL("main.ts", root).pathname,
          data: world.running.services.config.dataDir,
        },
      });
      const server = JSON.parse(byId(withStdio, "stdio").text).mcpServers.decks;
      assert.ok(server.command.startsWith("/"));
      assert.ok(server.args.includes("--data"));
      const elsewhere = await Deno.makeTempDir({ prefix: "sergo-elsewhere-" });
      const child = new Deno.Command(server.command, {
        args: server.args,
        cwd: elsewhere,
        env: { ...server.env, NO_COLOR: "1" },
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      try {
        assertWorks(world, await overStdio(child));
      } finally {
        try {
          child.kill("SIGTERM");
        } catch {
          // it ended by itself
        }
        await child.status;
      }
      const made = [...Deno.readDirSync(elsewhere)];
      await Deno.remove(elsewhere, { recursive: true });
      assert.deepEqual(made, [], "nothing is made in the folder it runs from");
    });

    await t.step("Sagewai: connect_http and connect_sse, valid Python, both URLs working", async () => {
      const text = byId(snippets, "sagewai").text;
      const check = await new Deno.Command(await needs("python3"), {
        args: [
          "-c",
          "import ast, sys; ast.parse('async def f():\\n' + ''.join('    ' + l + '\\n' for l in sys.stdin.read().splitlines()))",
        ],
        stdin: "piped",
        stderr: "piped",
      }).spawn();
      const w = check.stdin.getWriter();
      await w.write(new TextEncoder().encode(text.replace(/^# or: /m, "")));
      await w.close();
      const parsed = await check.output();
      assert.equal(parsed.code, 0, new TextDecoder().decode(parsed.stderr));
      const http = /connect_http\(\s*"([^"]+)",\s*headers=\{"Authorization": "([^"]+)"\}/.exec(text)!;
      const sse = /connect_sse\("([^"]+)", headers=\{"Authorization": "([^"]+)"\}\)/.exec(text)!;
      assertWorks(world, await useWith(http[1]!, { Authorization: http[2]! }));
      assert.equal(sse[1], `${world.url}/sse`);
      assertWorks(world, await useWith(sse[1]!, { Authorization: sse[2]! }, "sse"));
    });

    await t.step("Python: the snippet runs as written with the official SDK", async () => {
      const file = await Deno.makeTempFile({ suffix: ".py" });
      // Records the timeouts of the client the snippet builds (httpx2's own default is 5 s for everything).
      const recorder = [
        "import httpx2 as _httpx2",
        "_Client = _httpx2.AsyncClient",
        "class _Recorded(_Client):",
        "    def __init__(self, *args, **kwargs):",
        "        super().__init__(*args, **kwargs)",
        "        print('timeout', self.timeout.connect, self.timeout.read, flush=True)",
        "_httpx2.AsyncClient = _Recorded",
        "",
      ].join("\n");
      await Deno.writeTextFile(
        file,
        recorder + byId(snippets, "python").text.replace("what to look for", QUERY),
      );
      const run = await new Deno.Command(await needs("python3"), {
        args: [file],
        stdout: "piped",
        stderr: "piped",
      })
        .output();
      await Deno.remove(file);
      assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
      const out = new TextDecoder().decode(run.stdout);
      assert.ok(
        out.startsWith("timeout 30.0 300.0\n['search', 'list_documents', 'read_document', 'view_page']\n"),
        `the SDK's own timeouts (30 s, 300 s to read), not httpx2's 5 s: ${out}`,
      );
      assert.match(out, /markitdown-readme\.md/);
    });

    await t.step("TypeScript: the snippet runs as written with the official SDK", async () => {
      const dir = await Deno.makeTempDir();
      const file = `${dir}/connect.ts`;
      await Deno.writeTextFile(file, byId(snippets, "typescript").text.replace("what to look for", QUERY));
      const run = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-net", "--allow-env", "--allow-read", "--no-lock", "--config", DENO_JSON, file],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      await Deno.remove(dir, { recursive: true });
      assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
      const out = new TextDecoder().decode(run.stdout);
      assert.ok(out.startsWith('[ "search", "list_documents", "read_document", "view_page" ]\n'), out);
      assert.match(out, /markitdown-readme\.md/);
    });
  },
});

Deno.test("docs/snippets.md is written from the console's snippets, word for word", async () => {
  const docs = await Deno.readTextFile(new URL("../../docs/snippets.md", import.meta.url));
  assert.equal(docs, snippetsMarkdown("energy-outlooks", "https://sergo.example.com", EXAMPLE_STDIO));
  for (const snippet of connectionSnippets("energy-outlooks", "https://sergo.example.com", null)) {
    assert.ok(docs.includes(snippet.text), `docs/snippets.md shows the ${snippet.app} snippet`);
    assert.match(docs, new RegExp(`\\| ${snippet.app} \\| .* \\| \\d{4}-\\d{2}-\\d{2} \\|`));
  }
});

Deno.test("every app the issue names has a snippet; on the key's page the key is a placeholder", () => {
  const snippets = connectionSnippets("k", "https://sergo.example.com", null);
  const apps = snippets.map((s) => s.id);
  for (
    const id of [
      "claude",
      "claude-desktop",
      "connector",
      "chatgpt",
      "json",
      "vscode",
      "windsurf",
      "codex",
      "gemini",
      "copilot-studio",
      "continue",
      "zed",
    ]
  ) assert.ok(apps.includes(id), `a snippet for ${id}`);
  for (const s of snippets) {
    const holder = s.secret ? s.secret.text : s.text;
    if (!["connector", "chatgpt"].includes(s.id)) assert.ok(holder.includes(PLACEHOLDER), s.app);
    assert.ok(!s.text.includes("sgk_"), s.app);
  }
  // A public https address: nothing to warn about.
  assertAll(snippets, (s) => s.warning === null);
});

Deno.test("a public http URL gets mcp-remote's --allow-http; loopback and https do not", () => {
  const args = (url: string) =>
    JSON.parse(connectionSnippets("k", url, "v").find((s) => s.id === "claude-desktop")!.text).mcpServers.k
      .args;
  assert.ok(args("http://sergo.internal:8787").includes("--allow-http"));
  assert.ok(!args("http://127.0.0.1:8787").includes("--allow-http"));
  assert.ok(!args("https://sergo.example.com").includes("--allow-http"));
});

Deno.test("with OAuth off there is no connector snippet, and Claude Desktop's hint does not offer one", () => {
  const off = connectionSnippets("k", "https://sergo.example.com", "v", { oauth: false });
  assert.equal(off.find((s) => s.id === "connector"), undefined);
  assert.equal(off.find((s) => s.id === "chatgpt"), undefined);
  assert.ok(!off.find((s) => s.id === "claude-desktop")!.where.includes("connector"));
  assert.equal(off.length, connectionSnippets("k", "https://sergo.example.com", "v").length - 2);
});
