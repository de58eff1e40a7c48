/**
 * The soak: `serve` started as `deno task serve` starts it, then minutes of
 * mixed traffic — audited MCP calls (search, list_documents, read_document),
 * uploads (and deletions, so the library keeps its size), key changes (a
 * description, a roll, a key made and deleted) — with hostile requests at 1%
 * of the calls (nested 3,000 and 3,600 deep, params not an object with 500 KB
 * of filler, a 990 KB query, odd ids, a request carrying a result, a body
 * past the size limit).
 *
 * It reports the server's RSS at the start, after the first minute and at the
 * end, the p99 of the audited calls minute by minute, and the number of
 * `McpCalled` events in the log beside the number of calls answered with a
 * result. Budgets: memory flat (end ≤ 1.2 × the first minute's), p99 not
 * growing (the last third's median p99 ≤ 1.5 × the first third's: this
 * machine is shared), one audit event per answered call, no hostile request
 * answered 5xx. The first minute is the baseline of the same run.
 *
 * Length: 10 minutes, 1 with `--quick`; `SOAK_MINUTES` sets it.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { ratioRow, round, type SummaryRow } from "./_table.ts";
import { memoryOf, startAndWaitHealthy, stop, taskEnv, taskFlags } from "./startup.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** MCP calls a second the load aims at, across all its callers. */
const TARGET_CALLS_PER_S = 60;
const CALLERS = 6;

async function cli(dataDir: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, ...args, "--data", dataDir],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`sergo ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return stdout.trim().split("\n").pop()!;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 0.5);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const WORDS = [
  "heat",
  "pump",
  "efficiency",
  "winter",
  "solar",
  "grid",
  "storage",
  "battery",
  "tariff",
  "demand",
  "outlook",
  "capacity",
  "wind",
  "hydrogen",
  "retrofit",
  "insulation",
];

function words(n: number, seed: number): string {
  let out = "";
  for (let i = 0; i < n; i++) out += `${WORDS[(seed * 7 + i * 13) % WORDS.length]} `;
  return out.trim();
}

/** The hostile requests, each with what it must not be answered with (5xx). */
function hostileBodies(): Array<{ name: string; body: string }> {
  const deep = (levels: number, open: string, close: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","x":${
      open.repeat(levels)
    }1${close.repeat(levels)}}}}`;
  return [
    { name: "objects 3,000 deep", body: deep(3_000, '{"a":', "}") },
    { name: "arrays 3,600 deep", body: deep(3_600, "[", "]") },
    {
      name: "params 5 with 500 KB",
      body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":5,"filler":"${"x".repeat(500_000)}"}`,
    },
    {
      name: "990 KB query",
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "search", arguments: { query: "quokka ".repeat(141_429).slice(0, 990_000) } },
      }),
    },
    { name: "id {}", body: '{"jsonrpc":"2.0","id":{},"method":"ping"}' },
    { name: "request with a result", body: '{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}' },
    { name: "tools/call name 5", body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}' },
    { name: "2 MB body", body: `{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"y".repeat(2_000_000)}"}` },
  ];
}

/** Runs the soak; see the module comment. */
export async function benchSoak(opts: { quick: boolean }): Promise<Record<string, unknown>> {
  const minutes = Number(Deno.env.get("SOAK_MINUTES") ?? (opts.quick ? 1 : 10));
  if (!(minutes > 0)) {
    throw new Error(`SOAK_MINUTES must be a positive number, got "${Deno.env.get("SOAK_MINUTES")}"`);
  }
  const dir = await Deno.makeTempDir({ prefix: "sergo-soak-" });
  try {
    await cli(dir, ["person", "add", "--name", "Ava Bennett", "--email", "ava@example.com"]);
    await cli(dir, ["folder", "add", "--person", "ava@example.com", "Notes"]);
    const mcpKey = await cli(dir, [
      "key",
      "add",
      "--person",
      "ava@example.com",
      "--name",
      "notes",
      "--read",
      "Notes",
    ]);
    await cli(dir, ["key", "add", "--person", "ava@example.com", "--name", "spare", "--read", "Notes"]);
    const personal = await cli(dir, ["personal-key", "add", "--person", "ava@example.com"]);

    const env = { ...(await taskEnv("serve")), SERGO_RATE_LIMIT: "1000000", SERGO_RATE_BURST: "1000000" };
    const server = await startAndWaitHealthy(
      ["run", ...(await taskFlags("serve")), "main.ts", "serve", "--data", dir, "--port", "0"],
      env,
    );
    const url = server.url;
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${personal}`, ...(init.headers ?? {}) },
      });
    const mcp = (body: string) =>
      fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${mcpKey}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body,
      });

    // A library to read: twenty notes, processed before the clock starts.
    const documents: string[] = [];
    let uploads = 0;
    const upload = async () => {
      const n = uploads++;
      const text = Array.from({ length: 40 }, (_, i) => `${words(12, n + i)}.`).join("\n");
      const response = await api(`/api/documents?name=soak-${n}.txt&folder=Notes`, {
        method: "POST",
        body: text,
      });
      const body = await response.json();
      if (response.status !== 201) {
        throw new Error(`Upload answered ${response.status}: ${JSON.stringify(body)}`);
      }
      documents.push(body.documents[0].id);
    };
    for (let i = 0; i < 20; i++) await upload();
    for (;;) {
      const list = await (await api("/api/documents?limit=100")).json();
      if (list.items.every((d: { status: string }) => d.status !== "pending" && d.status !== "processing")) {
        break;
      }
      await sleep(200);
    }

    const keys = (await (await api("/api/keys")).json()).keys as Array<{ id: string; name: string }>;
    const notesKey = keys.find((k) => k.name === "notes")!.id;
    const spareKey = keys.find((k) => k.name === "spare")!.id;

    const pid = server.child.pid;
    const started = performance.now();
    const end = started + minutes * 60_000;
    const minuteOf = () => Math.floor((performance.now() - started) / 60_000);
    const latencies: number[][] = Array.from({ length: Math.ceil(minutes) }, () => []);
    const rss: Array<{ s: number; mb: number }> = [];
    const rssStart = (await memoryOf(pid))?.rss_mb ?? NaN;
    let answered = 0;
    let calls = 0;
    let failedCalls = 0;
    let hostileSent = 0;
    let hostile5xx = 0;
    const hostileStatuses: Record<string, number[]> = {};
    let keyChanges = 0;
    let deletions = 0;
    const errors: string[] = [];
    const hostile = hostileBodies();

    const callOnce = async (i: number) => {
      calls++;
      if (calls % 100 === 0) {
        const h = hostile[hostileSent++ % hostile.length]!;
        const response = await mcp(h.body);
        const text = await response.text();
        (hostileStatuses[h.name] ??= []).push(response.status);
        if (response.status >= 500) hostile5xx++;
        if (response.status === 200 && text.includes('"result"')) answered++;
        return;
      }
      const kind = i % 10;
      const id = documents[i % documents.length]!;
      const params = kind < 6
        ? { name: "search", arguments: { query: words(3, i), limit: 5 } }
        : kind < 8
        ? { name: "list_documents", arguments: { limit: 10 } }
        : { name: "read_document", arguments: { document_id: id, page: 1 } };
      const t = performance.now();
      try {
        const response = await mcp(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params }));
        const text = await response.text();
        const ms = performance.now() - t;
        const minute = minuteOf();
        if (minute < latencies.length) latencies[minute]!.push(ms);
        if (response.status === 200 && text.includes('"result"')) answered++;
        else {
          failedCalls++;
          if (errors.length < 5) errors.push(`${response.status} ${text.slice(0, 200)}`);
        }
      } catch (error) {
        failedCalls++;
        if (errors.length < 5) errors.push(String(error));
      }
    };

    const caller = async (c: number) => {
      const interval = 1000 * CALLERS / TARGET_CALLS_PER_S;
      for (let i = c; performance.now() < end; i += CALLERS) {
        const t = performance.now();
        await callOnce(i);
        await sleep(Math.max(0, interval - (performance.now() - t)));
      }
    };
    const uploader = async () => {
      while (performance.now() < end) {
        await upload().catch((error) => errors.length < 5 && errors.push(String(error)));
        // Keep the library at its size: the oldest note goes as a new one comes.
        const oldest = documents.shift()!;
        const response = await api(`/api/documents/${oldest}`, { method: "DELETE" });
        await response.body?.cancel();
        if (response.status === 204) deletions++;
        await sleep(2_000);
      }
    };
    const keyChanger = async () => {
      for (let i = 0; performance.now() < end; i++) {
        const json = { "content-type": "application/json" };
        const changes = [
          api(`/api/keys/${notesKey}`, {
            method: "PATCH",
            headers: json,
            body: JSON.stringify({ description: `Ava's notes, change ${i}.` }),
          }),
        ];
        if (i % 5 === 0) {
          changes.push(
            api(`/api/keys/${spareKey}/roll`, { method: "POST", headers: json, body: '{"grace":"now"}' }),
          );
          changes.push((async () => {
            const made = await api("/api/keys", {
              method: "POST",
              headers: json,
              body: JSON.stringify({
                name: `temp-${i}`,
                description: "",
                can_read: { folders: [], documents: [] },
              }),
            });
            const { id } = await made.json();
            return await api(`/api/keys/${id}`, { method: "DELETE" });
          })());
        }
        for (const response of await Promise.all(changes)) {
          await response.body?.cancel();
          if (response.ok) keyChanges++;
          else if (errors.length < 5) errors.push(`key change answered ${response.status}`);
        }
        await sleep(1_000);
      }
    };
    const sampler = async () => {
      while (performance.now() < end) {
        await sleep(5_000);
        const memory = await memoryOf(pid);
        if (memory) rss.push({ s: round((performance.now() - started) / 1000, 0), mb: memory.rss_mb });
      }
    };
    await Promise.all([
      ...Array.from({ length: CALLERS }, (_, c) => caller(c)),
      uploader(),
      keyChanger(),
      sampler(),
    ]);
    const rssEnd = (await memoryOf(pid))?.rss_mb ?? NaN;
    const health = await (await fetch(`${url}/healthz`)).json();
    const stopStarted = performance.now();
    await stop(server.child);
    const stopMs = performance.now() - stopStarted;

    const log = new DatabaseSync(join(dir, "events.db"), { readOnly: true });
    const audited =
      (log.prepare("SELECT count(*) AS n FROM events WHERE type = 'McpCalled'").get() as { n: number })
        .n;
    log.close();

    const firstMinute = rss.filter((sample) => sample.s <= 60).map((sample) => sample.mb);
    const rssFirstMinute = firstMinute.length > 0 ? Math.max(...firstMinute) : rssStart;
    const p99 = latencies.map((list) => round(percentile([...list].sort((a, b) => a - b), 0.99), 1));
    const third = Math.max(1, Math.floor(p99.length / 3));
    const p99First = median(p99.slice(0, third));
    const p99Last = median(p99.slice(-third));
    const memoryRatio = round(rssEnd / rssFirstMinute, 2);
    const p99Ratio = round(p99Last / p99First, 2);

    const rows: SummaryRow[] = [
      ratioRow({
        figure: `soak ${minutes} min: server RSS at the end ÷ its first minute's peak`,
        sergo: `${rssEnd} MB at the end (start ${rssStart} MB)`,
        baseline: `${rssFirstMinute} MB in minute 1`,
        ratio: memoryRatio,
        budget: { op: "<=", value: 1.2 },
      }),
      ratioRow({
        figure: "soak: p99 of audited calls, last third ÷ first third (median of the minutes' p99)",
        sergo: `${p99Last} ms (per minute: ${p99.join(", ")})`,
        baseline: `${p99First} ms`,
        ratio: p99Ratio,
        budget: { op: "<=", value: 1.5 },
      }),
      {
        ...ratioRow({
          figure: "soak: McpCalled events ÷ calls answered with a result",
          sergo: `${audited} events`,
          baseline: `${answered} answered of ${calls} sent (${failedCalls} failed)`,
          ratio: answered > 0 ? round(audited / answered, 4) : null,
          budget: { op: ">=", value: 1 },
        }),
        pass: audited === answered && failedCalls === 0,
      },
      {
        ...ratioRow({
          figure: "soak: hostile requests (1%) answered 5xx",
          sergo: `${hostile5xx} of ${hostileSent}`,
          baseline: "—",
          ratio: hostile5xx,
          budget: { op: "<=", value: 0 },
        }),
        pass: hostile5xx === 0 && hostileSent > 0,
      },
    ];
    return {
      rows,
      minutes,
      target_calls_per_s: TARGET_CALLS_PER_S,
      calls,
      answered,
      audited,
      failed_calls: failedCalls,
      errors,
      hostile_sent: hostileSent,
      hostile_5xx: hostile5xx,
      hostile_statuses: Object.fromEntries(
        Object.entries(hostileStatuses).map(([name, statuses]) => [name, [...new Set(statuses)]]),
      ),
      uploads,
      deletions,
      key_changes: keyChanges,
      rss_mb: { start: rssStart, first_minute_peak: rssFirstMinute, end: rssEnd, samples: rss },
      memory_ratio: memoryRatio,
      p99_ms_per_minute: p99,
      calls_per_minute: latencies.map((list) => list.length),
      p99_ratio: p99Ratio,
      healthz_at_end: { ok: health.ok, writer: health.writer },
      stop_ms: round(stopMs, 0),
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const result = await benchSoak({ quick: Deno.args.includes("--quick") });
  console.log(JSON.stringify(result, null, 2));
}
