/**
 * More apps on one data directory, in the test's process: each stands for
 * another process beside the first (the CLI beside `serve`, another replica).
 * They share the log and the projections, not the first app's one-at-a-time
 * turns, so their commands can pass a check at the same moment, as two
 * processes' do.
 *
 * @module
 */
import { openApp, type SergoApp } from "../../src/app.ts";

/** `count` apps opened on `dir`, closed when disposed. */
export async function appsBeside(
  dir: string,
  count: number,
): Promise<{ apps: SergoApp[] } & AsyncDisposable> {
  const apps: SergoApp[] = [];
  for (let i = 0; i < count; i++) apps.push(await openApp(dir));
  return {
    apps,
    async [Symbol.asyncDispose]() {
      for (const app of apps) await app.close().catch(() => {});
    },
  };
}
