/**
 * The programs tests need (LibreOffice, Chromium, poppler, …), found one way
 * for the tests and for `.ci/run`: a command is looked for in each folder of
 * `PATH` (then in the entry's own folders), and it must answer its version
 * question within the entry's time, with a few tries, since a cold first start
 * of LibreOffice or Chromium on a busy machine can take tens of seconds.
 *
 * A test that needs a program calls `needs(name)`, which gives the program's
 * path or throws, so the test fails: a missing program is never a skip.
 *
 * Run as a script, it probes the names given (all when none) and exits 1 if
 * any is missing or did not answer; `--located` only looks for the files
 * (for `.ci/run`'s install step, before anything is installed):
 *
 * ```sh
 * deno run --allow-run --allow-env --allow-read test/helpers/dependencies.ts soffice chromium
 * ```
 *
 * To add a program, add an entry to `DEPENDENCIES` and its Debian packages to
 * `.ci/run`'s list.
 *
 * @module
 */

import { DEFAULT_LANGUAGES as TESSERACT_DEFAULT_LANGUAGES } from "../../src/processing/transcribers/tesseract.ts";

/** How to find and check one program. */
export interface Dependency {
  /** Command names to look for, in order; the first found is used. */
  commands: string[];
  /** Folders looked in after `PATH` (a `*` matches any one folder name, newest version first). */
  folders?: string[];
  /** Arguments that make the program print its version and exit 0. */
  versionArgs: string[];
  /** How long one try may take before it counts as a timeout. */
  timeoutMs: number;
  /** How many tries before the program counts as not answering. */
  attempts: number;
  /** What to install when it is missing. */
  install: string;
  /**
   * Data the program must also have (e.g. Tesseract's languages): `args` make
   * it list what it has, one per line, and each of `lines` must be listed;
   * what is missing is installed with `install(missing)`.
   */
  lists?: { args: string[]; lines: readonly string[]; install(missing: string[]): string };
}

/** Every program a test may need. */
export const DEPENDENCIES = {
  soffice: {
    // The PDF copy code runs `soffice` by name, so only that name counts.
    commands: ["soffice"],
    versionArgs: ["--version"],
    timeoutMs: 60_000,
    attempts: 3,
    install: "apt-get install libreoffice-impress-nogui libreoffice-writer-nogui",
  },
  prlimit: {
    // LibreOffice runs under `prlimit` (its memory and CPU limits), by name.
    commands: ["prlimit"],
    versionArgs: ["--version"],
    timeoutMs: 10_000,
    attempts: 2,
    install: "apt-get install util-linux",
  },
  chromium: {
    commands: ["chromium", "chromium-browser", "google-chrome-stable", "google-chrome"],
    versionArgs: ["--version"],
    timeoutMs: 60_000,
    attempts: 3,
    install: "apt-get install chromium",
  },
  pdftotext: {
    commands: ["pdftotext"],
    versionArgs: ["-v"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install poppler-utils",
  },
  pdftoppm: {
    commands: ["pdftoppm"],
    versionArgs: ["-v"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install poppler-utils",
  },
  tesseract: {
    commands: ["tesseract"],
    versionArgs: ["--version"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install tesseract-ocr tesseract-ocr-all",
    // The Standard preset's default languages (the tests read scans in them) and page orientation.
    lists: {
      args: ["--list-langs"],
      lines: [...TESSERACT_DEFAULT_LANGUAGES, "osd"],
      install: (missing) =>
        `apt-get install ${missing.map((l) => `tesseract-ocr-${l.replace("_", "-")}`).join(" ")}`,
    },
  },
  postgres: {
    commands: ["postgres"],
    folders: ["/usr/lib/postgresql/*/bin"],
    versionArgs: ["--version"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install postgresql",
  },
  initdb: {
    // test/helpers/postgres.ts makes a throwaway cluster with it when SERGO_TEST_DATABASE_URL is unset.
    commands: ["initdb"],
    folders: ["/usr/lib/postgresql/*/bin"],
    versionArgs: ["--version"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install postgresql",
  },
  pg_ctl: {
    commands: ["pg_ctl"],
    folders: ["/usr/lib/postgresql/*/bin"],
    versionArgs: ["--version"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install postgresql",
  },
  python3: {
    // The official MCP Python SDK's clients run under it (`.ci/run` installs the pinned `mcp`).
    commands: ["python3"],
    versionArgs: ["--version"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install python3 python3-pip && python3 -m pip install mcp==2.3.0",
  },
  npx: {
    // Runs mcp-remote from npm, as the Claude Desktop snippet does.
    commands: ["npx"],
    versionArgs: ["--version"],
    timeoutMs: 30_000,
    attempts: 2,
    install: "apt-get install npm",
  },
  haproxy: {
    commands: ["haproxy"],
    folders: ["/usr/sbin", "/sbin"],
    versionArgs: ["-v"],
    timeoutMs: 20_000,
    attempts: 2,
    install: "apt-get install haproxy",
  },
} satisfies Record<string, Dependency>;

/** A program's name in `DEPENDENCIES`. */
export type DependencyName = keyof typeof DEPENDENCIES;

/** What a probe found. */
export type Probe =
  | { ok: true; name: DependencyName; path: string; version: string }
  | { ok: false; name: DependencyName; reason: string };

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function expandFolder(pattern: string): Promise<string[]> {
  const star = pattern.indexOf("*");
  if (star < 0) return [pattern];
  const parent = pattern.slice(0, star).replace(/\/$/, "");
  const rest = pattern.slice(star + 1);
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(parent)) names.push(entry.name);
  } catch {
    return [];
  }
  names.sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
  return names.map((name) => `${parent}/${name}${rest}`);
}

/** The path of the first of the entry's commands found, or null. */
export async function locate(
  name: DependencyName,
  dependency: Dependency = DEPENDENCIES[name],
): Promise<string | null> {
  const folders = (Deno.env.get("PATH") ?? "").split(":").filter((folder) => folder !== "");
  for (const pattern of dependency.folders ?? []) folders.push(...await expandFolder(pattern));
  for (const command of dependency.commands) {
    for (const folder of folders) {
      const path = `${folder}/${command}`;
      if (await isExecutable(path)) return path;
    }
  }
  return null;
}

/** Reads a child's pipe to the end; `cancel` lets go of it (a grandchild may hold it open). */
function readAll(stream: ReadableStream<Uint8Array>): { text: Promise<string>; cancel(): void } {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  const text = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
    } catch { /* cancelled */ }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((chunk) => [...chunk]))).trim();
  })();
  return { text, cancel: () => void reader.cancel().catch(() => {}) };
}

async function askVersion(
  path: string,
  dependency: Dependency,
): Promise<{ version: string } | { reason: string }> {
  const child = new Deno.Command(path, {
    args: dependency.versionArgs,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = readAll(child.stdout);
  const stderr = readAll(child.stderr);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) =>
    timer = setTimeout(() => resolve("timeout"), dependency.timeoutMs)
  );
  const answer = await Promise.race([Promise.all([child.status, stdout.text, stderr.text]), timedOut]);
  clearTimeout(timer);
  if (answer === "timeout") {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    stdout.cancel();
    stderr.cancel();
    await child.status;
    return { reason: `did not answer within ${dependency.timeoutMs / 1000} s` };
  }
  const [status, out, err] = answer;
  if (!status.success) return { reason: `ended with exit code ${status.code}` };
  return { version: (out || err).split("\n")[0] ?? "" };
}

/** What of the entry's `lists` the program lacks (empty when it has everything). */
async function missingData(path: string, dependency: Dependency): Promise<string[]> {
  if (!dependency.lists) return [];
  const output = await new Deno.Command(path, {
    args: dependency.lists.args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const listed = new Set(new TextDecoder().decode(output.stdout).split("\n").map((line) => line.trim()));
  return dependency.lists.lines.filter((line) => !listed.has(line));
}

/** Finds a program and asks it for its version, with the entry's tries and time. */
export async function probe(
  name: DependencyName,
  dependency: Dependency = DEPENDENCIES[name],
): Promise<Probe> {
  const path = await locate(name, dependency);
  if (path === null) {
    return {
      ok: false,
      name,
      reason: `${name} is not installed (looked for ${dependency.commands.join(", ")} on PATH` +
        `${dependency.folders ? ` and in ${dependency.folders.join(", ")}` : ""}): ${dependency.install}`,
    };
  }
  const reasons: string[] = [];
  for (let attempt = 1; attempt <= dependency.attempts; attempt++) {
    const answer = await askVersion(path, dependency);
    if ("version" in answer) {
      const missing = await missingData(path, dependency);
      if (missing.length > 0) {
        return {
          ok: false,
          name,
          reason: `${path} lacks ${missing.join(", ")} (${dependency.lists!.args.join(" ")}): ${
            dependency.lists!.install(missing)
          }`,
        };
      }
      return { ok: true, name, path, version: answer.version };
    }
    reasons.push(answer.reason);
  }
  return {
    ok: false,
    name,
    reason: `${path} ${dependency.versionArgs.join(" ")} failed ${dependency.attempts} times (${
      reasons.join("; ")
    })`,
  };
}

const probes = new Map<DependencyName, Promise<Probe>>();

/** The path of a program the calling test needs; throws (so the test fails) when it is missing or not answering. */
export async function needs(name: DependencyName): Promise<string> {
  let answer = probes.get(name);
  if (!answer) {
    answer = probe(name);
    probes.set(name, answer);
  }
  const found = await answer;
  if (!found.ok) throw new Error(`This test needs ${name}: ${found.reason}`);
  return found.path;
}

if (import.meta.main) {
  const located = Deno.args.includes("--located");
  // `--quiet` (before the tests run, from `deno task test`): only what is missing, then one line saying so.
  const quiet = Deno.args.includes("--quiet");
  const asked = Deno.args.filter((arg) => arg !== "--located" && arg !== "--quiet");
  const unknown = asked.filter((arg) => !(arg in DEPENDENCIES));
  if (unknown.length > 0) {
    console.error(
      `Unknown dependency: ${unknown.join(", ")} (known: ${Object.keys(DEPENDENCIES).join(", ")})`,
    );
    Deno.exit(2);
  }
  const names = (asked.length > 0 ? asked : Object.keys(DEPENDENCIES)) as DependencyName[];
  let missing = 0;
  for (const name of names) {
    if (located) {
      const path = await locate(name);
      if (path === null) missing++;
      console.log(`${name}: ${path ?? "missing"}`);
      continue;
    }
    const found = await probe(name);
    if (found.ok) {
      if (!quiet) console.log(`${name}: ${found.path} (${found.version})`);
    } else {
      missing++;
      console.error(`${name}: ${found.reason}`);
    }
  }
  if (quiet && missing > 0) {
    console.error(
      `The tests need ${missing} more program(s), above: install them (the README lists them) or run .ci/run.`,
    );
  }
  Deno.exit(missing > 0 ? 1 : 0);
}
