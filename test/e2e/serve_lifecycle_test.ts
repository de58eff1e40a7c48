import assert from "node:assert/strict";
import { tempDir } from "../helpers/temp.ts";

function serve(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--allow-sys",
      "--allow-ffi",
      "--allow-run=soffice,libreoffice,deno",
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

Deno.test("serve: /healthz answers with version and log head; SIGTERM stops it cleanly", async () => {
  await using dir = await tempDir();
  const child = serve(["--data", dir.path, "--port", "0"]);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/at (http:\/\/\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const url = /at (http:\/\/\S+)/.exec(out)![1]!;
  const health = await (await fetch(`${url}/healthz`)).json();
  assert.equal(health.ok, true);
  assert.match(health.version, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(Object.keys(health.log), ["position", "hash"]);
  child.kill("SIGTERM");
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const status = await child.status;
  await child.stderr.cancel();
  assert.equal(status.code, 0);
  assert.match(out, /Stopped cleanly\./);
});

Deno.test("serve: a bad setting stops start-up with one clear line", async () => {
  await using dir = await tempDir();
  for (
    const [args, message] of [
      [["--port", "http"], /^Port must be a whole number, got "http"$/],
      [["--port", "70000"], /^Port must be between 0 and 65535, got 70000$/],
      [["--cert", "x.pem"], /^Give both --cert and --key for https, or neither$/],
    ] as const
  ) {
    const child = serve(["--data", dir.path, ...args]);
    const output = await child.output();
    assert.equal(output.code, 2);
    const stderr = new TextDecoder().decode(output.stderr).trim();
    assert.equal(stderr.split("\n").length, 1, stderr);
    assert.match(stderr, message);
  }
});
