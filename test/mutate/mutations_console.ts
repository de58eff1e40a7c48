/**
 * The planted bugs of the console's first-run work (branch h-console): the
 * snippets, mcp-stdio's data directory, key-name rules and excerpts.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const SNIPPETS = "test/console/snippets_test.ts";
const CLI = "test/e2e/cli_commands_test.ts";
const KEY_NAMES = "test/domain/key_name_rules_test.ts";
const EXCERPT = "test/console/excerpt_test.ts";
const FIRST_RUN = "test/e2e/console_first_run_test.ts";

/** The console's mutations. */
export const MUTATIONS_CONSOLE: Mutation[] = [
  {
    name: "the Python snippet's client falls back to httpx2's 5 s timeout",
    file: "src/console/assets/snippets.js",
    from: '"    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:",',
    to: '"    async with httpx2.AsyncClient(headers=headers) as http:",',
    tests: [SNIPPETS],
  },
  {
    name: "the cloud-app warning is not given for loopback addresses",
    file: "src/console/assets/snippets.js",
    from: "if (!http && !loopback) return null;",
    to: "if (!http || loopback) return null;",
    tests: [SNIPPETS],
  },
  {
    name: "seri's snippet writes the key into servers.yaml",
    file: "src/console/assets/snippets.js",
    from: 'Authorization: "Bearer \\${env:${KEY_VARIABLE}}"`,',
    to: 'Authorization: "Bearer \\${env:${KEY_VARIABLE}}"\\n# export ${KEY_VARIABLE}=${key}`,',
    tests: [SNIPPETS],
  },
  {
    name: "mcp-stdio opens a data directory that has no event log",
    file: "src/cli/extra_commands.ts",
    from: "if (!context.databaseUrl && !hasEventLog(dataDir)) {",
    to: "if (!context.databaseUrl && !hasEventLog(dataDir) && false) {",
    tests: [CLI],
  },
  {
    name: "a key name hears only its first broken rule",
    file: "src/domain/rules.ts",
    from: 'is not allowed: ${keyNameProblems(name).join("; ")}',
    to: 'is not allowed: ${keyNameProblems(name).slice(0, 1).join("; ")}',
    tests: [KEY_NAMES],
  },
  {
    name: "symbol-only lines stay in the shown excerpt",
    file: "src/console/excerpt.ts",
    from: "const kept = lines.filter((line) => /[\\p{L}\\p{N}]/u.test(line));",
    to: "const kept = lines;",
    tests: [EXCERPT],
  },
  {
    name: "a long excerpt is shown whole",
    file: "src/console/excerpt.ts",
    from: "if (text.length > SHOWN_CHARACTERS) {",
    to: "if (text.length > SHOWN_CHARACTERS * 100) {",
    tests: [EXCERPT],
  },
  {
    name: "the audit shows system work by default",
    file: "src/console/audit_data.ts",
    from: 'withoutSystem: query.system !== "1" && query.action === "",',
    to: "withoutSystem: false,",
    tests: [FIRST_RUN],
  },
];
