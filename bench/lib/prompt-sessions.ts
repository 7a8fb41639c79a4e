// Demo-like sessions run for their prompts (bench prompt_cacheable_share and its test): the
// review loop on the demo repository (roundtable, confirm, a build the reviewer sends back
// once, the second build approved, the test plan) and the Forge demo (the word counter, idea
// to delivery, the PRD rejected once), with scripted agents answering at once, through an
// in-process Runner with the application's real executors. Each prompt is recorded as an
// agent CLI receives it on stdin (the thread, then the turn's instruction: cliPrompt), with
// what the runner adds (the Forge's artifacts, the diff under review).
import crypto from "node:crypto";
import path from "node:path";
import type pg from "pg";
import { createAppEventStore } from "../../server/app-store";
import { appStepKinds } from "../../server/app-runner";
import { cliPrompt } from "../../server/agents/shells/prompt";
import { createPool } from "../../server/db/pool";
import { DEMO_AGENTS, DEMO_ALLOWLIST, DEMO_FIXED_SOURCE, DEMO_TASK_PROMPT } from "../../server/demo/content";
import { FORGE_DEMO_IDEA, FORGE_DEMO_SCRIPTS, instantScripts } from "../../server/demo/forge-content";
import { ensureDemoRepo } from "../../server/demo/repo";
import type { EventStore } from "../../server/events/store";
import { upsertProject } from "../../server/projects/projects";
import { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { newForge } from "../../server/tasks/forge";
import { benchActor } from "./fixtures";

export type PromptWorkflow = "review_loop" | "forge";

export interface RecordedPrompt {
  role: string;
  /** What the agent CLI reads on stdin. */
  text: string;
}

export interface PromptSessions {
  /** Runs one demo-like session of `workflow` to its end; its prompts in the order sent. */
  run(workflow: PromptWorkflow, label: string): Promise<{ sessionId: string; state: string; prompts: RecordedPrompt[] }>;
  close(): Promise<void>;
}

const SESSION_TIMEOUT_MS = 60_000;

/** The demo's replies (all `say` entries) without their thinking pause. */
const instant = <E extends object>(entries: readonly E[] | undefined) => entries?.map((e) => ({ ...e, chunkDelayMs: 0 }));

const verdict = (decision: "approve" | "changes_requested") =>
  JSON.stringify({
    decision,
    summary: decision === "approve" ? "Accents folded and both ends trimmed." : "Trim leading dashes too.",
    findings: decision === "approve" ? [] : [{ severity: "blocking", file: "src/slugify.js", line: 7, message: "Leading dashes stay." }],
  });

/** The demo's agents, instant, with a reviewer that sends the first build back once (its roundtable turn is invocation 0). */
function reviewLoopAgents() {
  const { coder, reviewer, tester } = DEMO_AGENTS;
  return {
    coder: {
      kind: "scripted",
      id: "coder-prompts",
      responses: instant(coder.responses),
      byOutput: {
        text: instant(coder.byOutput!.text),
        build: [
          { reply: "Fixed slugify().", files: { "src/slugify.js": DEMO_FIXED_SOURCE } },
          { reply: "Fixed slugify().", files: { "src/slugify.js": DEMO_FIXED_SOURCE } },
          { reply: "Trimmed leading dashes.", files: { "src/slugify.js": `${DEMO_FIXED_SOURCE}\n// Both ends are trimmed.\n` } },
        ],
      },
    },
    reviewer: {
      kind: "scripted",
      id: "reviewer-prompts",
      responses: instant(reviewer.responses),
      byOutput: {
        text: instant(reviewer.byOutput!.text),
        review_verdict: [{ reply: verdict("approve") }, { reply: verdict("changes_requested") }, { reply: verdict("approve") }],
      },
    },
    tester: {
      kind: "scripted",
      id: "tester-prompts",
      responses: instant(tester.responses),
      byOutput: { text: instant(tester.byOutput!.text), test_plan: instant(tester.byOutput!.test_plan) },
    },
  };
}

function forgeAgents() {
  const agent = (role: keyof typeof FORGE_DEMO_SCRIPTS) => ({
    kind: "scripted",
    id: `${role}-prompts`,
    responses: [{ reply: "-" }],
    byStage: instantScripts(FORGE_DEMO_SCRIPTS[role]),
  });
  return { planner: agent("planner"), coder: agent("coder"), reviewer: agent("reviewer") };
}

async function waitForState(pool: pg.Pool, sessionId: string, done: (state: string) => boolean): Promise<string> {
  const until = Date.now() + SESSION_TIMEOUT_MS;
  for (;;) {
    const { rows } = await pool.query<{ state: string }>("SELECT state FROM sessions WHERE id = $1", [sessionId]);
    const state = rows[0]?.state ?? "";
    if (done(state)) return state;
    if (Date.now() > until) throw new Error(`session ${sessionId} still "${state}" after ${SESSION_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const FINISHED = new Set(["approved", "completed", "failed", "cancelled", "max_iterations_reached", "review_schema_invalid"]);
const finished = (state: string) => FINISHED.has(state) || state.endsWith("_failed") || state.endsWith("_invalid");

/** Projects for both workflows on a demo repository under `root`, and a runner that records every prompt. */
export async function promptSessions(ctx: { url: string; pool: pg.Pool; store: EventStore }, root: string): Promise<PromptSessions> {
  const repo = await ensureDemoRepo(root);
  const suffix = crypto.randomBytes(3).toString("hex");
  const projects = { review_loop: `prompts-loop-${suffix}`, forge: `prompts-forge-${suffix}` };
  await upsertProject(ctx.pool, {
    id: projects.review_loop,
    name: "prompts: the review loop, demo agents",
    repoPath: repo.path,
    allowlist: DEMO_ALLOWLIST,
    agents: reviewLoopAgents() as never,
  });
  await upsertProject(ctx.pool, {
    id: projects.forge,
    name: "prompts: the Forge demo",
    repoPath: repo.path,
    allowlist: DEMO_ALLOWLIST,
    agents: forgeAgents() as never,
  });
  const pool = createPool(ctx.url, 6);
  const store = createAppEventStore(pool);
  const prompts = new Map<string, RecordedPrompt[]>();
  const kinds = stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot: path.join(root, "workspaces"),
      webhook: { webhookFor: async () => null },
      observeAgentRequest: (sessionId, request) => {
        const list = prompts.get(sessionId) ?? [];
        list.push({ role: request.role, text: cliPrompt(request) });
        prompts.set(sessionId, list);
      },
    }),
  );
  const runner = new Runner(store, pool, ctx.url, {
    id: `prompts-${suffix}`,
    executors: kinds.executors,
    react: kinds.react,
  });
  await runner.start();
  const deps = { store: ctx.store, pool: ctx.pool };
  return {
    async run(workflow, label) {
      let sessionId: string;
      if (workflow === "forge") {
        ({ sessionId } = await newForge(deps, { projectId: projects.forge, idea: FORGE_DEMO_IDEA, gates: [] }, benchActor));
      } else {
        ({ sessionId } = await startTask(
          deps,
          { projectId: projects.review_loop, prompt: `${DEMO_TASK_PROMPT}\n(${label})`, mode: "proposal" },
          benchActor,
        ));
        const waiting = await waitForState(ctx.pool, sessionId, (s) => s === "awaiting_operator_confirm" || finished(s));
        if (waiting === "awaiting_operator_confirm") await confirmTask(deps, { sessionId }, benchActor);
      }
      const state = await waitForState(ctx.pool, sessionId, finished);
      return { sessionId, state, prompts: prompts.get(sessionId) ?? [] };
    },
    async close() {
      await runner.stop();
      await pool.end().catch(() => {});
    },
  };
}
