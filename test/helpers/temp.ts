/**
 * Test helpers: temporary data directories and an app over them.
 *
 * @module
 */
import { openApp, type SergoApp } from "../../src/app.ts";

/** A fresh temporary directory, removed by the returned disposer. */
export async function tempDir(prefix = "sergo-test-"): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/** An app over a fresh data directory, closed and removed when disposed. */
export async function tempApp(
  options: { now?: () => Date } = {},
): Promise<{ app: SergoApp; dir: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-app-" });
  const app = await openApp(dir, options);
  return {
    app,
    dir,
    async [Symbol.asyncDispose]() {
      await app.close().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The permissions of `deno task sergo` and `deno task serve`. */
export const TASK_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-sys",
  "--allow-ffi",
  "--allow-run=soffice,libreoffice,prlimit,tesseract,deno",
];

/** Runs the CLI in a subprocess with the project's task permissions; returns exit code and output. */
export async function runCli(
  args: string[],
  options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, new URL("../../main.ts", import.meta.url).pathname, ...args],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...(options.env ?? {}) },
  });
  const child = command.spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}
