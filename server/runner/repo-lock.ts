// One worktree operation at a time per repository, across every runner that shares the
// database: `git worktree add` prunes stale registrations first, and a prune running beside
// another runner's half-finished `add` removed that worktree ("could not open
// .git/worktrees/<id>/locked"). A PostgreSQL advisory lock (session level, on a connection of
// its own for the duration) is the platform's tool for exactly this. A runner's own callers
// take turns in the process first, so that only one of its connections waits on the lock: a
// bake-off's six new worktrees waiting there at once held six of the pool's connections, and
// the runner's claims, heartbeats and results waited for one.
import fs from "node:fs";
import type { Db } from "../db/pool";

/** Per pool (a runner), per repository: the end of the queue of its callers. */
const queues = new WeakMap<Db, Map<string, Promise<void>>>();

/** Runs `fn` holding the advisory lock of the repository at `repoPath` (by its real path). */
export async function withWorktreeLock<T>(pool: Db, repoPath: string, fn: () => Promise<T>): Promise<T> {
  let key: string;
  try {
    key = fs.realpathSync(repoPath);
  } catch {
    key = repoPath; // missing: let the git operation report it
  }
  let queue = queues.get(pool);
  if (!queue) queues.set(pool, (queue = new Map()));
  const before = queue.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const end = before.then(() => mine);
  queue.set(key, end);
  await before;
  try {
    return await underAdvisoryLock(pool, key, fn);
  } finally {
    done();
    if (queue.get(key) === end) queue.delete(key);
  }
}

async function underAdvisoryLock<T>(pool: Db, key: string, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection that dies while held emits 'error': without a listener it would crash the runner.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on("error", onError);
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 7))", [`catcafe-worktrees:${key}`]);
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 7))", [`catcafe-worktrees:${key}`]).catch(() => {});
    }
  } finally {
    // The client goes back to the pool: the listener must not stay with it (one more per lock).
    client.off("error", onError);
    client.release(broken);
  }
}
