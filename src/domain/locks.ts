/**
 * One at a time per key, within this process: for a check followed by a write
 * that two requests must not both pass (a folder made twice, the same bytes
 * recorded twice in one folder).
 *
 * @module
 */

const tails = new Map<string, Promise<void>>();

/** Runs `fn` after every earlier call with the same key has finished. */
export async function oneAtATime<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const { promise: done, resolve: release } = Promise.withResolvers<void>();
  const mine = before.then(() => done);
  tails.set(key, mine);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === mine) tails.delete(key);
  }
}
