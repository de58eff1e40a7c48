/**
 * `deno task test`: the whole suite, as two `deno test` processes at once.
 *
 * - **The serial group** (`SERIAL`): files that change what their whole
 *   process shares (its environment, `TMPDIR`, `PATH`) or measure its own
 *   memory. `deno test --parallel` runs files as workers of one process, so
 *   these run one at a time in a process of their own, beside the rest.
 * - **Everything else** with `--parallel` (one file per core), the slowest
 *   files (`SLOWEST_FIRST`) started first: files start in the order they are
 *   given, and a two-minute file started last leaves the other core idle
 *   while it finishes.
 *
 * Each process's output is passed on line by line, so lines of the two do not
 * mix; each prints its own summary (`.ci/test_output_problems` adds them up).
 * The exit code is 1 when either run failed. Both runs have
 * `SERGO_DICTIONARIES=off`: tests that want the dictionaries say so.
 *
 * @module
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Files that change process-wide state or measure their process's memory (test/ci/serial_tests_test.ts). */
export const SERIAL: readonly string[] = [
  "test/pdf_copy/libreoffice_test.ts",
  "test/workers/pdf_copy_limits_test.ts",
  "test/mcp/tool_titles_test.ts",
  "test/workers/vision_limits_test.ts",
];

/**
 * The files that take longest (a fresh clone's run, each over about 40 s),
 * longest first. Only their order depends on this list: every test file runs
 * either way, and a name here that is not a test file fails the run.
 */
export const SLOWEST_FIRST: readonly string[] = [
  "test/workers/word_copy_pages_test.ts",
  "test/e2e/postgres_work_test.ts",
  "test/e2e/standard_test.ts",
  "test/e2e/console_newcomer_test.ts",
  "test/e2e/console_look_test.ts",
  "test/e2e/console_test.ts",
  "test/e2e/cluster_test.ts",
  "test/e2e/console_first_run_test.ts",
  "test/workers/pdf_copy_retry_test.ts",
  "test/workers/standard_vision_test.ts",
  "test/http/process_standard_test.ts",
  "test/search/dictionary_store_test.ts",
  "test/e2e/settings_test.ts",
  "test/e2e/corpus_processing_test.ts",
  "test/workers/standard_office_test.ts",
  "test/e2e/cli_commands_test.ts",
];

/** The permissions every test file runs with (`deno task test`, and `deno task mutate`'s runs). */
export const TEST_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-sys",
  "--allow-ffi",
  "--allow-run",
];

/** Every `*_test.ts` under `test/` (not the corpus or the artifacts), relative to the repository, sorted. */
export function testFiles(dir = "test"): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      if (path !== "test/corpus" && path !== "test/artifacts") files.push(...testFiles(path));
    } else if (entry.name.endsWith("_test.ts")) files.push(path);
  }
  return files.sort();
}

/** The parallel run's files: the slowest first, in `SLOWEST_FIRST`'s order, then the rest as sorted. */
export function parallelOrder(all: readonly string[]): string[] {
  const missing = [...SERIAL, ...SLOWEST_FIRST].filter((file) => !all.includes(file));
  if (missing.length > 0) {
    throw new Error(`test/run.ts names files that are not test files: ${missing.join(", ")}.`);
  }
  const rest = all.filter((file) => !SERIAL.includes(file) && !SLOWEST_FIRST.includes(file));
  return [...SLOWEST_FIRST, ...rest];
}

/** One writer for each of this process's outputs, shared by both runs: each write is whole lines. */
interface Outputs {
  stdout: WritableStreamDefaultWriter<Uint8Array>;
  stderr: WritableStreamDefaultWriter<Uint8Array>;
}

/** Passes a stream on to `out` a whole line at a time. */
async function passLines(stream: ReadableStream<Uint8Array>, out: WritableStreamDefaultWriter<Uint8Array>) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const end = pending.lastIndexOf("\n");
    if (end < 0) continue;
    await out.write(encoder.encode(pending.slice(0, end + 1)));
    pending = pending.slice(end + 1);
  }
  if (pending !== "") await out.write(encoder.encode(pending + "\n"));
}

async function run(args: string[], out: Outputs): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...TEST_PERMISSIONS, ...args],
    cwd: ROOT,
    env: { SERGO_DICTIONARIES: "off" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [status] = await Promise.all([
    child.status,
    passLines(child.stdout, out.stdout),
    passLines(child.stderr, out.stderr),
  ]);
  return status.code;
}

if (import.meta.main) {
  const all = testFiles();
  const parallel = parallelOrder(all);
  const out = { stdout: Deno.stdout.writable.getWriter(), stderr: Deno.stderr.writable.getWriter() };
  const codes = await Promise.all([run([...SERIAL], out), run(["--parallel", ...parallel], out)]);
  const failed = codes.filter((code) => code !== 0).length;
  const encoder = new TextEncoder();
  if (failed > 0) {
    await out.stderr.write(
      encoder.encode(`${failed} of the 2 test runs failed (their summaries are above).\n`),
    );
  }
  await out.stdout.write(
    encoder.encode(`${relative(ROOT, fileURLToPath(import.meta.url))}: ${all.length} test files.\n`),
  );
  Deno.exit(failed > 0 ? 1 : 0);
}
