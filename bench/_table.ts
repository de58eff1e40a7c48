/**
 * The benchmark table: one row per figure, with Sergo's value, the baseline's,
 * their ratio, the budget and whether the ratio meets it.
 *
 * @module
 */

/** A budget: the ratio must be at least (`>=`) or at most (`<=`) a value. */
export interface Budget {
  op: ">=" | "<=";
  value: number;
  /** Set when the budget is on an absolute value (ms, MB) rather than on the ratio. */
  unit?: string;
}

/** One row of the summary table. */
export interface SummaryRow {
  figure: string;
  sergo: string;
  baseline: string;
  /** Sergo ÷ baseline (or the figure itself when there is no baseline); null when not measured. */
  ratio: number | null;
  budget: string;
  /** Whether the budget is met; null when it cannot be told. */
  pass: boolean | null;
  note?: string;
}

/**
 * Builds a row from a ratio and its budget. A budget with a unit is checked
 * against `value` (an absolute figure) instead of the ratio.
 */
export function ratioRow(input: {
  figure: string;
  sergo: string;
  baseline: string;
  ratio: number | null;
  budget: Budget | null;
  value?: number | null;
  note?: string;
}): SummaryRow {
  const checked = input.budget?.unit ? input.value ?? null : input.ratio;
  const pass = checked === null || input.budget === null || !Number.isFinite(checked)
    ? null
    : input.budget.op === ">="
    ? checked >= input.budget.value
    : checked <= input.budget.value;
  return {
    figure: input.figure,
    sergo: input.sergo,
    baseline: input.baseline,
    ratio: input.ratio,
    budget: input.budget
      ? `${input.budget.op} ${input.budget.value}${input.budget.unit ? ` ${input.budget.unit}` : ""}`
      : "",
    pass,
    ...(input.note ? { note: input.note } : {}),
  };
}

/** A row for a module or figure that could not be measured. */
export function failedRow(figure: string, reason: string): SummaryRow {
  return { figure, sergo: "—", baseline: "—", ratio: null, budget: "", pass: false, note: reason };
}

const HEADERS = ["figure", "Sergo", "baseline", "ratio", "budget", "pass"] as const;

function cells(row: SummaryRow): string[] {
  return [
    row.figure,
    row.sergo,
    row.baseline,
    row.ratio === null ? "—" : String(row.ratio),
    row.budget,
    row.pass === null ? "—" : row.pass ? "pass" : "FAIL",
  ];
}

/** Prints one row as a module finishes (a line starting with `|`, so rows can be grepped). */
export function printRow(row: SummaryRow): void {
  console.log(`| ${cells(row).join(" | ")} |${row.note ? ` ${row.note}` : ""}`);
}

/** Formats rows as a Markdown table with aligned columns, notes below it. */
export function formatTable(rows: readonly SummaryRow[]): string {
  const table = [HEADERS as readonly string[], ...rows.map(cells)];
  const widths = HEADERS.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  const out = [line(table[0]!), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`];
  for (const values of table.slice(1)) out.push(line(values));
  const notes = rows.filter((row) => row.note).map((row) => `- ${row.figure}: ${row.note}`);
  return notes.length > 0 ? `${out.join("\n")}\n\n${notes.join("\n")}` : out.join("\n");
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

/** The `p` quantile (0–1) of some numbers, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
