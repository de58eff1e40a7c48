import assert from "node:assert/strict";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { makeLocalhostCertificate } from "../helpers/certificates.ts";
import { within } from "../helpers/wait.ts";

function serve(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, new URL("../../main.ts", import.meta.url).pathname, "serve", ...args],
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
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
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
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
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

Deno.test("serve --cert --key serves https, as clients that take only https URLs need", async () => {
  await using dir = await tempDir();
  const { ca, cert, key } = await makeLocalhostCertificate(dir.path);
  const child = serve(["--data", `${dir.path}/data`, "--port", "0", "--cert", cert, "--key", key]);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/at (https:\/\/\S+)/.test(out)) {
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
    if (done) break;
    out += value;
  }
  const url = /at (https:\/\/\S+)/.exec(out)![1]!.replace("127.0.0.1", "localhost");
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
  try {
    const response = await fetch(`${url}/healthz`, { client });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).ok, true);
  } finally {
    client.close();
    child.kill("SIGTERM");
    await child.status;
    await reader.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
  }
});
