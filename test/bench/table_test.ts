import assert from "node:assert/strict";
import { failedRow, formatTable, percentile, ratioRow } from "../../bench/_table.ts";

Deno.test("a ratio is checked against its budget in the right direction", () => {
  const at = (ratio: number, op: ">=" | "<=") =>
    ratioRow({ figure: "f", sergo: "s", baseline: "b", ratio, budget: { op, value: 0.7 } }).pass;
  assert.equal(at(0.7, ">="), true);
  assert.equal(at(0.69, ">="), false);
  assert.equal(at(0.2, "<="), true);
  assert.equal(at(0.71, "<="), false);
  assert.equal(
    ratioRow({ figure: "f", sergo: "s", baseline: "b", ratio: null, budget: { op: ">=", value: 1 } }).pass,
    null,
  );
});

Deno.test("an absolute budget checks the value, not the ratio", () => {
  const row = ratioRow({
    figure: "start-up",
    sergo: "380 ms",
    baseline: "30 ms",
    ratio: 12.7,
    value: 380,
    budget: { op: "<=", value: 1000, unit: "ms" },
  });
  assert.equal(row.pass, true);
  assert.equal(row.budget, "<= 1000 ms");
});

Deno.test("the summary table aligns its columns, marks failures and lists notes below", () => {
  const table = formatTable([
    ratioRow({
      figure: "replay events/s",
      sergo: "9000 ev/s",
      baseline: "10000 ev/s",
      ratio: 0.9,
      budget: { op: ">=", value: 0.7 },
    }),
    failedRow("protocol", "not run: Module not found"),
  ]);
  const lines = table.split("\n");
  assert.match(lines[0]!, /^\| figure +\| Sergo +\| baseline +\| ratio \| budget +\| pass \|$/);
  assert.equal(new Set(lines.slice(0, 4).map((line) => line.length)).size, 1);
  assert.match(lines[2]!, /\| 0\.9 +\| >= 0\.7 \| pass \|$/);
  assert.match(lines[3]!, /\| FAIL \|$/);
  assert.ok(lines.includes("- protocol: not run: Module not found"));
});

Deno.test("percentiles use the nearest rank", () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(values, 0.5), 50);
  assert.equal(percentile(values, 0.99), 99);
  assert.ok(Number.isNaN(percentile([], 0.5)));
});

Deno.test("an unknown --only is refused with the module names, before anything runs", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-sys",
      new URL("../../bench/main.ts", import.meta.url).pathname,
      "--only",
      "nope",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 2);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.match(
    stderr,
    /Unknown benchmark "nope": use one of protocol, call_cost, search, search_serve, semantic, ingest, page_views, standard, replay, startup, postgres, replica_cpu, replica_startup, soak, soak_cluster\n$/,
  );
});
