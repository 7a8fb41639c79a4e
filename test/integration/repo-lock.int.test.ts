// One worktree operation at a time per repository across runners (server/runner/repo-lock.ts):
// callers on one repository, by any path to it, take turns; other repositories do not wait;
// the lock is let go when the operation fails, and its connection goes back to the pool; a
// runner's own waiters take turns without holding its connections.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../server/db/pool";
import { withWorktreeLock } from "../../server/runner/repo-lock";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
/** Two pools: two runners. */
let runnerA: pg.Pool;
let runnerB: pg.Pool;
const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-repo-lock-"));
const repo = path.join(root, "repo");
const other = path.join(root, "other");
const viaLink = path.join(root, "link-to-repo");

beforeAll(async () => {
  db = await createTestDatabase();
  runnerA = createPool(db.url, 2);
  runnerB = createPool(db.url, 2);
  fs.mkdirSync(repo);
  fs.mkdirSync(other);
  fs.symlinkSync(repo, viaLink);
});
afterAll(async () => {
  await runnerA.end();
  await runnerB.end();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs an operation that logs when it starts and ends, taking `ms`. */
function operation(log: string[], name: string, ms: number): () => Promise<string> {
  return async () => {
    log.push(`${name} start`);
    await sleep(ms);
    log.push(`${name} end`);
    return name;
  };
}

describe("withWorktreeLock", () => {
  it("two runners on one repository take turns, whatever path each names it by", async () => {
    const log: string[] = [];
    const first = withWorktreeLock(runnerA, repo, operation(log, "a", 200));
    await sleep(50);
    const second = withWorktreeLock(runnerB, viaLink, operation(log, "b", 10));
    expect(await Promise.all([first, second])).toEqual(["a", "b"]);
    expect(log).toEqual(["a start", "a end", "b start", "b end"]);
  });

  it("operations on different repositories do not wait for each other", async () => {
    const log: string[] = [];
    const first = withWorktreeLock(runnerA, repo, operation(log, "a", 200));
    await sleep(50);
    await withWorktreeLock(runnerB, other, operation(log, "b", 10));
    expect(log).toEqual(["a start", "b start", "b end"]);
    await first;
  });

  it("a failed operation lets go of the lock and of its connection, and its error comes back", async () => {
    const boom = new Error("git worktree add failed");
    await expect(
      withWorktreeLock(runnerA, repo, async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await withWorktreeLock(runnerB, repo, async () => "next")).toBe("next");
    // Back in the pool, open for the next operation (not thrown away).
    expect(runnerA.totalCount - runnerA.idleCount).toBe(0);
    expect(runnerA.idleCount).toBeGreaterThan(0);
    const held = await db.pool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted");
    expect(held.rows[0].n).toBe(0);
  });

  it("a runner's callers waiting on one repository hold one of its connections, not one each", async () => {
    const small = createPool(db.url, 2);
    try {
      const log: string[] = [];
      const holder = withWorktreeLock(small, repo, operation(log, "a", 300));
      await sleep(50);
      const waiters = ["b", "c", "d", "e", "f"].map((name) => withWorktreeLock(small, repo, operation(log, name, 5)));
      await sleep(50);
      // Five waiting and one holding on a pool of two: a query still gets a connection at once.
      const { rows } = await small.query<{ waiting: number }>(
        "SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      expect(log).toEqual(["a start"]);
      expect(rows[0]!.waiting).toBe(0);
      expect(await Promise.all([holder, ...waiters])).toEqual(["a", "b", "c", "d", "e", "f"]);
      expect(log).toEqual(["a", "b", "c", "d", "e", "f"].flatMap((n) => [`${n} start`, `${n} end`]));
    } finally {
      await small.end();
    }
  });

  it("a runner's next caller goes on when the one before it failed", async () => {
    const failed = withWorktreeLock(runnerA, repo, async () => {
      await sleep(50);
      throw new Error("git worktree add failed");
    });
    const next = withWorktreeLock(runnerA, repo, async () => "next");
    await expect(failed).rejects.toThrow("git worktree add failed");
    expect(await next).toBe("next");
  });

  it("a repository path that does not exist still gets a lock of its own (git reports the path)", async () => {
    const missing = path.join(root, "gone");
    expect(await withWorktreeLock(runnerA, missing, async () => "ran")).toBe("ran");
  });

  it("leaves no listener behind on the pooled connection it borrowed, however often it is taken", async () => {
    const single = createPool(db.url, 1);
    const errorListeners = async () => {
      const client = await single.connect();
      try {
        return client.listenerCount("error");
      } finally {
        client.release();
      }
    };
    try {
      const before = await errorListeners();
      for (let i = 0; i < 12; i++) await withWorktreeLock(single, repo, async () => i);
      expect(await errorListeners()).toBe(before);
    } finally {
      await single.end();
    }
  });
});
