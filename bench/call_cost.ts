/**
 * CPU time per MCP call, step by step: what the audited `list_documents`
 * call and `tools/list` cost in each step of the endpoint (auth, limits and
 * depth checks, rate limit, the tool, the audit append, serialisation), as
 * CPU microseconds of this process (every thread: the log's writer thread
 * and the projection of the audit entries count) per call. CPU time moves
 * much less with the machine's other load than calls per second do, though
 * a busy host's shared caches still inflate it by tens of percent: the load
 * average is reported beside it.
 *
 * Each step runs alone many times over the same data the protocol
 * benchmark serves (two decks, one key), then the whole endpoint runs with
 * 20 calls in flight (no HTTP socket: the request objects are made here, and
 * what making them costs is measured and shown apart). "other" is the whole
 * call less its steps: the endpoint's own glue, promises and garbage.
 *
 * Run alone: `deno run -A bench/call_cost.ts [--quick]`.
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { DatabaseSync, StatementSync } from "node:sqlite";
import { createMcpEndpoint } from "../src/mcp/endpoint.ts";
import { authenticateMcp } from "../src/auth/mcp_auth.ts";
import { ReadCache } from "../src/mcp/read_cache.ts";
import { RateLimiter } from "../src/mcp/rate_limit.ts";
import { mcpSettings } from "../src/mcp/settings.ts";
import { appendAudit, type Caller } from "../src/mcp/audit.ts";
import { callerDefinitions } from "../src/mcp/server.ts";
import { serializeAnswer } from "../src/mcp/json_rpc.ts";
import { type McpCore, TOOLS } from "../src/mcp/tool_call.ts";
import { argumentsProblem, auditArguments, MAX_MESSAGE_DEPTH } from "../src/mcp/limits.ts";
import { nestsDeeperThan } from "../events/json_depth.ts";
import { readBodyText } from "../src/http/read_body.ts";
import { openApp, type SergoApp } from "../src/app.ts";
import { Fixture } from "../test/mcp/_fixture.ts";

/** CPU µs of this process per run of `step` (all threads), over `n` runs with `inFlight` at once. */
async function cpuPerRun(
  n: number,
  step: () => unknown,
  inFlight = 1,
): Promise<number> {
  const runs = async (count: number) => {
    let left = count;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await step();
    }));
  };
  await runs(Math.min(2000, n));
  const before = cpuUsage();
  await runs(n);
  const used = cpuUsage(before);
  return Math.round(((used.user + used.system) / n) * 10) / 10;
}

/** SQLite statements run on this thread (the log's writer thread runs its own): a counter over the methods. */
const statements = { count: 0 };
let counting = false;
function countStatements(): void {
  if (counting) return;
  counting = true;
  for (const method of ["run", "get", "all", "iterate"] as const) {
    const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (
      this: StatementSync,
      ...args: unknown[]
    ) {
      statements.count++;
      return original.apply(this, args);
    };
  }
  const exec = DatabaseSync.prototype.exec;
  DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
    statements.count++;
    return exec.call(this, sql);
  };
}

/** SQLite statements on this thread per run of `step`, over `n` runs with `inFlight` at once. */
async function statementsPerRun(n: number, step: () => unknown, inFlight = 1): Promise<number> {
  countStatements();
  const before = statements.count;
  let left = n;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (left-- > 0) await step();
  }));
  await new Promise((resolve) => setTimeout(resolve, 50)); // the audit entries' projection runs after the answers
  return Math.round(((statements.count - before) / n) * 100) / 100;
}

/** One step's CPU per call, µs. */
export interface StepCost {
  step: string;
  list_documents_us: number | null;
  tools_list_us: number | null;
}

/** Measures the steps and the whole calls; returns the table's rows and the figures. */
export async function benchCallCost(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const n = opts.quick ? 5_000 : 20_000;
  const fixture = await Fixture.open();
  let app: SergoApp | null = null;
  try {
    const person = await fixture.person("Ava Bennett");
    const outlooks = await fixture.folder(person, "Energy outlooks");
    const basic = await fixture.folder(person, "Basic", outlooks);
    await fixture.document(person, basic, "pptx/markitdown-test-deck-chart-table.pptx");
    await fixture.document(person, basic, "pptx/apache-performance-tuning-notes.pptx");
    const { value } = await fixture.agentKey(person, "energy-outlooks", "Energy outlook decks.", {
      folders: [outlooks],
      documents: [],
    });
    await fixture.close();
    app = await openApp(fixture.dir, { writer: "thread" });
    const settings = mcpSettings({ rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 });
    const endpoint = createMcpEndpoint({ db: app.db, store: app.store, settings });
    const headers = {
      Authorization: `Bearer ${value}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const bodies = {
      list_documents: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_documents", arguments: {} },
      }),
      tools_list: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    };
    const request = (body: string) => new Request("http://127.0.0.1/mcp", { method: "POST", headers, body });

    // The request object alone (Deno.serve makes it in a server; the bare echo pays for it too).
    const requestUs = await cpuPerRun(n, () => request(bodies.list_documents));
    const readUs = await cpuPerRun(n, () => readBodyText(request(bodies.list_documents), 1_000_000));
    const core: McpCore = {
      db: app.db,
      store: app.store,
      now: () => new Date(),
      settings,
      cache: new ReadCache(app.db),
    };
    const probe = request(bodies.list_documents);
    const authUs = await cpuPerRun(n, () => {
      core.cache.refresh();
      if (!authenticateMcp(core.cache, probe, new Date()).ok) throw new Error("The key did not work.");
    });
    const auth = authenticateMcp(core.cache, probe, new Date());
    if (!auth.ok) throw new Error("The key did not work.");
    const caller: Caller = { key: auth.key, maskedKey: auth.maskedKey, endUser: null };
    const checks = (text: string) => () => {
      const body = JSON.parse(text);
      if (nestsDeeperThan(body, MAX_MESSAGE_DEPTH)) throw new Error("Too deep.");
      if (body.params?.arguments && argumentsProblem(body.params.arguments) !== null) {
        throw new Error("Refused.");
      }
    };
    const checksList = await cpuPerRun(n, checks(bodies.list_documents));
    const checksTools = await cpuPerRun(n, checks(bodies.tools_list));
    const limiter = new RateLimiter(1_000_000, 1_000_000);
    const rateUs = await cpuPerRun(n, () => limiter.take(auth.key.key_id, Date.now()));
    const tool = TOOLS.get("list_documents")!;
    let outcome = await tool.run({
      db: core.db,
      key: caller.key,
      scope: core.cache.scope(caller.key),
      settings,
      remember: (id, compute) => core.cache.forKey(caller.key, `tool:${id}`, compute),
    }, {});
    const toolUs = await cpuPerRun(n, async () => {
      outcome = await tool.run({
        db: core.db,
        key: caller.key,
        scope: core.cache.scope(caller.key),
        settings,
        remember: (id, compute) => core.cache.forKey(caller.key, `tool:${id}`, compute),
      }, {});
    });
    const definitions = callerDefinitions(core, caller);
    const toolsUs = await cpuPerRun(n, () => callerDefinitions(core, caller).tools);
    const auditUs = await cpuPerRun(
      n,
      () =>
        appendAudit(core.store, caller, {
          tool: "list_documents",
          arguments: auditArguments("list_documents", {}),
          details: outcome.details,
          isError: false,
          durationMs: 0.1,
        }, new Date()),
      20,
    );
    app.settle();
    const serialiseList = await cpuPerRun(
      n,
      () => serializeAnswer("tools/call", { id: 1, result: outcome.result }, definitions),
    );
    const serialiseTools = await cpuPerRun(
      n,
      () => serializeAnswer("tools/list", { id: 1, result: definitions.tools }, definitions),
    );
    const whole = (body: string) => async () => {
      const response = await endpoint(request(body));
      await response.text();
      if (response.status !== 200) throw new Error(`The endpoint answered ${response.status}.`);
    };
    const wholeList = await cpuPerRun(n, whole(bodies.list_documents), 20);
    app.settle();
    const wholeTools = await cpuPerRun(n, whole(bodies.tools_list), 20);
    // Counted after the timings: the counter itself costs a little on every statement.
    const statementsList = await statementsPerRun(2_000, whole(bodies.list_documents), 20);
    const statementsTools = await statementsPerRun(2_000, whole(bodies.tools_list), 20);
    const commits = app.store.transactions;
    await statementsPerRun(2_000, whole(bodies.list_documents), 20);
    const callsPerCommit = Math.round((2_000 / Math.max(1, app.store.transactions - commits)) * 10) / 10;
    const bodyUs = Math.max(0, Math.round((readUs - requestUs) * 10) / 10);
    const r1 = (x: number) => Math.round(x * 10) / 10;
    const steps: StepCost[] = [
      {
        step: "auth (cache check, key checksum, sha256, look-ups)",
        list_documents_us: authUs,
        tools_list_us: authUs,
      },
      { step: "body read (size and time limits)", list_documents_us: bodyUs, tools_list_us: bodyUs },
      {
        step: "JSON parse, depth and argument checks",
        list_documents_us: checksList,
        tools_list_us: checksTools,
      },
      { step: "rate limit (this process's bucket)", list_documents_us: rateUs, tools_list_us: rateUs },
      {
        step: "the tool (list_documents; tools/list: the key's definitions)",
        list_documents_us: toolUs,
        tools_list_us: toolsUs,
      },
      {
        step: "audit append (group commit, writer thread, projection)",
        list_documents_us: auditUs,
        tools_list_us: 0,
      },
      { step: "serialisation", list_documents_us: serialiseList, tools_list_us: serialiseTools },
    ];
    const sum = (key: "list_documents_us" | "tools_list_us") =>
      steps.reduce((total, s) => total + (s[key] ?? 0), 0);
    steps.push({
      step: "other (endpoint glue, SDK dispatch, promises, garbage)",
      list_documents_us: r1(wholeList - requestUs - sum("list_documents_us")),
      tools_list_us: r1(wholeTools - requestUs - sum("tools_list_us")),
    });
    steps.push({
      step: "whole call through the endpoint (request object excluded)",
      list_documents_us: r1(wholeList - requestUs),
      tools_list_us: r1(wholeTools - requestUs),
    });
    return {
      calls_per_step: n,
      request_object_us: requestUs,
      sqlite_statements_per_call: {
        list_documents: statementsList,
        tools_list: statementsTools,
        note:
          "on the request's thread (projections, key look-ups, the audit view); the log's writer thread " +
          "runs its group commit (BEGIN, the rows, COMMIT) once per batch",
      },
      audited_calls_per_group_commit: callsPerCommit,
      load_average: Deno.loadavg(),
      steps,
      rows: [
        {
          figure: "CPU µs per audited list_documents call (in process, no socket)",
          sergo: `${r1(wholeList - requestUs)} µs`,
          baseline: `request object ${requestUs} µs`,
          ratio: null,
          budget: "reported",
          pass: null,
        },
        {
          figure: "CPU µs per tools/list call (in process, no socket)",
          sergo: `${r1(wholeTools - requestUs)} µs`,
          baseline: `request object ${requestUs} µs`,
          ratio: null,
          budget: "reported",
          pass: null,
        },
      ],
    };
  } finally {
    if (app) await app.close();
    else await fixture.close().catch(() => {});
    await Deno.remove(fixture.dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const result = await benchCallCost({ quick: Deno.args.includes("--quick") });
  for (const s of result.steps as StepCost[]) {
    console.log(
      `${s.step.padEnd(64)} ${String(s.list_documents_us).padStart(8)} ${
        String(s.tools_list_us).padStart(8)
      }`,
    );
  }
  console.log(`request object ${result.request_object_us} µs; load ${Deno.loadavg().join(" ")}`);
  console.log(JSON.stringify({
    sqlite_statements_per_call: result.sqlite_statements_per_call,
    audited_calls_per_group_commit: result.audited_calls_per_group_commit,
  }));
}
