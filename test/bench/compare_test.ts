import assert from "node:assert/strict";
import { type Baseline, compareRows, figureKey, formatComparison } from "../../bench/_compare.ts";
import { ratioRow } from "../../bench/_table.ts";

const baseline: Baseline = {
  date: "2026-11-30",
  command: "deno task bench",
  load_average_at_start: [1.2],
  load_average_at_end: null,
  rows: [
    { figure: "tools/list calls/s ÷ bare Deno.serve JSON-RPC", ratio: 0.5 },
    { figure: "view_page first render ÷ pdftoppm -r 110 (40 pages)", ratio: 0.4 },
    { figure: "replay events/s (100000 pages + 200000 audit events)", ratio: 0.95 },
  ],
};

const row = (figure: string, ratio: number | null) =>
  ratioRow({ figure, sergo: "s", baseline: "b", ratio, budget: null });

Deno.test("--compare: figures match across sizes by their text outside parentheses", () => {
  assert.equal(
    figureKey("view_page first render ÷ pdftoppm -r 110 (8 pages)"),
    "view_page first render ÷ pdftoppm -r 110",
  );
  const compared = compareRows([
    row("tools/list calls/s ÷ bare Deno.serve JSON-RPC", 0.56),
    row("view_page first render ÷ pdftoppm -r 110 (8 pages)", 0.43),
    row("replay events/s (10000 pages + 20000 audit events)", 0.94),
    row("search p99 at 1,000 pages ÷ plain FTS5 bm25 OR p99", 0.3),
    row("not measured", null),
  ], baseline);
  assert.deepEqual(compared.map((c) => [c.baseline, c.moved]), [
    [0.5, true], // +12 %
    [0.4, false], // +7.5 %
    [0.95, false],
    [null, false], // no full-run figure of that size
  ]);
  assert.ok(Math.abs(compared[0]!.change! - 0.12) < 1e-9);
  const text = formatComparison(compared, baseline);
  assert.match(
    text,
    /^Compared with the last committed full run: 2026-11-30 \(deno task bench; load 1\.2 at start\)/,
  );
  assert.match(
    text,
    /\| tools\/list calls\/s ÷ bare Deno\.serve JSON-RPC +\| 0\.56 +\| 0\.5 +\| \+12\.0 % \| MOVED \|/,
  );
  assert.match(text, /\| search p99 at 1,000 pages ÷ plain FTS5 bm25 OR p99 +\| 0\.3 +\| — +\| — +\| +\|/);
});

Deno.test("--compare: a ratio that fell more than 10 % is marked too", () => {
  const [fell] = compareRows([row("tools/list calls/s ÷ bare Deno.serve JSON-RPC", 0.44)], baseline);
  assert.equal(fell!.moved, true);
  assert.ok(fell!.change! < -0.1);
});

Deno.test("--compare: the committed baseline is read and names where its figures came from", async () => {
  const { readBaseline } = await import("../../bench/_compare.ts");
  const read = await readBaseline(new URL("../../bench/baseline/full.json", import.meta.url));
  assert.ok(read, "bench/baseline/full.json is committed");
  assert.ok(read.rows.some((r) => figureKey(r.figure) === "tools/list calls/s ÷ bare deno.serve json-rpc"));
});
