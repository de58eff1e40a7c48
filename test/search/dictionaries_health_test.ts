/**
 * Specifications of the dictionaries' settings as an operator sees them:
 * `/healthz` says which language pairs cross-language search translates
 * through, read from `SERGO_DICTIONARIES` (Debian's `/usr/share/dictd` by
 * default), or that they are off, or why they could not be read.
 */
import assert from "node:assert/strict";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";

/** The server's resident memory (`VmRSS`) and its peak (`VmHWM`) in MB, read from /proc through `sh`. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const output = await new Deno.Command("sh", { args: ["-c", `cat /proc/${pid}/status`] }).output();
  const status = new TextDecoder().decode(output.stdout);
  const mb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+) kB`))?.[1]) / 1024;
  return { rss: mb("VmRSS"), peak: mb("VmHWM") };
}

/** Runs `main.ts serve` with `env`; asks /healthz until `done` holds of its dictionaries, within the deadline. */
async function dictionariesHealth(
  env: Record<string, string>,
  done: (dictionaries: Record<string, unknown>) => boolean,
  data?: string,
): Promise<Record<string, unknown>> {
  return (await serveUntil(env, done, data)).dictionaries;
}

/** {@linkcode dictionariesHealth}, with the server's memory once `done` held (in a data folder given or new). */
async function serveUntil(
  env: Record<string, string>,
  done: (dictionaries: Record<string, unknown>) => boolean,
  data?: string,
): Promise<{ dictionaries: Record<string, unknown>; memory: { rss: number; peak: number } }> {
  await using temporary = await tempDir();
  const dir = { path: data ?? temporary.path };
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dir.path,
      "--port",
      "0",
    ],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!/ at (https?:\/\/\S+)/.test(out)) {
      const { value, done } = await reader.read();
      assert.ok(!done, `serve stopped: ${out}`);
      out += value;
    }
    reader.releaseLock();
    const url = out.match(/ at (https?:\/\/\S+)/)![1]!;
    // Reading the dictionaries takes seconds (minutes on a busy machine): the server answers meanwhile.
    const deadline = Date.now() + 240_000;
    for (;;) {
      const health = await (await fetch(`${url}/healthz`)).json() as {
        dictionaries: Record<string, unknown>;
      };
      if (done(health.dictionaries)) {
        return { dictionaries: health.dictionaries, memory: await memoryOf(child.pid) };
      }
      assert.ok(
        Date.now() < deadline,
        `/healthz still says ${JSON.stringify(health.dictionaries)} after 240 s`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
}

Deno.test({
  name: "/healthz says which language pairs search translates through, or that the dictionaries are off",
  sanitizeResources: false,
  fn: async () => {
    // A folder holding one FreeDict dictionary (copied from Debian's package): English→French is on.
    await using dictd = await tempDir();
    for (const suffix of [".index", ".dict.dz"]) {
      await Deno.copyFile(
        `/usr/share/dictd/freedict-eng-fra${suffix}`,
        `${dictd.path}/freedict-eng-fra${suffix}`,
      );
    }
    const on = await dictionariesHealth({ SERGO_DICTIONARIES: dictd.path }, (d) => d.on === true);
    const pairs = on.pairs as Array<{ pair: string; source: string; words: number }>;
    const french = pairs.find((pair) => pair.pair === "en→fr");
    assert.ok(french, `en→fr is on: ${JSON.stringify(pairs)}`);
    // FreeDict's dictionary first; Apertium's pivot through Esperanto after it where its packages are installed
    // (read from /usr/share/apertium whatever the folder).
    const freedict = `${dictd.path}/freedict-eng-fra`;
    assert.ok(
      french.source === freedict || french.source.startsWith(`${freedict} + /usr/share/apertium/`),
      french.source,
    );
    assert.ok(french.words > 1000, `the English→French dictionary has its words: ${french.words}`);
    assert.ok(!pairs.some((pair) => pair.pair === "en→de"), "no pair from a dictionary that is not there");

    const off = await dictionariesHealth({ SERGO_DICTIONARIES: "off" }, () => true);
    assert.deepEqual(off, { on: false, detail: "off (SERGO_DICTIONARIES=off)" });
  },
});

Deno.test({
  name:
    "the dictionaries cost the serving process less than 60 MB of memory, and a restart opens them as kept without reading them again",
  sanitizeResources: false,
  fn: async () => {
    await using data = await tempDir();
    const off = await serveUntil({ SERGO_DICTIONARIES: "off" }, () => true);
    // Debian's dictionaries as installed (see .ci/run): all of FreeDict's pairs and CC-CEDICT.
    const on = await serveUntil({ SERGO_DICTIONARIES: "/usr/share/dictd" }, (d) => d.on === true, data.path);
    const pairs = (on.dictionaries.pairs as Array<{ pair: string }>).map((pair) => pair.pair);
    for (const pair of ["en→de", "en→ja", "en→ru", "en→ar", "en→zh"]) {
      assert.ok(pairs.includes(pair), `${pair} is on: ${pairs}`);
    }
    const grown = on.memory.peak - off.memory.peak;
    assert.ok(
      grown < 60,
      `the server's peak RSS with the dictionaries on is under 60 MB above off: ${
        on.memory.peak.toFixed(0)
      } MB against ${off.memory.peak.toFixed(0)} MB`,
    );
    const kept = await Deno.stat(`${data.path}/dictionaries.sqlite`);
    const again = await serveUntil(
      { SERGO_DICTIONARIES: "/usr/share/dictd" },
      (d) => d.on === true,
      data.path,
    );
    assert.deepEqual(again.dictionaries, on.dictionaries, "the restarted server has the same pairs on");
    const reopened = await Deno.stat(`${data.path}/dictionaries.sqlite`);
    assert.equal(
      reopened.mtime?.getTime(),
      kept.mtime?.getTime(),
      "the kept dictionaries are not made again",
    );
  },
});

Deno.test({
  name: "dictionaries that cannot be read: /healthz says why, and the server serves on as without them",
  sanitizeResources: false,
  fn: async () => {
    await using data = await tempDir();
    await using dictd = await tempDir();
    for (const suffix of [".index", ".dict.dz"]) {
      await Deno.copyFile(
        `/usr/share/dictd/freedict-eng-fra${suffix}`,
        `${dictd.path}/freedict-eng-fra${suffix}`,
      );
    }
    // The file the dictionaries are kept in is a folder: they cannot be written there, nor read from it.
    await Deno.mkdir(`${data.path}/dictionaries.sqlite/in-the-way`, { recursive: true });
    const health = await dictionariesHealth(
      { SERGO_DICTIONARIES: dictd.path },
      (d) => typeof d.detail === "string" && !d.detail.includes("(yet)"),
      data.path,
    );
    assert.equal(health.on, false);
    assert.match(
      String(health.detail),
      new RegExp(`^none read from ${dictd.path}\\. They could not be read: \\S.*\\.$`),
    );
    assert.equal(String(health.detail).split("\n").length, 1, "one line");
    const left = [...Deno.readDirSync(data.path)].map((entry) => entry.name).filter((name) =>
      name.endsWith(".tmp")
    );
    assert.deepEqual(left, [], "the half-made dictionary file is removed");
  },
});
