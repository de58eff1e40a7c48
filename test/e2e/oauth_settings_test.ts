/**
 * The OAuth settings through the real entry point: a bad value stops
 * start-up with one line; `SERGO_OAUTH=off` serves no discovery and names no
 * resource metadata in a 401; on (the default), it does.
 */
import assert from "node:assert/strict";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { within } from "../helpers/wait.ts";

function serve(dir: string, env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dir,
      "--port",
      "0",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
}

Deno.test("serve: SERGO_OAUTH and SERGO_OAUTH_LOOPBACK_CLIENTS take on or off, with one clear line otherwise", async () => {
  await using dir = await tempDir();
  for (
    const [env, message] of [
      [{ SERGO_OAUTH: "yes" }, /^SERGO_OAUTH must be "on" or "off", got "yes"$/],
      [
        { SERGO_OAUTH_LOOPBACK_CLIENTS: "1" },
        /^SERGO_OAUTH_LOOPBACK_CLIENTS must be "on" or "off", got "1"$/,
      ],
    ] as const
  ) {
    const output = await serve(dir.path, env).output();
    assert.equal(output.code, 2);
    const stderr = new TextDecoder().decode(output.stderr).trim();
    assert.equal(stderr.split("\n").length, 1, stderr);
    assert.match(stderr, message);
  }
});

Deno.test("serve: OAuth discovery is on by default and off with SERGO_OAUTH=off", async () => {
  for (const [setting, on] of [[{}, true], [{ SERGO_OAUTH: "off" }, false]] as const) {
    await using dir = await tempDir();
    const child = serve(dir.path, setting);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!/at (http:\/\/\S+)/.test(out)) {
      const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
      if (done) break;
      out += value;
    }
    const url = /at (http:\/\/\S+)/.exec(out)![1]!;
    try {
      const metadata = await fetch(`${url}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(metadata.status, on ? 200 : 404);
      await metadata.body?.cancel();
      const challenge = await fetch(`${url}/mcp`, { method: "POST", body: "{}" });
      assert.equal(challenge.status, 401);
      assert.equal(challenge.headers.get("www-authenticate")?.includes("resource_metadata="), on);
      await challenge.body?.cancel();
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel();
      await child.stderr.cancel();
    }
  }
});
