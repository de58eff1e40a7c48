/**
 * Tesseract runs inside limits: each run the transcriber starts carries an
 * address-space limit (the memory setting), a CPU-time limit (the timeout),
 * a file-size limit and a limit on open files, set by `prlimit` before
 * Tesseract starts. The test reads the limits of the real `tesseract`
 * processes this test process starts, from `/proc`, while they run.
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

/** The `/proc/<pid>/limits` lines of this process's `tesseract` children running now. */
function tesseractChildren(): Map<number, string> {
  const found = new Map<number, string>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      // pid (comm) state ppid …: comm may hold spaces, so read past its closing parenthesis.
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm !== "tesseract" || ppid !== Deno.pid) continue;
      found.set(Number(entry.name), Deno.readTextFileSync(`/proc/${entry.name}/limits`));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
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
  const seen = new Map<number, string>();
  const watch = setInterval(() => {
    for (const [pid, limits] of tesseractChildren()) seen.set(pid, limits);
  }, 10);
  try {
    await tesseract.transcribe({ bytes: page(600, 800), format: "pgm", dpi: 300 }, {});
  } finally {
    clearInterval(watch);
  }
  assert.ok(seen.size >= 1, "a tesseract process was seen running");
  for (const [pid, limits] of seen) {
    assert.equal(limit(limits, "Max address space"), String(900 * 1024 * 1024), `${pid}: memory`);
    assert.equal(limit(limits, "Max cpu time"), "61", `${pid}: CPU seconds, the timeout's and one`);
    assert.equal(limit(limits, "Max file size"), String(256 * 1024 * 1024), `${pid}: file size`);
    assert.equal(limit(limits, "Max open files"), "64", `${pid}: open files`);
  }
});
