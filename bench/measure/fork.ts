// fork_ms: store.fork of a 10-event parent and of a 100,000-event parent (built with batch
// appends), forking at the parent's head, taken in turn; the median of several forks each.
// fork_workspace_ms: what a person waits for when forking a finished session to work on:
// the fork (sessions.fork, the domain call: the parent read, the position checked, the
// SessionForked appended) and the fork's git worktree at the commit recorded there, ready.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startTask } from "../../server/tasks/commands";
import { forkSession } from "../../server/tasks/fork";
import { foldTask } from "../../server/task-engine";
import { createWorkspace } from "../../server/workspaces";
import type { EventStore } from "../../server/events/store";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions, messageEvents, uniqueStreamId, type StreamCursor } from "../lib/fixtures";
import { median, percentiles, round } from "../lib/percentiles";
import { timedRunner } from "../lib/timed-runner";
import { instantReviewLoopProject } from "./review-loop";

const PROJECT_ID = "bench-fork-workspace";

const FORKS = 41;
const WORKSPACE_FORKS = 20;
const BUILD_BATCH = 1_000;

async function grow(store: EventStore, stream: StreamCursor, total: number): Promise<void> {
  while (stream.version < total) {
    const n = Math.min(BUILD_BATCH, total - stream.version);
    const r = await store.append(stream.id, stream.version, messageEvents(n, "fork parent"), { actor: benchActor });
    stream.version = r.version;
  }
}

async function forkOnce(store: EventStore, parent: StreamCursor, i: number): Promise<number> {
  const childId = uniqueStreamId("fork-child");
  const t0 = performance.now();
  await store.fork({
    parentId: parent.id,
    atVersion: parent.version,
    childId,
    event: {
      type: "SessionForked",
      data: { parentId: parent.id, atVersion: parent.version, reason: "manual", title: `fork ${i}`, workflow: "bench", state: "open" },
    },
    metadata: { actor: benchActor },
  });
  return performance.now() - t0;
}

/**
 * Forks of the two parents taken in turn (small, big, small, …), so a drift of the machine
 * over the run (autovacuum after the build, a checkpoint) weighs on both alike.
 */
async function forkTimes(store: EventStore, small: StreamCursor, big: StreamCursor): Promise<{ small: number[]; big: number[] }> {
  const times = { small: [] as number[], big: [] as number[] };
  for (let i = 0; i <= FORKS; i++) {
    const a = await forkOnce(store, small, i);
    const b = await forkOnce(store, big, i);
    if (i === 0) continue; // the first forks warm the statements
    times.small.push(a);
    times.big.push(b);
  }
  return times;
}

export const fork: Measurement = {
  name: "fork",
  keys: ["fork_ms"],
  async run(ctx) {
    const [small, big] = await createSessions(ctx.store, 2, "fork-parent");
    await grow(ctx.store, small!, 10);
    const t0 = performance.now();
    await grow(ctx.store, big!, 100_000);
    const buildMs = Math.round(performance.now() - t0);
    ctx.log(`fork: built a 100,000-event parent in ${buildMs} ms`);
    // The build's dead tuples and statistics settled first, as they are on a database in use.
    await ctx.pool.query("VACUUM (ANALYZE) events, streams");
    const { small: smallTimes, big: bigTimes } = await forkTimes(ctx.store, small!, big!);
    ctx.note("fork", {
      forks_each: FORKS,
      build_100000_ms: buildMs,
      build_events_per_s: Math.round((100_000 * 1000) / buildMs),
      parent_10_all: smallTimes.map((t) => round(t)),
      parent_100000_all: bigTimes.map((t) => round(t)),
    });
    return { fork_ms: { parent_10: median(smallTimes), parent_100000: median(bigTimes) } };
  },
};

export const forkWorkspace: Measurement = {
  name: "fork_workspace",
  keys: ["fork_workspace_ms"],
  async run(ctx) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-forkws-"));
    const timing = timedRunner(ctx.url, root, "bench-forkws");
    try {
      await instantReviewLoopProject(ctx, root, PROJECT_ID);
      const deps = { store: ctx.store, pool: ctx.pool };
      await timing.runner.start();
      let parent = "";
      try {
        ({ sessionId: parent } = await startTask(
          deps,
          { projectId: PROJECT_ID, prompt: "Fix slugify() (fork bench)", mode: "implementation" },
          benchActor,
        ));
        const deadline = Date.now() + 30_000;
        while (
          (await ctx.pool.query<{ outcome: string | null }>("SELECT outcome FROM sessions WHERE id = $1", [parent])).rows[0]?.outcome !==
          "approved"
        ) {
          if (Date.now() > deadline) throw new Error(`the parent session ${parent} was not approved within 30 s`);
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await timing.runner.stop();
      }
      const history = await ctx.store.readStream(parent);
      const head = history.at(-1)!.version;
      const state = foldTask(history);
      if (state.status !== "finished") throw new Error("the parent did not finish");
      const totals: number[] = [];
      const forks: number[] = [];
      const worktrees: number[] = [];
      for (let i = 0; i <= WORKSPACE_FORKS; i++) {
        const t0 = performance.now();
        const child = await forkSession(deps, { sessionId: parent, atVersion: head, note: `bench ${i}` }, benchActor);
        const t1 = performance.now();
        const ws = await createWorkspace({
          repoPath: state.config.project.repoPath,
          workspacesRoot: path.join(root, "forks"),
          sessionId: child.sessionId,
          baseCommit: state.head,
        });
        const t2 = performance.now();
        if (!fs.existsSync(path.join(ws.path, "src/slugify.js"))) throw new Error("the fork's worktree has no src/slugify.js");
        if (i === 0) continue; // warms the statements and git
        forks.push(t1 - t0);
        worktrees.push(t2 - t1);
        totals.push(t2 - t0);
      }
      const t = percentiles(totals);
      ctx.note("fork_workspace", {
        definition:
          "sessions.fork of a finished review-loop session at its last event, then its git worktree at the recorded commit (git worktree add)",
        parent_events: head,
        forks: WORKSPACE_FORKS,
        fork_ms: percentiles(forks),
        worktree_ms: percentiles(worktrees),
      });
      return { fork_workspace_ms: { p50: t.p50, p99: t.p99, n: t.n, max: t.max } };
    } finally {
      await timing.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
