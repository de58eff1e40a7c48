/**
 * `--compare`: each ratio of this run beside the same figure of the last
 * committed full run (`bench/baseline/full.json`, written by every full
 * `deno task bench` and committed with the change it measured), with the
 * change in percent, marking those that moved more than 10 %.
 *
 * Figures are matched by their text without the parts in parentheses (the
 * page or file counts, which differ between quick and full sizes); a figure
 * of other sizes (search at 1,000 pages against 100,000) has no match and is
 * shown with "—".
 *
 * @module
 */
import type { SummaryRow } from "./_table.ts";

/** What the baseline file keeps of a full run. */
export interface Baseline {
  date: string;
  command: string;
  load_average_at_start: number[] | null;
  load_average_at_end: number[] | null;
  /** Where the figures came from, when not from `deno task bench` itself. */
  source?: string;
  rows: { figure: string; ratio: number | null }[];
}

/** How far a ratio may move before it is marked. */
export const MOVED = 0.1;

/** The key a figure is matched by: its text without parenthesised parts, spaces folded. */
export function figureKey(figure: string): string {
  return figure.replace(/\([^)]*\)/g, "").replace(/\s+/g, " ").trim().toLowerCase();
}

/** One row of the comparison. */
export interface ComparedRow {
  figure: string;
  ratio: number | null;
  baseline: number | null;
  /** (ratio − baseline) ÷ baseline, or null when either is missing. */
  change: number | null;
  moved: boolean;
}

/** Compares this run's rows with a baseline's. */
export function compareRows(rows: readonly SummaryRow[], baseline: Baseline): ComparedRow[] {
  const before = new Map(baseline.rows.map((row) => [figureKey(row.figure), row.ratio]));
  return rows.filter((row) => row.ratio !== null).map((row) => {
    const was = before.get(figureKey(row.figure)) ?? null;
    const change = was === null || was === 0 || row.ratio === null ? null : (row.ratio - was) / was;
    return {
      figure: row.figure,
      ratio: row.ratio,
      baseline: was,
      change,
      moved: change !== null && Math.abs(change) > MOVED,
    };
  });
}

/** The comparison as a Markdown table, with the baseline's date and load above it. */
export function formatComparison(compared: readonly ComparedRow[], baseline: Baseline): string {
  const load = (l: number[] | null) => (l ? l.map((n) => n.toFixed(1)).join(" ") : "unknown");
  const head = `Compared with the last committed full run: ${baseline.date} (${baseline.command}; load ${
    load(baseline.load_average_at_start)
  } at start${baseline.source ? `; ${baseline.source}` : ""}). Marked: moved more than ${MOVED * 100} %.`;
  const lines = compared.map((row) => {
    const change = row.change === null
      ? "—"
      : `${row.change > 0 ? "+" : ""}${(row.change * 100).toFixed(1)} %`;
    return [
      row.figure,
      String(row.ratio),
      row.baseline === null ? "—" : String(row.baseline),
      change,
      row.moved ? "MOVED" : "",
    ];
  });
  const table = [["figure", "ratio now", "last full run", "change", ""], ...lines];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    head,
    "",
    line(table[0]!),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...lines.map(line),
  ]
    .join("\n");
}

/** The baseline as committed (`git show HEAD:…`), else the file as it is, else null. */
export async function readBaseline(file: URL): Promise<Baseline | null> {
  try {
    const output = await new Deno.Command("git", {
      args: ["show", "HEAD:bench/baseline/full.json"],
      cwd: new URL("../", import.meta.url),
      stdout: "piped",
      stderr: "null",
    }).output();
    if (output.success) return JSON.parse(new TextDecoder().decode(output.stdout)) as Baseline;
  } catch {
    // no git here: the file as it is
  }
  try {
    return JSON.parse(await Deno.readTextFile(file)) as Baseline;
  } catch {
    return null;
  }
}

/** What a full run keeps as the next baseline. */
export function baselineOf(
  report: { date: string; command: string; machine: Record<string, unknown>; summary: readonly SummaryRow[] },
): Baseline {
  return {
    date: report.date,
    command: report.command,
    load_average_at_start: (report.machine.load_average_at_start as number[] | undefined) ?? null,
    load_average_at_end: (report.machine.load_average_at_end as number[] | undefined) ?? null,
    rows: report.summary.map((row) => ({ figure: row.figure, ratio: row.ratio })),
  };
}
