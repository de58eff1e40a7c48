/**
 * One at a time per key, within this process: for a check followed by a write
 * that two requests must not both pass (a folder made twice, the same bytes
 * recorded twice in one folder, one key too many). The check reads the
 * projections and the write appends to the log; run one after the other,
 * the second request's check sees the first one's write and is refused
 * before anything is appended. (Other processes, the CLI beside `serve` or
 * another replica, are not held: their commands still pass a check at the
 * same moment, and the later one in the log takes itself back.)
 *
 * @module
 */

type Tails = Map<string, Promise<void>>;

const tails: Tails = new Map();
const tailsOf = new WeakMap<object, Tails>();

async function inTurn<T>(queue: Tails, key: string, fn: () => Promise<T>): Promise<T> {
  const before = queue.get(key) ?? Promise.resolve();
  const { promise: done, resolve: release } = Promise.withResolvers<void>();
  const mine = before.then(() => done);
  queue.set(key, mine);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (queue.get(key) === mine) queue.delete(key);
  }
}

/** Runs `fn` after every earlier call with the same key has finished. */
export async function oneAtATime<T>(key: string, fn: () => Promise<T>): Promise<T> {
  return await inTurn(tails, key, fn);
}

/**
 * Runs `fn` after every earlier call with the same owner (an open app: one
 * per process, or several in a test, each standing for a process) and key
 * has finished.
 */
export async function oneAtATimeIn<T>(owner: object, key: string, fn: () => Promise<T>): Promise<T> {
  let queue = tailsOf.get(owner);
  if (!queue) tailsOf.set(owner, queue = new Map());
  return await inTurn(queue, key, fn);
}
