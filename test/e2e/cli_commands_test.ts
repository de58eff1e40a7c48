/**
 * Every CLI command the README lists, run through `main.ts` as a person runs
 * it, on one data directory: what each prints, its exit code, and what it
 * changed (read back with other commands, an MCP client over `mcp-stdio`, or
 * the projections). Commands that `serve` needs (keys, tokens) are also used
 * against a running server in `settings_test.ts`.
 */
import assert from "node:assert/strict";
import { openApp } from "../../src/app.ts";
import { verifyPassword } from "../../src/auth/passwords.ts";
import { getPersonByEmail, isAdministrator } from "../../projections/catalogue.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const DECK = `${CORPUS_DIR}/pptx/markitdown-test-deck-chart-table.pptx`;
const NOTES = `${CORPUS_DIR}/text/markitdown-readme.md`;

/** Runs a command and asserts it succeeded; returns its stdout lines. */
async function ok(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  const out = await runCli(args, options);
  assert.equal(out.code, 0, `${args.join(" ")}: ${out.stderr}`);
  return out.stdout.trimEnd().split("\n");
}

/** Runs a command that must fail with exit code 2 and one line on stderr; returns that line. */
async function refused(
  args: string[],
  options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {},
) {
  const out = await runCli(args, options);
  const lines = out.stderr.trim().split("\n");
  assert.equal(out.code, 2, `${args.join(" ")}: ${out.stdout}${out.stderr}`);
  assert.equal(lines.length, 1, out.stderr);
  return lines[0]!;
}

Deno.test({
  name:
    "the CLI through main.ts: upload, documents, process, pdf-copy, password, keys, tokens, mcp-stdio, rebuild",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using dir = await tempDir("sergo-cli-");
    const data = ["--data", dir.path];
    let deck = "";
    let notes = "";

    await t.step("upload waits for processing and prints each id, status and pages", async () => {
      await ok(["person", "add", ...data, "--name", "Ava Bennett", "--email", "ava@example.com"]);
      const lines = await ok([
        "upload",
        ...data,
        "--person",
        "ava@example.com",
        "--folder",
        "Decks/Basic",
        DECK,
        NOTES,
      ]);
      assert.equal(lines.length, 2, lines.join("\n"));
      const [deckLine, notesLine] = lines.map((line) => line.split("\t"));
      assert.deepEqual(deckLine!.slice(1), [
        "searchable",
        "6 pages",
        "markitdown-test-deck-chart-table.pptx",
      ]);
      assert.deepEqual(notesLine!.slice(1), ["searchable", "5 pages (estimated)", "markitdown-readme.md"]);
      deck = deckLine![0]!;
      notes = notesLine![0]!;
      assert.match(deck, /^[A-Za-z0-9]{8}$/);
      assert.match(
        await refused(["upload", ...data, "--person", "nobody@example.com", DECK]),
        /nobody@example\.com/,
      );
    });

    await t.step("document list is newest first; document status names the pages to view", async () => {
      assert.deepEqual(await ok(["document", "list", ...data, "--person", "ava@example.com"]), [
        `${notes}\tsearchable\t5\tmarkitdown-readme.md`,
        `${deck}\tsearchable\t6\tmarkitdown-test-deck-chart-table.pptx`,
      ]);
      const status = await ok(["document", "status", ...data, deck]);
      assert.deepEqual(status.slice(0, 6), [
        `id: ${deck}`,
        "name: markitdown-test-deck-chart-table.pptx",
        "type: pptx",
        "status: searchable",
        "pages: 6",
        "pages to view: 2, 4, 6",
      ]);
      assert.equal(
        await refused(["document", "status", ...data, "nope1234"]),
        'No document with id "nope1234"',
      );
    });

    await t.step(
      "process --preset none takes a document out of search; --preset basic brings it back",
      async () => {
        const none = await ok(["process", ...data, deck, "--preset", "none"]);
        assert.ok(none.includes("status: not_indexed"), none.join("\n"));
        assert.ok(
          none.includes("reason: Not indexed: the preset none keeps a document without text to search"),
          none.join("\n"),
        );
        const basic = await ok(["process", ...data, deck, "--preset", "basic"]);
        assert.ok(basic.includes("status: searchable"), basic.join("\n"));
        assert.equal(
          await refused(["process", ...data, deck, "--preset", "fancy"]),
          'Preset "fancy" is not one of: basic, standard, none',
        );
      },
    );

    await t.step("pdf-copy makes the deck's copy with one page per slide", async () => {
      await needs("soffice");
      assert.deepEqual(await ok(["pdf-copy", ...data, deck]), ["PDF copy made: 6 pages"]);
      assert.ok((await ok(["document", "status", ...data, deck])).includes("pdf copy: made"));
    });

    await t.step("person password stores a scrypt hash that verifies only the password given", async () => {
      const password = "correct horse battery staple";
      assert.deepEqual(
        await ok(["person", "password", ...data, "--email", "ava@example.com"], { stdin: `${password}\n` }),
        [
          "Password set for ava@example.com.",
        ],
      );
      const app = await openApp(dir.path);
      try {
        const stored = getPersonByEmail(app.db, "ava@example.com")!.password_hash!;
        assert.match(stored, /^scrypt/);
        assert.ok(!stored.includes(password));
        assert.equal(await verifyPassword(password, stored), true);
        assert.equal(await verifyPassword("correct horse battery", stored), false);
      } finally {
        await app.close();
      }
    });

    await t.step(
      "person admin makes a person an administrator, once; an unknown email is one line",
      async () => {
        const isAdmin = async () => {
          const app = await openApp(dir.path);
          try {
            return isAdministrator(app.db, getPersonByEmail(app.db, "ava@example.com")!.person_id);
          } finally {
            await app.close();
          }
        };
        assert.equal(await isAdmin(), false);
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(await ok(["person", "admin", ...data, "--email", "ava@example.com"]), [
            "Ava Bennett <ava@example.com> is an administrator.",
          ]);
        }
        assert.equal(await isAdmin(), true);
        assert.equal(
          await refused(["person", "admin", ...data, "--email", "nobody@example.com"]),
          'No person with email "nobody@example.com"',
        );
      },
    );

    await t.step("personal-key add and login-token print a value alone on the last line", async () => {
      const personal = await ok(["personal-key", "add", ...data, "--person", "ava@example.com"]);
      assert.match(personal.at(-1)!, /^sgk_p_[A-Za-z0-9]+$/);
      const login = await ok(["login-token", ...data, "--person", "ava@example.com"]);
      assert.match(login.at(-1)!, /^sgl_[A-Za-z0-9]+$/);
      const until = Date.parse(/valid until (\S+):$/.exec(login[0]!)![1]!);
      assert.ok(Math.abs(until - Date.now() - 7 * 86_400_000) < 60_000, login[0]!);
    });

    await t.step("mcp-stdio serves the key's tools over stdio, and audits the call", async () => {
      const key = (await ok([
        "key",
        "add",
        ...data,
        "--person",
        "ava@example.com",
        "--name",
        "decks",
        "--description",
        "Decks",
        "--read",
        "Decks",
      ])).at(-1)!;
      const lines = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "search", arguments: { query: "MarkItDown converts files to Markdown" } },
        },
      ].map((message) => JSON.stringify(message)).join("\n") + "\n";
      const out = await runCli(["mcp-stdio", ...data, "--key-env", "SERGO_KEY"], {
        stdin: lines,
        env: { SERGO_KEY: key },
      });
      assert.equal(out.code, 0, out.stderr);
      const answers = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(answers.map((answer) => answer.id), [1, 2]);
      assert.equal(answers[0].result.serverInfo.name, "decks");
      const groups = JSON.parse(answers[1].result.content[0].text) as Array<{ document_id: string }>;
      assert.ok(groups.some((group) => group.document_id === notes), answers[1].result.content[0].text);
      const audit = await ok([
        "audit",
        "export",
        ...data,
        "--person",
        "ava@example.com",
        "--format",
        "jsonl",
      ]);
      assert.ok(audit.some((line) => line.includes('"mcp search"')), audit.join("\n"));
      assert.match(
        await refused(["mcp-stdio", ...data, "--key-env", "SERGO_KEY"], { env: {} }),
        /SERGO_KEY/,
      );
      assert.match(out.stderr, new RegExp(`serving from the data directory "${dir.path}"`));
    });

    await t.step(
      "mcp-stdio from another folder names the data directory it looked in, and makes none",
      async () => {
        await using elsewhere = await tempDir("sergo-elsewhere-");
        const key = "sgk_s_" + "x".repeat(40);
        const line = await refused(["mcp-stdio", "--key-env", "SERGO_KEY"], {
          env: { SERGO_KEY: key },
          cwd: elsewhere.path,
          stdin: "",
        });
        assert.equal(
          line,
          `No Sergo data in "${elsewhere.path}/data": mcp-stdio serves an existing data directory, so give --data with the absolute path of the one serve uses`,
        );
        assert.deepEqual([...Deno.readDirSync(elsewhere.path)], [], "no ./data was made");
        const unknown = await runCli(["mcp-stdio", ...data, "--key-env", "SERGO_KEY"], {
          env: { SERGO_KEY: key },
          cwd: elsewhere.path,
          stdin: "",
        });
        assert.equal(unknown.code, 2, unknown.stderr);
        const [opened, why, ...more] = unknown.stderr.trim().split("\n");
        assert.equal(opened, `sergo mcp-stdio: serving from the data directory "${dir.path}".`);
        assert.ok(why!.startsWith("The key does not work: "), why!);
        assert.ok(why!.endsWith(`(read from the data directory "${dir.path}")`), why!);
        assert.deepEqual(more, []);
      },
    );

    await t.step(
      "projections rebuild deletes the projections; the next command rebuilds the same digest",
      async () => {
        const before = await ok(["projections", "digest", ...data]);
        await ok(["projections", "rebuild", ...data]);
        await assert.rejects(Deno.stat(`${dir.path}/projections.db`), Deno.errors.NotFound);
        assert.deepEqual(await ok(["projections", "digest", ...data]), before);
      },
    );
  },
});

Deno.test("sergo without a command prints the commands and exits 2; --help exits 0", async () => {
  const bare = await runCli([]);
  assert.equal(bare.code, 2);
  assert.match(bare.stdout, /^Usage: sergo COMMAND/);
  for (const command of ["upload", "document list", "process", "pdf-copy", "mcp-stdio", "login-token"]) {
    assert.ok(bare.stdout.includes(`\n  ${command} `), `${command} is listed`);
  }
  const help = await runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.equal(help.stdout, bare.stdout);
});
