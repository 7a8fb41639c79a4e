// An in-process Runner wired like the runner process (own pool, the application's step kinds:
// their executors, their reactions deciding the next step in the result's transaction) that times
// every step: when it was claimed, when its executor started and ended, and when its
// outcome was committed (the runner's "step completed" log, right after the COMMIT).
// The orchestration overhead of a step is then (its outcome committed − the previous
// outcome committed) − its executor's time.
import crypto from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createAppEventStore } from "../../server/app-store";
import { z } from "zod";
import { createPool } from "../../server/db/pool";
import type { StepExecutor } from "../../server/runner/executors";
import { Runner, type RunnerOptions } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { appStepKinds } from "../../server/app-runner";

export interface StepTiming {
  sessionId: string;
  state: string;
  claimedAt?: number;
  execStart?: number;
  execEnd?: number;
  committedAt?: number;
}

export interface TimedRunner {
  runner: Runner;
  steps: Map<string, StepTiming>;
  /** Called with the session id each time one of its steps' outcome is committed. */
  onCommitted: ((sessionId: string) => void) | null;
  /** The session's steps in commit order, each checked to have every timing. */
  stepsOf(sessionId: string): Array<Required<StepTiming>>;
  /** Frees the runner's pool (stop the runner first). */
  close(): Promise<void>;
}

/** The workflow state a step runs in (a workflow step's input says); other kinds go by their kind. */
const ZStateOfStep = z.object({ state: z.string() });

/** `options`: over the runner's defaults (a measurement that needs more slots at once). */
export function timedRunner(url: string, workspacesRoot: string, idPrefix: string, options: Partial<RunnerOptions> = {}): TimedRunner {
  const pool = createPool(url, 8);
  const store = createAppEventStore(pool);
  const steps = new Map<string, StepTiming>();
  const stepOf = (id: string, sessionId: string) => {
    let t = steps.get(id);
    if (!t) steps.set(id, (t = { sessionId, state: "?" }));
    return t;
  };
  const timed =
    (inner: StepExecutor): StepExecutor =>
    async (step, execCtx) => {
      const t = stepOf(step.id, step.sessionId);
      t.state = ZStateOfStep.safeParse(step.input).data?.state ?? step.kind;
      t.execStart = performance.now();
      try {
        return await inner(step, execCtx);
      } finally {
        t.execEnd = performance.now();
      }
    };
  // The sessions measured here have no webhook.
  const stepKinds = stepKindRegistry(
    appStepKinds({ pool, store, workspacesRoot: path.join(workspacesRoot, "workspaces"), webhook: { webhookFor: async () => null } }),
  );
  const executors = Object.fromEntries(Object.entries(stepKinds.executors).map(([kind, ex]) => [kind, timed(ex)]));
  const timedRunner: TimedRunner = {
    steps,
    onCommitted: null,
    runner: new Runner(store, pool, url, {
      id: `${idPrefix}-${crypto.randomBytes(3).toString("hex")}`,
      executors,
      // What every runner reacts with (the workflow, conversations, deliveries).
      react: stepKinds.react,
      onClaim: (step) => {
        stepOf(step.id, step.sessionId).claimedAt = performance.now();
      },
      // Logged right after recordStepOutcome() returned, i.e. after its COMMIT.
      log: (msg, fields) => {
        if (msg !== "step completed") return;
        const at = performance.now();
        const sessionId = String(fields?.sessionId);
        stepOf(String(fields?.stepId), sessionId).committedAt = at;
        timedRunner.onCommitted?.(sessionId);
      },
      ...options,
    }),
    stepsOf(sessionId) {
      const own = [...steps.values()].filter((t) => t.sessionId === sessionId).sort((a, b) => (a.committedAt ?? 0) - (b.committedAt ?? 0));
      for (const t of own) {
        if (t.claimedAt === undefined || t.execStart === undefined || t.execEnd === undefined || t.committedAt === undefined) {
          throw new Error(`step of session ${sessionId} in ${t.state} has incomplete timings: ${JSON.stringify(t)}`);
        }
      }
      return own as Array<Required<StepTiming>>;
    },
    close: () => pool.end().catch(() => {}),
  };
  return timedRunner;
}
