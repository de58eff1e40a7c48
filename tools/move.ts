/**
 * Moves a source file with `git mv` and rewrites every relative import of it
 * (and the moved file's own relative imports), so a layout step is one
 * command and history follows the file:
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run=git tools/move.ts src/auth/key_format.ts src/domain/key_format.ts
 * ```
 *
 * Test files that mirror the moved one (`test/<same path>_test.ts`) are not
 * moved: move them with a second call.
 *
 * @module
 */
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));
const FOLDERS = ["events", "projections", "src", "test", "bench", "tools"];
const SPECIFIER = /((?:import|export)\s[^;]*?\sfrom\s+|import\(\s*|^\s*import\s+)(["'])(\.{1,2}\/[^"']+)\2/gm;

function codeFiles(): string[] {
  const files = ["main.ts"];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (path !== "test/corpus" && path !== "bench/data") walk(path);
      } else if (/\.(tsx?|jsx?)$/.test(entry.name)) files.push(path);
    }
  };
  for (const dir of FOLDERS) walk(dir);
  return files;
}

function specifierFor(fromFile: string, target: string): string {
  const spec = relative(dirname(fromFile), target);
  return spec.startsWith(".") ? spec : `./${spec}`;
}

/** Rewrites `file`'s imports: `resolve` maps each import's resolved path (from the root) to its new one. */
function rewrite(file: string, oldLocation: string, resolve: (path: string) => string): boolean {
  const text = Deno.readTextFileSync(join(ROOT, file));
  const next = text.replace(SPECIFIER, (whole, head: string, quote: string, spec: string) => {
    const target = relative(ROOT, normalize(join(ROOT, dirname(oldLocation), spec)));
    const moved = resolve(target);
    return moved === target && oldLocation === file
      ? whole
      : `${head}${quote}${specifierFor(file, moved)}${quote}`;
  });
  if (next === text) return false;
  Deno.writeTextFileSync(join(ROOT, file), next);
  return true;
}

if (import.meta.main) {
  const [from, to] = Deno.args;
  if (!from || !to) {
    console.error("Usage: tools/move.ts FROM TO (paths from the repository's root)");
    Deno.exit(2);
  }
  const mv = await new Deno.Command("git", { args: ["mv", from, to], cwd: ROOT }).output();
  if (mv.code !== 0) {
    console.error(`Cannot move "${from}": ${new TextDecoder().decode(mv.stderr).trim()}`);
    Deno.exit(1);
  }
  const resolve = (path: string) => (path === from ? to : path);
  let changed = 0;
  for (const file of codeFiles()) {
    if (file === to) {
      if (rewrite(file, from, resolve)) changed++;
    } else if (rewrite(file, file, resolve)) changed++;
  }
  console.log(`Moved ${from} to ${to}; rewrote the imports of ${changed} file(s).`);
}
