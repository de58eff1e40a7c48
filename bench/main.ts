/**
 * `deno task bench [--quick] [--compare] [--only NAME]…`: runs every benchmark module,
 * each beside its baseline in the same run, writes `bench/results/latest.json`
 * (with the machine's facts) and prints one summary table against the budget
 * of issue 9. A module that is missing or fails is reported as a failed row
 * and the others still run.
 *
 * @module
 */
import { failedRow, formatTable, ratioRow, round, type SummaryRow } from "./_table.ts";
import { baselineOf, compareRows, formatComparison, readBaseline } from "./_compare.ts";

/** A benchmark module: its file and the function it exports. */
interface BenchModule {
  name: string;
  file: string;
  fn: string;
  /** Turns the module's result into summary rows (when it has no `rows` of its own). */
  rows(result: Record<string, unknown>, quick: boolean): SummaryRow[];
}

type Figures = Record<string, unknown>;

const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;
const obj = (
  value: unknown,
): Figures => (value !== null && typeof value === "object" ? value as Figures : {});
const show = (value: unknown, unit = ""): string => (num(value) === null ? "—" : `${value}${unit}`);

/**
 * The search index's bytes per page at 100,000 of the bench's pages before issue 15's analysis (porter
 * FTS5 over folded text; measured on 2026-12-01 with `bench/search.ts --sizes=100000` at commit fe083ab).
 */
const INDEX_BYTES_PER_PAGE_BEFORE = 4718;

/** The modules, in the order they run (start-up uses the data the replay built). */
export const MODULES: readonly BenchModule[] = [
  {
    name: "protocol",
    file: "./protocol.ts",
    fn: "benchProtocol",
    rows: (r) =>
      (
        [
          ["tools_list", "tools/list calls/s ÷ bare Deno.serve JSON-RPC", 0.5],
          ["list_documents", "list_documents (audited) calls/s ÷ bare", 0.3],
        ] as const
      ).map(([key, figure, budget]) => {
        const part = obj(r[key]);
        const sergo = obj(part.sergo);
        const bare = obj(part.bare);
        const missing = key === "list_documents" && part.one_event_per_answered_call === false;
        const row = ratioRow({
          figure,
          sergo: `${show(sergo.calls_per_s, "/s")} (p50 ${show(sergo.p50_ms)} ms, p99 ${
            show(sergo.p99_ms)
          } ms)`,
          baseline: `${show(bare.calls_per_s, "/s")} (p50 ${show(bare.p50_ms)} ms, p99 ${
            show(bare.p99_ms)
          } ms)`,
          ratio: num(part.ratio),
          budget: { op: ">=", value: budget },
          note: missing
            ? `audit events ${part.audit_events} ≠ answered calls ${part.answered_calls}`
            : undefined,
        });
        return missing ? { ...row, pass: false } : row;
      }).concat((() => {
        // Beside the echo made durable by a group commit on the same disk: what the disk alone allows.
        const part = obj(r.list_documents);
        const sergo = obj(part.sergo);
        const durable = obj(part.durable_bare);
        if (Object.keys(durable).length === 0) return [];
        return [{
          figure: "  list_documents (audited) ÷ the bare echo made durable (group commit, same disk)",
          sergo: `${show(sergo.calls_per_s, "/s")}`,
          baseline: `${show(durable.calls_per_s, "/s")} (p50 ${show(durable.p50_ms)} ms, ${
            show(durable.requests_per_commit)
          } a commit)`,
          ratio: num(part.ratio_to_durable),
          budget: "reported",
          pass: null,
        }];
      })()),
  },
  // CPU µs per call, step by step (rows of its own; reported, no budget: CPU time is what load moves least).
  { name: "call_cost", file: "./call_cost.ts", fn: "benchCallCost", rows: () => [] },
  {
    name: "search",
    file: "./search.ts",
    fn: "benchSearch",
    rows: (r) => {
      const rows: SummaryRow[] = [];
      for (const [size, value] of Object.entries(obj(r.speed))) {
        const part = obj(value);
        const pages = Number(size);
        const budget = pages >= 1_000_000 ? 0.1 : pages >= 100_000 ? 0.2 : null;
        if (pages === 100_000 && num(part.sergo_bytes_per_page) !== null) {
          rows.push(ratioRow({
            figure: "search index bytes/page at 100,000 pages ÷ before issue 15's analysis (same pages)",
            sergo: `${show(part.sergo_bytes_per_page, " B")} (plain FTS5 ${
              show(part.plain_bytes_per_page, " B")
            })`,
            baseline: `${INDEX_BYTES_PER_PAGE_BEFORE} B`,
            ratio: round(num(part.sergo_bytes_per_page)! / INDEX_BYTES_PER_PAGE_BEFORE, 3),
            budget: { op: "<=", value: 1.5 },
          }));
        }
        rows.push(ratioRow({
          figure: `search p99 (dictionaries on) at ${
            pages.toLocaleString("en")
          } pages ÷ plain FTS5 bm25 OR p99`,
          sergo: `p50 ${show(obj(part.sergo_ms).p50)} ms, p99 ${show(obj(part.sergo_ms).p99)} ms`,
          baseline: `p50 ${show(obj(part.plain_ms).p50)} ms, p99 ${show(obj(part.plain_ms).p99)} ms`,
          ratio: num(obj(part.ratio).p99),
          budget: budget === null ? null : { op: "<=", value: budget },
          note: num(obj(part.load_average).start) === null
            ? undefined
            : `interleaved query by query; load average ${obj(part.load_average).start} at start, ${
              obj(part.load_average).end
            } at end`,
        }));
        const without = obj(part.sergo_without_dictionaries_ms);
        if (Object.keys(without).length > 0) {
          rows.push({
            figure: `  search without the dictionaries at ${pages.toLocaleString("en")} pages`,
            sergo: `p50 ${show(without.p50)} ms, p99 ${show(without.p99)} ms`,
            baseline: `p50 ${show(obj(part.sergo_ms).p50)} ms, p99 ${show(obj(part.sergo_ms).p99)} ms (with)`,
            ratio: null,
            budget: "reported",
            pass: null,
          });
        }
      }
      const quality = obj(r.quality);
      const sergo = obj(quality.sergo);
      const plain = obj(quality.plain_bm25_or);
      const qualityRow = (figure: string, s: Figures, p: Figures): SummaryRow => {
        const sr = num(s.recall_at_10), sm = num(s.mrr);
        const pr = num(p.recall_at_10), pm = num(p.mrr);
        return {
          figure,
          sergo: `${show(sr)}, ${show(sm)}`,
          baseline: `${show(pr)}, ${show(pm)}`,
          ratio: sm !== null && pm ? round(sm / pm, 3) : null,
          budget: "above plain bm25",
          pass: sr !== null && sm !== null && pr !== null && pm !== null ? sr > pr && sm > pm : null,
        };
      };
      // Fewer than 15 questions (as the main set's kinds below): shown, but too few to pass or fail on.
      const few = (row: SummaryRow, figures: Figures): SummaryRow =>
        (num(figures.questions) ?? 0) < 15 ? { ...row, budget: "reported", pass: null } : row;
      if (Object.keys(sergo).length > 0) {
        for (const part of ["overall", "tuning", "held_out"]) {
          const s = obj(sergo[part]);
          rows.push(qualityRow(
            `search quality, ${part.replace("_", "-")} (${show(s.questions)} q.): recall@10, MRR`,
            s,
            obj(plain[part]),
          ));
        }
        // The same questions counted on what the search tool shows an agent (its first answer, each document
        // capped at half of it, grouped by document): what an evaluation from outside, through MCP, sees.
        const shown = obj(quality.as_shown);
        for (const part of ["overall", "held_out"]) {
          const s = obj(shown[part]);
          if (Object.keys(s).length === 0) continue;
          rows.push(qualityRow(
            `  as the search tool shows it, ${part.replace("_", "-")} (${
              show(s.questions)
            } q.): recall@10, MRR`,
            s,
            obj(plain[part]),
          ));
        }
        const kinds = obj(sergo.kinds);
        for (const [kind, value] of Object.entries(kinds)) {
          const s = obj(value);
          if ((num(s.questions) ?? 0) < 15) continue;
          rows.push(qualityRow(`  kind ${kind} (${show(s.questions)} q.)`, s, obj(obj(plain.kinds)[kind])));
        }
        // The second and third sets, written before any ranking ran on them: every question held out.
        const unseenSet = (value: unknown, name: string, title: string) => {
          const set = obj(value);
          const setSergo = obj(set.sergo);
          const setPlain = obj(set.plain_bm25_or);
          if (Object.keys(setSergo).length === 0) return;
          const s = obj(setSergo.overall);
          rows.push(qualityRow(
            `search quality, ${name} set, ${title} (${show(s.questions)} q.): recall@10, MRR`,
            s,
            obj(setPlain.overall),
          ));
          const setShown = obj(obj(set.as_shown).overall);
          if (Object.keys(setShown).length > 0) {
            rows.push(qualityRow(
              `  ${name} set as the search tool shows it (${show(setShown.questions)} q.): recall@10, MRR`,
              setShown,
              obj(setPlain.overall),
            ));
          }
          const without = obj(set.without_dictionaries);
          rows.push({
            figure: `  ${name} set without the dictionaries: recall@10, MRR`,
            sergo: `${show(num(obj(without.overall).recall_at_10))}, ${show(num(obj(without.overall).mrr))}`,
            baseline: `${show(num(s.recall_at_10))}, ${show(num(s.mrr))} (with)`,
            ratio: null,
            budget: "reported",
            pass: null,
          });
          for (const [kind, value] of Object.entries(obj(setSergo.kinds))) {
            const k = obj(value);
            rows.push(few(
              qualityRow(`  kind ${kind} (${show(k.questions)} q.)`, k, obj(obj(setPlain.kinds)[kind])),
              k,
            ));
          }
          for (const [pair, value] of Object.entries(obj(setSergo.languages))) {
            const k = obj(value);
            rows.push(few(
              qualityRow(`  ${pair} (${show(k.questions)} q.)`, k, obj(obj(setPlain.languages)[pair])),
              k,
            ));
          }
        };
        unseenSet(r.quality_debian, "second", "Debian manuals");
        unseenSet(r.quality_handbook, "third", "Debian Administrator's Handbook");
        unseenSet(r.quality_guides, "fourth", "Installation Guide and Developer's Reference");
        unseenSet(r.quality_maint, "fifth", "New Maintainers' Guide, aptitude manual and Debian Reference");
        const old = obj(quality.search_eval_58);
        rows.push(qualityRow("search quality, older 58 questions", obj(old.sergo), obj(old.plain_bm25_or)));
        // Each part changed in turn, beside the ranking as shipped: held-out overall, then on the part's own questions.
        const figures = (f: unknown) => `${show(num(obj(f).recall_at_10))}, ${show(num(obj(f).mrr))}`;
        for (const value of Array.isArray(quality.ablation) ? quality.ablation : []) {
          const a = obj(value);
          const target = obj(a.target);
          const own = Object.keys(target).length > 0
            ? `; ${target.name} (${show(obj(obj(target.shipped).held_out).questions)} held-out q.): ${
              figures(obj(target.without).held_out)
            } vs ${figures(obj(target.shipped).held_out)}`
            : "";
          rows.push({
            figure: `  ablation, held-out: ${a.name}`,
            sergo: `${figures(a.held_out)}${own}`,
            baseline: `${figures(sergo.held_out)} (as shipped); tuning ${figures(a.tuning)} vs ${
              figures(sergo.tuning)
            }`,
            ratio: null,
            budget: "reported",
            pass: null,
          });
        }
      }
      return rows;
    },
  },
  // Search through serve with 50 connections beside the tool in process, same run, same cores.
  { name: "search_serve", file: "./search_serve.ts", fn: "benchSearchServe", rows: () => [] },
  {
    name: "semantic",
    file: "./semantic.ts",
    fn: "benchSemantic",
    rows: () => [],
  },
  {
    name: "ingest",
    file: "./ingest.ts",
    fn: "benchIngest",
    rows: (r) => [
      ratioRow({
        figure: `PDF text extraction pages/s (${show(r.readers)} workers) ÷ pdftotext`,
        sergo: `${show(r.pool_pdf_pages_per_s, " p/s")}`,
        baseline: `${show(r.pdftotext_pages_per_s, " p/s")}`,
        ratio: num(r.pool_vs_pdftotext),
        budget: { op: ">=", value: 1.0 },
        note: `PowerPoint ${show(r.pptx_files_per_s)} files/s, Word ${show(r.docx_files_per_s)} files/s` +
          (num(r.failed) ? `; ${r.failed} files failed` : ""),
      }),
    ],
  },
  {
    name: "page_views",
    file: "./page_views.ts",
    fn: "benchPageViews",
    rows: (r) => [
      ratioRow({
        figure: `view_page first render ÷ pdftoppm -r 110 (${show(r.pages)} pages)`,
        sergo: `${show(r.first_render_ms, " ms")}`,
        baseline: `${show(r.pdftoppm_ms, " ms")}`,
        ratio: num(r.first_vs_pdftoppm),
        budget: { op: "<=", value: 0.4 },
        note: `CPU ${show(r.first_cpu_ms, " ms")} ÷ pdftoppm's ${show(r.pdftoppm_cpu_ms, " ms")} = ${
          show(r.first_vs_pdftoppm_cpu)
        }`,
      }),
      ratioRow({
        figure: "view_page cached ÷ first render",
        sergo: `${show(r.cached_ms, " ms")}`,
        baseline: `${show(r.first_render_ms, " ms")}`,
        ratio: num(r.cached_vs_first),
        budget: { op: "<=", value: 0.02 },
      }),
    ],
  },
  {
    name: "standard",
    file: "./standard.ts",
    fn: "benchStandard",
    rows: (r) => {
      const t = obj(r.throughput);
      const a = obj(r.accuracy);
      const b = obj(r.born_digital);
      const s = obj(r.search);
      const rows = [
        ratioRow({
          figure: `Standard pages/s (${
            show(t.pages_transcribed)
          } scanned pages, all workers) ÷ ocrmypdf --force-ocr`,
          sergo: `${show(t.sergo_pages_per_s, " p/s")} (${show(t.sergo_s, " s")})`,
          baseline: `${show(t.ocrmypdf_pages_per_s, " p/s")} (${show(t.ocrmypdf_s, " s")})`,
          ratio: num(t.ratio),
          budget: { op: ">=", value: 1 },
        }),
        ratioRow({
          figure: `word error rate on ${show(a.pages)} hand-checked scanned pages, Sergo ÷ ocrmypdf`,
          sergo: `${show(a.sergo_wer)}`,
          baseline: `${show(a.ocrmypdf_wer)}`,
          ratio: num(a.sergo_wer) !== null && num(a.ocrmypdf_wer)
            ? round(num(a.sergo_wer)! / num(a.ocrmypdf_wer)!, 3)
            : null,
          budget: { op: "<=", value: 1 },
        }),
        ratioRow({
          figure: "born-digital PDF, Standard ÷ Basic (no page transcribed)",
          sergo: `${show(obj(obj(b.rounds)[0] ?? {}).standard_s, " s")} …`,
          baseline: `${show(obj(obj(b.rounds)[0] ?? {}).basic_s, " s")} …`,
          ratio: num(b.ratio),
          budget: { op: "<=", value: 1.2 },
        }),
      ];
      if (r.search) {
        const std = obj(obj(s.standard).overall);
        const basic = obj(obj(s.basic).overall);
        rows.push(ratioRow({
          figure: `search on scanned pages, ${
            show(s.questions)
          } questions: recall@10, MRR (Standard vs Basic)`,
          sergo: `${show(std.recall_at_10)}, ${show(std.mrr)}`,
          baseline: `${show(basic.recall_at_10)}, ${show(basic.mrr)}`,
          ratio: null,
          budget: null,
        }));
      }
      return rows;
    },
  },
  { name: "replay", file: "./replay.ts", fn: "benchReplay", rows: () => [] },
  { name: "startup", file: "./startup.ts", fn: "benchStartup", rows: () => [] },
  { name: "postgres", file: "./postgres.ts", fn: "benchPostgres", rows: () => [] },
  // Replicas by CPU: 1, 2 and 3 on one PostgreSQL, one hot key and 50 keys.
  { name: "replica_cpu", file: "./replica_cpu.ts", fn: "benchReplicaCpu", rows: () => [] },
  // After replay: a PostgreSQL replica's start-up on the replay data set's projections.
  { name: "replica_startup", file: "./replica_startup.ts", fn: "benchReplicaStartup", rows: () => [] },
  // Last: ten minutes (one with --quick; SOAK_MINUTES sets it) of mixed and hostile traffic.
  { name: "soak", file: "./soak.ts", fn: "benchSoak", rows: () => [] },
  // Two replicas on PostgreSQL behind HAProxy, clean and then with hostile clients and a PostgreSQL restart
  // (ten minutes a run, 60 s with --quick; SOAK_CLUSTER_SECONDS sets it).
  { name: "soak_cluster", file: "./soak_cluster.ts", fn: "benchSoakCluster", rows: () => [] },
];

/** What `main` was asked. */
interface Args {
  quick: boolean;
  only: string[];
  /** Print each ratio beside the last committed full run's (`bench/baseline/full.json`). */
  compare: boolean;
}

function parseArgs(args: string[]): Args | string {
  const out: Args = { quick: false, only: [], compare: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--quick") out.quick = true;
    else if (arg === "--compare") out.compare = true;
    else if (arg === "--only" || arg.startsWith("--only=")) {
      const value = arg === "--only" ? args[++i] : arg.slice("--only=".length);
      if (!value) return `"--only" needs a module name: one of ${MODULES.map((m) => m.name).join(", ")}`;
      for (const name of value.split(",")) {
        if (!MODULES.some((module) => module.name === name)) {
          return `Unknown benchmark "${name}": use one of ${MODULES.map((m) => m.name).join(", ")}`;
        }
        out.only.push(name);
      }
    } else return `Unknown argument "${arg}": use --quick, --compare and --only NAME`;
  }
  return out;
}

/** Facts of the machine the figures were measured on. */
async function machine(): Promise<Figures> {
  const cpu = await Deno.readTextFile("/proc/cpuinfo").then((text) =>
    text.match(/model name\s*:\s*(.+)/)?.[1] ?? null
  )
    .catch(() => null);
  return {
    cores: navigator.hardwareConcurrency,
    cpu,
    memory_gb: round(Deno.systemMemoryInfo().total / 1024 ** 3, 1),
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    sqlite: await sqliteVersion(),
    load_average_at_start: Deno.loadavg(),
  };
}

async function sqliteVersion(): Promise<string | null> {
  try {
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(":memory:");
    const row = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
    db.close();
    return row.v;
  } catch {
    return null;
  }
}

/** Runs one module; a missing module or a failure becomes a failed row. */
async function runModule(
  module: BenchModule,
  quick: boolean,
): Promise<{ ok: boolean; seconds: number; result?: Figures; error?: string; rows: SummaryRow[] }> {
  const started = performance.now();
  const seconds = () => round((performance.now() - started) / 1000, 1);
  let run: (opts: { quick: boolean }) => Promise<Figures>;
  try {
    const imported = await import(new URL(module.file, import.meta.url).href) as Record<string, unknown>;
    const fn = imported[module.fn];
    if (typeof fn !== "function") {
      throw new Error(`"bench/${module.file.slice(2)}" does not export ${module.fn}`);
    }
    run = fn as typeof run;
  } catch (error) {
    const message = `not run: ${firstLine(error)}`;
    return { ok: false, seconds: seconds(), error: message, rows: [failedRow(module.name, message)] };
  }
  try {
    const result = await run({ quick });
    let rows: SummaryRow[];
    try {
      rows = Array.isArray(result.rows) ? result.rows as SummaryRow[] : module.rows(result, quick);
    } catch (error) {
      rows = [failedRow(module.name, `its figures could not be read: ${firstLine(error)}`)];
    }
    if (rows.length === 0) rows = [failedRow(module.name, "it returned no figures")];
    return { ok: true, seconds: seconds(), result, rows };
  } catch (error) {
    const message = `failed: ${firstLine(error)}`;
    console.error(`bench ${module.name} failed:`, error);
    return { ok: false, seconds: seconds(), error: message, rows: [failedRow(module.name, message)] };
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]!.slice(0, 300);
}

/** Runs the benchmarks; returns the exit code (1 when a module could not run). */
export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === "string") {
    console.error(args);
    return 2;
  }
  const chosen = MODULES.filter((module) => args.only.length === 0 || args.only.includes(module.name));
  const started = new Date();
  const facts = await machine();
  console.log(
    `Sergo benchmarks${args.quick ? " (quick)" : ""}: ${
      chosen.map((m) => m.name).join(", ")
    } on ${facts.cores} cores, ` +
      `Deno ${facts.deno}, load ${
        (facts.load_average_at_start as number[]).map((n) => n.toFixed(2)).join(" ")
      }`,
  );
  const modules: Record<string, unknown> = {};
  const summary: SummaryRow[] = [];
  let failed = false;
  for (const module of chosen) {
    console.log(`\n== ${module.name}`);
    const outcome = await runModule(module, args.quick);
    failed ||= !outcome.ok;
    modules[module.name] = outcome.ok
      ? { ok: true, seconds: outcome.seconds, result: outcome.result }
      : { ok: false, seconds: outcome.seconds, error: outcome.error };
    summary.push(...outcome.rows);
    console.log(`(${module.name}: ${outcome.seconds} s)`);
  }
  const report = {
    date: started.toISOString(),
    command: `deno task bench${args.quick ? " --quick" : ""}${
      args.only.map((name) => ` --only ${name}`).join("")
    }`,
    quick: args.quick,
    seconds: round((Date.now() - started.getTime()) / 1000, 1),
    machine: { ...facts, load_average_at_end: Deno.loadavg() },
    summary,
    modules,
  };
  const results = new URL("./results/", import.meta.url);
  await Deno.mkdir(results, { recursive: true });
  await Deno.writeTextFile(new URL("latest.json", results), JSON.stringify(report, null, 2) + "\n");
  // A full run of every module is the next baseline: commit bench/baseline/full.json with the change it measured.
  const baselineFile = new URL("./baseline/full.json", import.meta.url);
  if (!args.quick && args.only.length === 0 && !failed) {
    await Deno.mkdir(new URL("./baseline/", import.meta.url), { recursive: true });
    await Deno.writeTextFile(baselineFile, JSON.stringify(baselineOf(report), null, 2) + "\n");
  }
  console.log(`\n${formatTable(summary)}\n`);
  if (args.compare) {
    const baseline = await readBaseline(baselineFile);
    console.log(
      baseline
        ? `${formatComparison(compareRows(summary, baseline), baseline)}\n`
        : "No committed full run to compare with: bench/baseline/full.json is missing.\n",
    );
  }
  console.log(
    `${report.command} — ${report.seconds} s on ${facts.cores} cores (${facts.cpu ?? "unknown CPU"}), ` +
      `${facts.memory_gb} GB, Deno ${facts.deno}, ${report.date}; figures in bench/results/latest.json`,
  );
  return failed ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
