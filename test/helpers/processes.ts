/**
 * Test helper: the machine's processes, read from `/proc` through `sh` (the
 * test task may run programs; reading `/proc` itself needs every permission).
 *
 * @module
 */

/** One process: its id, its command name and its parent's id. */
export interface ProcessInfo {
  pid: number;
  name: string;
  parent: number;
}

/** Every process running now. */
export function processes(): ProcessInfo[] {
  const out = new Deno.Command("sh", {
    args: ["-c", 'for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null && echo; done'],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const found: ProcessInfo[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^(\d+) \((.*)\) \S+ (\d+)/.exec(line);
    if (m) found.push({ pid: Number(m[1]), name: m[2]!, parent: Number(m[3]) });
  }
  return found;
}

/** Processes whose parent is `parent` and whose name is one of `names`. */
export function childrenNamed(parent: number, names: readonly string[]): number[] {
  return processes().filter((p) => p.parent === parent && names.includes(p.name)).map((p) => p.pid);
}

/** Whether process `pid` is still running. */
export function alive(pid: number): boolean {
  return processes().some((p) => p.pid === pid);
}

/** Process `pid`'s arguments (read through `sh`, as above); empty once it has ended, or before it has exec'd. */
export function commandLine(pid: number): string[] {
  const out = new Deno.Command("sh", {
    args: ["-c", `cat /proc/${Math.trunc(pid)}/cmdline 2>/dev/null`],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\0").filter((arg) => arg !== "");
}
