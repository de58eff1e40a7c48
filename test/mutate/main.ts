/**
 * `deno task mutate`: applies each small bug of `mutations.ts` alone to a
 * scratch copy of the repository, runs the tests that should catch it, and
 * reports every bug that no test caught (a survivor). Not part of CI: it runs
 * the chosen test files once per bug.
 *
 * ```sh
 * deno task mutate                 # every mutation
 * deno task mutate --only search   # those whose name contains "search" (--only may repeat)
 * deno task mutate --file mutations_mutants   # only the entries of that list (--file may repeat)
 * deno task mutate --list          # names and files only
 * deno task mutate --jobs 2        # two bugs at a time, each in its own scratch copy
 * deno task mutate --no-baseline   # skip the unmutated run (the suite just passed on this commit)
 * ```
 *
 * A mutation whose `from` text is not found exactly once in its file is
 * reported as stale (the code moved): update its line in `mutations.ts`. The
 * run first runs every chosen test file unmutated (files that fail are tried
 * once more alone, since a loaded machine fails timing-bound tests), and
 * stops if that fails.
 * Exit code 0 only when every mutation was caught. The report is also written
 * to `test/artifacts/mutate.txt`, and each run's test output to
 * `test/artifacts/mutate/`.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LISTS } from "./all.ts";
import type { Mutation } from "./mutations.ts";
import { TEST_PERMISSIONS } from "../run.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TEST_FLAGS = ["test", "--no-check", ...TEST_PERMISSIONS];
/** One mutation's run: a planted bug that hangs a test is "timed out", not a pass. */
const TIMEOUT_MS = 15 * 60_000;
/** The unmutated run of every chosen file at once: far longer than one file's run. */
const BASELINE_TIMEOUT_MS = 90 * 60_000;

type Outcome = "caught" | "survived" | "stale" | "timed out";

async function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = TIMEOUT_MS,
): Promise<{ code: number; output: string }> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    // As `deno task test` runs them: the cross-language tests load the dictionaries themselves.
    env: { CI: "true", NO_COLOR: "1", SERGO_DICTIONARIES: "off" },
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, timeoutMs);
  const out = await child.output();
  clearTimeout(timer);
  const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.signal === "SIGKILL" ? -1 : out.code, output };
}

/** Copies the repository's files (tracked and new, not ignored): the corpus and reference come with them. */
async function scratchCopy(): Promise<{ repo: string; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-mutate-" });
  const repo = join(dir, "repo");
  const listed = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], ROOT);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.output}`);
  for (const path of listed.output.split("\0").filter(Boolean)) {
    const from = join(ROOT, path);
    const info = await Deno.lstat(from).catch(() => null);
    if (!info?.isFile) continue;
    await Deno.mkdir(dirname(join(repo, path)), { recursive: true });
    await Deno.copyFile(from, join(repo, path));
  }
  return { repo, dir };
}

function count(text: string, part: string): number {
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) n++;
  return n;
}

async function tryMutation(repo: string, mutation: Mutation): Promise<{ outcome: Outcome; detail: string }> {
  const sites = [mutation, ...(mutation.also ?? [])];
  const originals = new Map<string, string>();
  for (const site of sites) {
    const path = join(repo, site.file);
    const text = originals.get(path) ?? await Deno.readTextFile(path).catch(() => null);
    if (text === null) return { outcome: "stale", detail: `${site.file} does not exist` };
    originals.set(path, text);
    const found = count(text, site.from);
    if (found !== 1) return { outcome: "stale", detail: `"${site.from}" is in ${site.file} ${found} times` };
  }
  try {
    for (const site of sites) {
      const path = join(repo, site.file);
      await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace(site.from, site.to));
    }
    const started = performance.now();
    // One failing test is enough to call it caught: --fail-fast stops there (a survivor still runs them all).
    const { code, output } = await run(
      Deno.execPath(),
      [...TEST_FLAGS, "--fail-fast", ...mutation.tests],
      repo,
    );
    await Deno.mkdir(join(ROOT, "test/artifacts/mutate"), { recursive: true });
    await Deno.writeTextFile(join(ROOT, "test/artifacts/mutate", `${slug(mutation.name)}.log`), output);
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    if (code === -1) return { outcome: "timed out", detail: `${seconds} s` };
    if (code === 0) return { outcome: "survived", detail: `${seconds} s, ${summary(output)}` };
    const failed = [...output.matchAll(/^(.+) => \.\/(\S+)/gm)].map((m) => m[1]!.trim());
    return { outcome: "caught", detail: `${seconds} s, by: ${[...new Set(failed)].slice(0, 2).join("; ")}` };
  } finally {
    for (const [path, text] of originals) await Deno.writeTextFile(path, text);
  }
}

/** The test files with a failing test in a `deno test` output. */
function failingFiles(output: string): string[] {
  return [
    ...new Set([...output.matchAll(/^(?:\S.*)? => \.\/(\S+?\.tsx?)(?::\d+:\d+)?$/gm)].map((m) => m[1]!)),
  ];
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 80);
}

function summary(output: string): string {
  return output.split("\n").filter((line) => /^(ok|FAILED) \|/.test(line)).at(-1) ?? "no summary";
}

if (import.meta.main) {
  const wanted = Deno.args.flatMap((arg, i) => Deno.args[i - 1] === "--only" ? [arg] : []);
  const listNames = Deno.args.flatMap((arg, i) =>
    Deno.args[i - 1] === "--file" ? [arg.replace(/\.ts$/, "")] : []
  );
  for (const name of listNames) {
    if (!(name in LISTS)) {
      console.error(`No mutation list "${name}": the lists are ${Object.keys(LISTS).join(", ")}.`);
      Deno.exit(2);
    }
  }
  const only = [...listNames.map((name) => `--file ${name}`), ...wanted.map((part) => `--only ${part}`)].join(
    " ",
  );
  const lists = listNames.length === 0 ? Object.values(LISTS) : listNames.map((name) => LISTS[name]!);
  const chosen = lists.flat().filter((mutation) =>
    wanted.length === 0 || wanted.some((part) => mutation.name.includes(part))
  );
  if (Deno.args.includes("--list")) {
    for (const mutation of chosen) {
      console.log(`${mutation.name}\t${mutation.file}\t${mutation.tests.join(" ")}`);
    }
    Deno.exit(0);
  }
  // The commit the scratch copy is taken from (the worktree may move on during the run).
  const head = (await run("git", ["rev-parse", "--short", "HEAD"], ROOT)).output.trim();
  const jobs = Number(Deno.args.find((_, i) => Deno.args[i - 1] === "--jobs") ?? "1");
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 8) {
    console.error("--jobs must be a whole number from 1 to 8.");
    Deno.exit(2);
  }
  // One scratch copy per job: each plants one bug at a time in its own copy.
  const copies = [];
  for (let i = 0; i < jobs; i++) copies.push(await scratchCopy());
  const repo = copies[0]!.repo;
  try {
    const files = [...new Set(chosen.flatMap((mutation) => mutation.tests))].sort();
    const skipBaseline = Deno.args.includes("--no-baseline");
    console.log(
      skipBaseline
        ? `No baseline run (--no-baseline): the ${files.length} test files are taken to pass unmutated`
        : `Baseline: ${files.length} test files, unmutated`,
    );
    const started = performance.now();
    let baseline = skipBaseline ? { code: 0, output: "" } : await run(
      Deno.execPath(),
      [...TEST_FLAGS, "--parallel", ...files],
      repo,
      BASELINE_TIMEOUT_MS,
    );
    if (baseline.code > 0) {
      // A test that failed once on a loaded machine is tried again alone before a long run is given up.
      const failing = failingFiles(baseline.output);
      console.log(`Baseline: ${failing.length} files failed; trying them again alone: ${failing.join(" ")}`);
      if (failing.length > 0) baseline = await run(Deno.execPath(), [...TEST_FLAGS, ...failing], repo);
    }
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    if (baseline.code === -1) {
      console.error(baseline.output.split("\n").slice(-20).join("\n"));
      console.error(
        `The unmutated tests did not finish in ${BASELINE_TIMEOUT_MS / 60_000} minutes: stopped.`,
      );
      // Deno.exit skips the finally below: the scratch copies are removed here.
      for (const copy of copies) await Deno.remove(copy.dir, { recursive: true });
      Deno.exit(2);
    }
    if (baseline.code !== 0) {
      // The failing tests (deno test's FAILURES section), then the end of the output.
      const failures = baseline.output.split("\n").filter((line) => / => \.\/\S+:\d+:\d+$/.test(line));
      console.error([...new Set(failures)].join("\n"));
      console.error(baseline.output.split("\n").slice(-40).join("\n"));
      console.error("The tests fail without any mutation: fix them first.");
      // Deno.exit skips the finally below: the scratch copies are removed here.
      for (const copy of copies) await Deno.remove(copy.dir, { recursive: true });
      Deno.exit(2);
    }
    console.log(`Baseline passed in ${minutes} min`);
    const lines: string[] = new Array(chosen.length);
    let bad = 0;
    let done = 0;
    let next = 0;
    const reportNow = (final: boolean) => {
      const finished = lines.filter(Boolean);
      return [
        `deno task mutate${only ? ` ${only}` : ""}: ${new Date().toISOString()}, at ${head}` +
        (final ? "" : ` (still running: ${done} of ${chosen.length} tried)`),
        `${done - bad} of ${done} mutations caught; ${bad} survived, stale or timed out.`,
        ...finished.filter((line) => !line.startsWith("caught")),
        "",
        ...finished,
      ].join("\n");
    };
    await Deno.mkdir(join(ROOT, "test/artifacts"), { recursive: true });
    // Each job takes the next mutation until none is left; the report is rewritten after each one, so a run
    // that is stopped early still says what it found.
    await Promise.all(copies.map(async (copy) => {
      for (let index = next++; index < chosen.length; index = next++) {
        const mutation = chosen[index]!;
        const { outcome, detail } = await tryMutation(copy.repo, mutation);
        if (outcome !== "caught") bad++;
        done++;
        const line = `${outcome.padEnd(9)} ${mutation.name} (${detail})`;
        lines[index] = line;
        console.log(`[${index + 1}/${chosen.length}] ${line}`);
        await Deno.writeTextFile(join(ROOT, "test/artifacts/mutate.txt"), `${reportNow(false)}\n`);
      }
    }));
    const report = reportNow(true);
    console.log(`\n${report.split("\n\n")[0]}`);
    await Deno.writeTextFile(join(ROOT, "test/artifacts/mutate.txt"), `${report}\n`);
    Deno.exitCode = bad === 0 ? 0 : 1;
  } finally {
    for (const copy of copies) await Deno.remove(copy.dir, { recursive: true });
  }
}
