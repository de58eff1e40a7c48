import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

function serve(dataDir: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dataDir,
      "--port",
      "0",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

async function urlOf(child: Deno.ChildProcess): Promise<string> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/at (https?:\/\/\S+)/.test(out)) {
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
    if (done) throw new Error(`serve ended before it listened: ${out}`);
    out += value;
  }
  reader.releaseLock();
  return /at (https?:\/\/\S+)/.exec(out)![1]!;
}

Deno.test("replay refuses while serve runs on the data directory, and runs once serve is SIGKILLed", async () => {
  await using dir = await tempDir("sergo-replay-lock-");
  const data = join(dir.path, "data");
  const person = await runCli([
    "person",
    "add",
    "--data",
    data,
    "--name",
    "Ava Bennett",
    "--email",
    "ava@example.com",
  ]);
  assert.equal(person.code, 0, person.stderr);
  const child = serve(data);
  try {
    const url = await urlOf(child);
    const projections = await Deno.stat(join(data, "projections.db"));
    const refused = await runCli(["replay", "--data", data]);
    assert.equal(refused.code, 2);
    assert.equal(
      refused.stderr,
      `Cannot replay "${data}" while serve runs on it: replay swaps the projections file, so stop serve first\n`,
    );
    assert.equal(refused.stdout, "");
    const after = await Deno.stat(join(data, "projections.db"));
    assert.equal(after.ino, projections.ino, "the projections file the server uses was left in place");
    const health = await fetch(`${url}/healthz`);
    assert.equal((await health.json()).ok, true);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel();
  }
  // The lock file is still there, but the kernel let go of the lock with the process.
  assert.ok((await Deno.stat(join(data, "serve.lock"))).isFile);
  const replay = await runCli(["replay", "--data", data]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.match(replay.stdout.trim(), /^[0-9a-f]{64}$/);
});

Deno.test("serve refuses to start while replay holds the data directory", async () => {
  await using dir = await tempDir("sergo-replay-lock-");
  const data = join(dir.path, "data");
  await Deno.mkdir(data);
  // What a running replay holds: the lock file, locked alone.
  using lock = await Deno.open(join(data, "serve.lock"), { read: true, write: true, create: true });
  await lock.lock(true);
  const output = await serve(data).output();
  assert.equal(output.code, 2);
  assert.equal(
    new TextDecoder().decode(output.stderr),
    `Cannot serve "${data}" while replay rebuilds its projections: wait for replay to finish, then start serve\n`,
  );
});
