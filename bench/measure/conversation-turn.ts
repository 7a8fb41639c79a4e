// conversation_turn_ms: what a person waits for in a conversation before an agent starts on
// their message: postMessage() resolved (the message and its decided call committed) → the
// runner claimed the call (StepStarted committed), with the simulated agent (instant). Taken
// one at a time against an idle in-process runner wired as the runner process is
// (app-runner.ts), then with 16 conversations posting at once (their first turns apart: each
// conversation's first call makes its worktree).
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { appStepKinds } from "../../server/app-runner";
import { createAppEventStore } from "../../server/app-store";
import { postMessage, startConversation } from "../../server/conversations/service";
import { createPool } from "../../server/db/pool";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles, round } from "../lib/percentiles";
import { sleep, waitUntil } from "../lib/timing";

const PROJECT_ID = "bench-conversation";
const TURNS = 200;
const WARMUP = 10;
const CONCURRENT = 16;
const CONCURRENT_ROUNDS = 10;
const CLAIM_TIMEOUT_MS = 5_000;

export const conversationTurn: Measurement = {
  name: "conversation_turn",
  keys: ["conversation_turn_ms"],
  async run(ctx) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-chat-"));
    const repo = await ensureDemoRepo(root);
    await upsertProject(ctx.pool, {
      id: PROJECT_ID,
      name: "bench: conversations with an instant simulated agent",
      repoPath: repo.path,
      allowlist: [],
      agents: { coder: { kind: "scripted", id: "ada", responses: [{ reply: "noted" }], byOutput: { reply: [{ reply: "noted" }] } } },
    });
    const claimedAt = new Map<string, number>();
    const waiting = new Map<string, (at: number) => void>();
    const runnerPool = createPool(ctx.url, 8);
    const store = createAppEventStore(runnerPool);
    // The project has no webhook: the steps here are the conversation's.
    const stepKinds = stepKindRegistry(
      appStepKinds({ pool: runnerPool, store, workspacesRoot: path.join(root, "workspaces"), webhook: { webhookFor: async () => null } }),
    );
    const runner = new Runner(store, runnerPool, ctx.url, {
      id: `bench-chat-${crypto.randomBytes(3).toString("hex")}`,
      executors: stepKinds.executors,
      react: stepKinds.react,
      onReactionError: stepKinds.onReactionError,
      concurrency: 4,
      onClaim: (step) => {
        const at = performance.now();
        claimedAt.set(step.id, at);
        waiting.get(step.sessionId)?.(at);
      },
    });
    const deps = { store: ctx.store, pool: ctx.pool };
    /** One turn of `sessionId`: the post's commit → its call's claim. */
    const turn = async (sessionId: string, i: number): Promise<number> => {
      const claimed = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`turn ${i} of ${sessionId} was not claimed in time`)), CLAIM_TIMEOUT_MS);
        waiting.set(sessionId, (at) => {
          clearTimeout(timer);
          waiting.delete(sessionId);
          resolve(at);
        });
      });
      claimed.catch(() => {});
      await postMessage(deps, { sessionId, text: `@ada turn ${i}` }, benchActor);
      const committed = performance.now();
      const at = await claimed;
      await waitUntil(
        `the reply of turn ${i}`,
        async () => {
          const r = await ctx.pool.query("SELECT 1 FROM steps WHERE session_id = $1 AND state IN ('pending', 'running')", [sessionId]);
          return r.rowCount === 0;
        },
        CLAIM_TIMEOUT_MS,
      );
      return Math.max(0, at - committed);
    };
    const single: number[] = [];
    const concurrent: number[] = [];
    const firstTurns: number[] = [];
    await runner.start();
    try {
      const { sessionId } = await startConversation(deps, { projectId: PROJECT_ID }, benchActor);
      await sleep(50);
      for (let i = 0; i < WARMUP + TURNS; i++) {
        const ms = await turn(sessionId, i);
        if (i >= WARMUP) single.push(ms);
        await sleep(5);
      }
      const many = await Promise.all(
        Array.from({ length: CONCURRENT }, async () => (await startConversation(deps, { projectId: PROJECT_ID }, benchActor)).sessionId),
      );
      for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
        // A conversation's first call also makes its worktree (one git operation per repository at a time).
        (round === 0 ? firstTurns : concurrent).push(...(await Promise.all(many.map((id) => turn(id, round)))));
      }
    } finally {
      await runner.stop();
      await runnerPool.end();
      fs.rmSync(root, { recursive: true, force: true });
    }
    const s = percentiles(single);
    const c = percentiles(concurrent);
    const f = percentiles(firstTurns);
    ctx.note("conversation_turn", {
      turns: TURNS,
      p95: s.p95,
      concurrent: {
        conversations: CONCURRENT,
        rounds: CONCURRENT_ROUNDS - 1,
        p50: c.p50,
        p95: c.p95,
        p99: c.p99,
        max: c.max,
        runner_concurrency: 4,
      },
      // Each conversation's first call makes its worktree first: what a new conversation's first message waits for.
      concurrent_first_turn: { p50: f.p50, p99: f.p99, max: f.max },
    });
    return {
      conversation_turn_ms: {
        p50: s.p50,
        p99: s.p99,
        n: s.n,
        max: s.max,
        concurrent_p50: round(c.p50),
        concurrent_p99: round(c.p99),
        concurrent_first_turn_p99: round(f.p99),
      },
    };
  },
};
