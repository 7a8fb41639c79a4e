// prompt_cacheable_share and tokens_per_approved_demo_task (docs/scaling.md, "Prompt
// economics"): demo-like sessions of the review loop and the Forge (bench/lib/prompt-sessions.ts)
// run with scripted agents, every prompt recorded as the agent CLI reads it. The share is
// the part of the prompt bytes, from a session's second call on, identical to a prefix
// already sent in that session (bench/lib/prompt-share.ts): what a provider's prefix cache
// could read instead of charging full input. The scripted agents report no usage, so the
// tokens per approved demo task are counted from the same prompts and replies at 4 bytes per
// token (input, of which cacheable, and output), per session that ended approved/completed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BenchContext, Measurement } from "../lib/context";
import { cacheableShare, combinedShare, type PromptShare } from "../lib/prompt-share";
import { promptSessions, type PromptWorkflow } from "../lib/prompt-sessions";

const SESSIONS_PER_WORKFLOW = 2;
const BYTES_PER_TOKEN = 4;
const WORKFLOWS: PromptWorkflow[] = ["review_loop", "forge"];

interface WorkflowFigures {
  share: PromptShare;
  sessions: number;
  calls: number;
  promptBytes: number;
  replyBytes: number;
  approved: number;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** Runs the sessions once per bench run: both measurements read the same figures. */
let measured: Promise<Record<PromptWorkflow, WorkflowFigures>> | null = null;

function measure(ctx: BenchContext): Promise<Record<PromptWorkflow, WorkflowFigures>> {
  measured ??= (async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-prompts-"));
    const sessions = await promptSessions(ctx, root);
    try {
      const out = {} as Record<PromptWorkflow, WorkflowFigures>;
      for (const workflow of WORKFLOWS) {
        const shares: PromptShare[] = [];
        let calls = 0;
        let promptBytes = 0;
        let replyBytes = 0;
        let approved = 0;
        for (let i = 0; i < SESSIONS_PER_WORKFLOW; i++) {
          const run = await sessions.run(workflow, `bench ${i}`);
          if (run.state !== "approved" && run.state !== "completed")
            throw new Error(`${workflow} session ${run.sessionId} ended "${run.state}"`);
          approved++;
          shares.push(cacheableShare(run.prompts.map((p) => p.text)));
          calls += run.prompts.length;
          promptBytes += run.prompts.reduce((n, p) => n + Buffer.byteLength(p.text), 0);
          const replies = await ctx.pool.query<{ bytes: string }>(
            `SELECT coalesce(sum((data->'output'->'raw'->>'size')::bigint), 0) AS bytes FROM events
             WHERE stream_id = $1 AND type = 'StepCompleted' AND data->'output' ? 'agentId'`,
            [run.sessionId],
          );
          replyBytes += Number(replies.rows[0]?.bytes ?? 0);
        }
        out[workflow] = { share: combinedShare(shares), sessions: SESSIONS_PER_WORKFLOW, calls, promptBytes, replyBytes, approved };
      }
      return out;
    } finally {
      await sessions.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  })();
  return measured;
}

export const promptCacheableShare: Measurement = {
  name: "prompt_cacheable_share",
  keys: ["prompt_cacheable_share"],
  async run(ctx) {
    const figures = await measure(ctx);
    ctx.note("prompt_cacheable_share", {
      definition:
        "per workflow: from a session's second agent call on, the prompt bytes (as the agent CLI reads them) equal to a prefix already sent in that session, over all those calls' bytes; demo-like sessions, scripted agents",
      by_workflow: Object.fromEntries(
        WORKFLOWS.map((w) => [
          w,
          {
            sessions: figures[w].sessions,
            calls: figures[w].share.calls,
            bytes: figures[w].share.bytes,
            cacheable_bytes: figures[w].share.cacheableBytes,
          },
        ]),
      ),
    });
    return {
      prompt_cacheable_share: { review_loop: round3(figures.review_loop.share.share), forge: round3(figures.forge.share.share) },
    };
  },
};

export const tokensPerApprovedDemoTask: Measurement = {
  name: "tokens_per_approved_demo_task",
  keys: ["tokens_per_approved_demo_task"],
  async run(ctx) {
    const figures = await measure(ctx);
    const perTask = (f: WorkflowFigures) => {
      const firstCalls = f.promptBytes - f.share.bytes;
      return {
        input: Math.round(f.promptBytes / BYTES_PER_TOKEN / f.approved),
        cached_input: Math.round(f.share.cacheableBytes / BYTES_PER_TOKEN / f.approved),
        output: Math.round(f.replyBytes / BYTES_PER_TOKEN / f.approved),
        calls: Math.round(f.calls / f.approved),
        first_call_input: Math.round(firstCalls / BYTES_PER_TOKEN / f.approved),
      };
    };
    ctx.note("tokens_per_approved_demo_task", {
      definition: `per session that ended approved (review loop) or completed (Forge): input tokens, the cacheable part of them, output tokens; counted from the prompts and replies at ${BYTES_PER_TOKEN} bytes per token (scripted agents report no usage)`,
    });
    return { tokens_per_approved_demo_task: { review_loop: perTask(figures.review_loop), forge: perTask(figures.forge) } };
  },
};
