/**
 * playwright-core, loaded so that it runs under the test task's explicit
 * permissions: at load time it asks whether it runs under WSL by looking at
 * `/proc/sys/fs/binfmt_misc/WSLInterop`, which Deno only lets `--allow-all`
 * read. That one question is answered "no" while the module loads.
 *
 * @module
 */
import fs from "node:fs";

type Playwright = typeof import("playwright-core");

/** Loads playwright-core. */
export async function loadPlaywright(): Promise<Playwright> {
  const existsSync = fs.existsSync;
  fs.existsSync =
    ((path: fs.PathLike) =>
      String(path).startsWith("/proc/sys/fs/binfmt_misc/")
        ? false
        : existsSync(path)) as typeof fs.existsSync;
  try {
    return await import("playwright-core");
  } finally {
    fs.existsSync = existsSync;
  }
}
