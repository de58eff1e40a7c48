/**
 * `deno task cluster` through its real entry point, with the task's own
 * permissions from deno.json: a bad argument stops it with one line (exit 2);
 * with one replica it starts PostgreSQL, the replica and HAProxy, prints the
 * address and the first-run setup address (both answer through HAProxy), and
 * Ctrl-C (SIGINT) stops everything: exit 0, and no PostgreSQL, replica or
 * HAProxy left running.
 */
import assert from "node:assert/strict";
import { taskFlags } from "../../bench/startup.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function cluster(args: string[], flags: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "bench/cluster.ts", ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

/** Whether a process with this id is running (a zombie, ended but not reaped by its new parent, is not). */
async function running(pid: number): Promise<boolean> {
  const ps = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)], stdout: "piped" })
    .output();
  const state = new TextDecoder().decode(ps.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

Deno.test("deno task cluster: a bad argument is one line; one replica starts behind HAProxy and Ctrl-C stops everything", async () => {
  const flags = await taskFlags("cluster");
  assert.ok(flags.includes("--allow-net=127.0.0.1"), flags.join(" "));
  const bad = await cluster(["--replicas", "0"], flags).output();
  assert.equal(bad.code, 2);
  assert.equal(
    new TextDecoder().decode(bad.stderr),
    '--replicas must be a whole number from 1 to 16, got "0"\n',
  );

  const child = cluster(["--replicas", "1", "--port", "0"], flags);
  let output = "";
  const decoder = new TextDecoder();
  const read = (async () => {
    for await (const chunk of child.stdout) output += decoder.decode(chunk, { stream: true });
  })();
  const errors = new Response(child.stderr).text();
  const since = Date.now();
  while (!/^Ctrl-C stops everything\.$/m.test(output)) {
    assert.ok(
      Date.now() - since < 120_000,
      `not started within 120 s:\n${output}\n${await Promise.race([errors, ""])}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const address = output.match(/^Sergo is serving at (http:\/\/127\.0\.0\.1:\d+) \(HAProxy/m)?.[1];
  assert.ok(address, output);
  const setup = output.match(/^First run: open (\S+) to create the first person/m)?.[1];
  assert.ok(setup?.startsWith(`${address}/setup?token=`), output);
  const health = await fetch(`${address}/healthz`);
  assert.equal(health.status, 200);
  assert.equal((await health.json()).ok, true);
  // The setup page through HAProxy, from the replica that printed the token, every time.
  for (let i = 0; i < 3; i++) {
    const page = await fetch(setup!);
    await page.body?.cancel();
    assert.equal(page.status, 200);
  }
  const pgPort = output.match(/^PostgreSQL: 127\.0\.0\.1:(\d+)\/sergo$/m)?.[1];
  const replica = output.match(/^Replica 1: (http:\/\/127\.0\.0\.1:\d+) /m)?.[1];
  assert.ok(pgPort && replica, output);
  // The postmaster: the one process whose command line has the cluster's port.
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid,args"], stdout: "piped" }).output();
  const pids = new TextDecoder().decode(ps.stdout).split("\n")
    .filter((line) => line.includes(`postgres -D`) && line.includes(`-p ${pgPort} `))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
  assert.equal(pids.length, 1, "the cluster's postgres is running");

  child.kill("SIGINT");
  const status = await child.status;
  await read;
  assert.equal(status.code, 0, `${output}\n${await errors}`);
  assert.match(output, /^Stopped\.$/m);
  for (const pid of pids) assert.equal(await running(pid), false, `process ${pid} still runs`);
  for (const url of [address, replica]) {
    const left = await fetch(`${url}/healthz`).then(() => "answered", () => "refused");
    assert.equal(left, "refused", `${url} still listens`);
  }
});
