/**
 * The layering check `deno task check` runs: reads every import of the
 * product's code (`main.ts`, `events/`, `projections/`, `src/`) and every SQL
 * statement naming a projection's table, and fails on
 *
 * - an import from a lower floor to a higher one (the floors are below);
 * - a circle of files importing each other;
 * - a `_` file imported from outside its folder;
 * - a projection's table queried outside `projections/`.
 *
 * What the code did when this check was written is listed in
 * `tools/layers_known.txt`: those are allowed until they are mended, and the
 * list only shrinks — an entry that no longer occurs fails the check too,
 * until it is taken out. `--write` writes the list anew (for the commit that
 * mends some).
 *
 * @module
 */
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));
const KNOWN = join(ROOT, "tools/layers_known.txt");

/**
 * The floors, lowest first: a file may import from its own floor or below.
 * The first matching prefix decides a file's floor.
 */
const FLOORS: [prefix: string, floor: number][] = [
  ["events/", 0],
  ["src/version.ts", 0],
  ["src/analysis/", 1],
  ["src/blob_store.ts", 1],
  ["src/postgres_blob_store.ts", 1],
  ["src/render/", 1],
  ["src/pdf_copy/", 1],
  ["projections/", 2],
  // The HTTP toolbox every edge uses.
  ["src/http/json.ts", 3],
  ["src/http/read_body.ts", 3],
  ["src/http/deadlines.ts", 3],
  ["src/http/unavailable.ts", 3],
  ["src/http/client_address.ts", 3],
  ["src/app.ts", 3],
  ["src/config.ts", 3],
  ["src/domain/", 3],
  ["src/processing/", 3],
  ["src/search/", 4],
  ["src/audit/", 4],
  ["src/workers/", 4],
  ["src/auth/", 5],
  // The edges: the REST API, the MCP server, the console.
  ["src/http/", 6],
  ["src/api/", 6],
  ["src/mcp/", 6],
  ["src/console/", 6],
  ["src/server/", 7],
  ["src/cli/", 8],
  ["main.ts", 8],
];

/** What the check found: one line each, in a stable order. */
export interface Findings {
  lines: string[];
}

function floorOf(path: string): number {
  for (const [prefix, floor] of FLOORS) if (path === prefix || path.startsWith(prefix)) return floor;
  throw new Error(`No floor for "${path}": add its folder to FLOORS in tools/layers.ts`);
}

function sourceFiles(): string[] {
  const files = ["main.ts"];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (/\.tsx?$/.test(entry.name)) files.push(path);
    }
  };
  for (const dir of ["events", "projections", "src"]) walk(dir);
  return files.sort();
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
const SQL_TABLE = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+([a-z_][a-z0-9_]*)/g;

/** Every relative import of each file, as paths from the repository's root. */
function importsOf(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2]!;
      targets.add(relative(ROOT, normalize(join(ROOT, dirname(file), spec))));
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The projections' tables: every table a file in `projections/` creates. */
function projectionTables(files: string[]): Set<string> {
  const tables = new Set<string>();
  for (const file of files.filter((f) => f.startsWith("projections/"))) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    for (const match of text.matchAll(/CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g)) {
      tables.add(match[1]!);
    }
  }
  return tables;
}

/** Circles of files (strongly connected components of more than one file, or a file importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      for (;;) {
        const top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
        if (top === node) break;
      }
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Everything the check finds in the tree as it is. */
export function findings(): Findings {
  const files = sourceFiles();
  const graph = importsOf(files);
  const lines: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (!graph.has(target)) continue; // not product code (a vendored asset, a JSON file)
      if (floorOf(target) > floorOf(file)) lines.push(`upward import: ${file} -> ${target}`);
      const name = target.split("/").at(-1)!;
      const folder = dirname(target);
      if (name.startsWith("_") && dirname(file) !== folder && !dirname(file).startsWith(`${folder}/`)) {
        lines.push(`private import: ${file} -> ${target}`);
      }
    }
  }
  for (const circle of circles(graph)) lines.push(`circle: ${circle.join(" ")}`);
  const tables = projectionTables(files);
  for (const file of files.filter((f) => !f.startsWith("projections/"))) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    const named = new Set<string>();
    for (const match of text.matchAll(SQL_TABLE)) if (tables.has(match[1]!)) named.add(match[1]!);
    for (const table of [...named].sort()) {
      lines.push(`projection table outside projections/: ${file} ${table}`);
    }
  }
  return { lines: lines.sort() };
}

if (import.meta.main) {
  const now = findings().lines;
  if (Deno.args.includes("--write")) {
    const header =
      "# What the layering check found when it was written: allowed until mended. Only shrinks.\n";
    Deno.writeTextFileSync(KNOWN, header + now.map((line) => `${line}\n`).join(""));
    console.log(`Wrote ${now.length} known findings to tools/layers_known.txt.`);
    Deno.exit(0);
  }
  const known = new Set(
    Deno.readTextFileSync(KNOWN).split("\n").filter((line) => line && !line.startsWith("#")),
  );
  const added = now.filter((line) => !known.has(line));
  const mended = [...known].filter((line) => !now.includes(line));
  for (const line of added) console.error(`New: ${line}`);
  for (const line of mended) console.error(`Mended, take it out of tools/layers_known.txt: ${line}`);
  if (added.length || mended.length) {
    console.error(
      `The layering check failed: ${added.length} new finding(s), ${mended.length} mended one(s) still listed.`,
    );
    Deno.exit(1);
  }
  console.log(`Layers: no new findings (${known.size} known ones left to mend).`);
}
