/**
 * Specification of the dictionaries' subprocess as an operator sees it: `serve` starts it once it
 * listens, and a server stopped before it finished leaves no process behind (the next start reads them
 * again; before, the subprocess went on alone for seconds of CPU, one more for every such start).
 */
import assert from "node:assert/strict";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { readUntil, waitFor } from "../helpers/wait.ts";

/** The processes whose command line holds both words (from `ps`, as the tests' permissions cannot read /proc whole). */
function processesWith(a: string, b: string): number[] {
  const output = new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped", stderr: "null" })
    .outputSync();
  const found: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const match = line.match(/^\s*(\d+)\s+(.*)$/);
    if (match && match[2]!.includes(a) && match[2]!.includes(b)) found.push(Number(match[1]));
  }
  return found;
}

Deno.test("a server stopped while its dictionaries are being read leaves no subprocess behind", async () => {
  await using data = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      data.path,
      "--port",
      "0",
    ],
    env: { NO_COLOR: "1", SERGO_DICTIONARIES: "/usr/share/dictd" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    await readUntil(stdout, (text) => / at https?:\/\//.test(text), {
      ms: 120_000,
      what: "serve printing its address",
    });
    const reading = await waitFor(() => {
      const found = processesWith("_build_dictionaries_child", data.path);
      return found.length > 0 ? found : null;
    }, { ms: 60_000, what: "the dictionaries' subprocess starting" });
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    await waitFor(
      () => reading.every((pid) => !processesWith("_build_dictionaries_child", data.path).includes(pid)),
      {
        ms: 10_000,
        what: "the dictionaries' subprocess ending with the server",
      },
    );
  } finally {
    await stdout.cancel().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch {
      // Stopped already.
    }
    await child.status;
    // A failing run leaves none behind either.
    for (const pid of processesWith("_build_dictionaries_child", data.path)) Deno.kill(pid, "SIGKILL");
  }
});
