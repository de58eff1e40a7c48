/**
 * Tesseract runs inside limits: each run the transcriber starts carries an
 * address-space limit (the memory setting), a CPU-time limit (the timeout),
 * a file-size limit and a limit on open files, set by `prlimit` before
 * Tesseract starts. The test reads the limits of the real `tesseract`
 * processes this test process starts, from `/proc` (through a shell loop:
 * the test task may run programs, not read `/proc`), while they run.
 */
import assert from "node:assert/strict";
import { createTesseract, probeTesseract } from "../../src/processing/transcribers/tesseract.ts";
import { needs } from "../helpers/dependencies.ts";

/** A grey page with dark word-sized blocks: enough for Tesseract to take a moment on it. */
function page(width: number, height: number): Uint8Array {
  const pixels = new Uint8Array(width * height).fill(255);
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 60; i++) {
    const x = Math.floor(next() * (width - 40)), y = Math.floor(next() * (height - 20));
    for (let row = y; row < y + 12; row++) pixels.fill(0, row * width + x, row * width + x + 30);
  }
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + pixels.length);
  out.set(header);
  out.set(pixels, header.length);
  return out;
}

/**
 * Watches this process's `tesseract` children while they run: a shell loop
 * (reading `/proc` needs no more than running it) prints each one's
 * `/proc/<pid>/limits` every 10 ms. Returns what it saw, by pid, once stopped.
 */
function watchTesseract(): { stop(): Promise<Map<number, string>> } {
  const script = `while :; do for p in $(pgrep -P ${Deno.pid} -x tesseract); do ` +
    `echo "pid $p"; cat /proc/$p/limits 2>/dev/null; echo end; done; sleep 0.01; done`;
  const child = new Deno.Command("sh", { args: ["-c", script], stdout: "piped", stderr: "null" }).spawn();
  const output = new Response(child.stdout).text();
  return {
    async stop() {
      child.kill("SIGKILL");
      await child.status;
      const seen = new Map<number, string>();
      for (const block of (await output).split("end\n")) {
        const match = /^pid (\d+)\n([\s\S]*Max open files[^\n]*\n[\s\S]*)$/.exec(block);
        if (match) seen.set(Number(match[1]), match[2]!);
      }
      return seen;
    },
  };
}

function limit(limits: string, name: string): string {
  const line = limits.split("\n").find((l) => l.startsWith(name));
  assert.ok(line, `no "${name}" in ${limits}`);
  return line.slice(name.length).trim().split(/\s+/)[0]!;
}

Deno.test("every Tesseract run carries the memory, CPU-time, file-size and open-file limits", async () => {
  await needs("tesseract");
  await needs("prlimit");
  const install = await probeTesseract();
  assert.ok(install?.prlimit, "Tesseract and prlimit are installed");
  const tesseract = createTesseract(install, {
    languages: ["eng"],
    memoryMb: 900,
    timeoutMs: 60_000,
    concurrency: 1,
  });
  const watch = watchTesseract();
  let seen: Map<number, string>;
  try {
    await tesseract.transcribe({ bytes: page(600, 800), format: "pgm", dpi: 300 }, {});
  } finally {
    seen = await watch.stop();
  }
  assert.ok(seen.size >= 1, "a tesseract process was seen running");
  for (const [pid, limits] of seen) {
    assert.equal(limit(limits, "Max address space"), String(900 * 1024 * 1024), `${pid}: memory`);
    assert.equal(limit(limits, "Max cpu time"), "61", `${pid}: CPU seconds, the timeout's and one`);
    assert.equal(limit(limits, "Max file size"), String(256 * 1024 * 1024), `${pid}: file size`);
    assert.equal(limit(limits, "Max open files"), "64", `${pid}: open files`);
  }
});
