// What every runner of the application runs: the list of its step kinds (docs/architecture.md,
// "Step kinds") — the runner's own (echo, webhook), the workflow's (agents, test commands), the
// conversations' (agent calls, mode timers), the delivery's (push, pull request, merge), the
// workspace clean-up's (req F14) and the tracker's (issue comment, commit status) —
// each with its executor and its reaction. The runner process (runner/main.ts), the tests' and
// the benchmarks' runners are composed from it: `stepKindRegistry(appStepKinds(deps))` gives the
// Runner its executors and reactions, looked up by kind.
import { isConnectionError, type Db, type Tx } from "./db/pool";
import { logger } from "./log";
import type { EventStore } from "./events/store";
import { judgeStepKind } from "./bake-off/step-kinds";
import { conversationStepKinds } from "./conversations/step-kinds";
import { deliverOnApproval } from "./delivery/service";
import { sessionRemote } from "./delivery/settings";
import { deliverStepKind } from "./delivery/step-kinds";
import { confirmIfIntakeAuto } from "./intake/auto-confirm";
import { pruneStepKind } from "./pruning/step-kinds";
import { echoStepKind } from "./runner/echo";
import type { StepKind } from "./runner/step-kinds";
import { webhookStepKind, type WebhookDeps } from "./runner/webhook";
import { workflowStepKinds, type WorkflowExecutorDeps } from "./runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "./task-engine";
import { timeOrderedId } from "./events/ids";
import type { RecordedEvent } from "./events/types";
import { scheduleTrackerSteps } from "./tracker/schedule";
import { trackerStepKinds } from "./tracker/step-kinds";

export interface AppStepKindDeps {
  pool: Db;
  store: EventStore;
  workspacesRoot: string;
  /** This runner's host (CATCAFE_RUNNER_HOST), recorded with each worktree it creates; the hostname by default. */
  host?: string;
  repositoryPath?: (repoPath: string) => string;
  /** Where webhook steps find the project's webhook (the projects table, which runner/ does not own). */
  webhook: WebhookDeps;
  /**
   * What a session's HTTP brains may reach on non-public addresses: access.privateHosts in
   * force for its project, read at each call (server/projects/access.ts). Absent: nothing.
   */
  privateHostsFor?: (sessionId: string) => Promise<readonly string[]>;
  /** Sees each workflow agent request (the bench's prompt figures); never changes it. */
  observeAgentRequest?: WorkflowExecutorDeps["observeAgentRequest"];
}

/** Every step kind the application's runners run: one entry each (the registry refuses a kind twice). */
export function appStepKinds(deps: AppStepKindDeps): StepKind[] {
  return [
    echoStepKind,
    webhookStepKind(deps.webhook),
    ...workflowStepKinds({
      ...deps,
      reactor: { reactToStepOutcome: reactAndTellTracker, reactToReactionFailure },
      onSessionFinalized: deliverIfAuto,
      onSessionWaiting: confirmIfAuto,
      sessionRemote: (sessionId) => sessionRemote(deps.pool, deps.store, sessionId),
    }),
    ...conversationStepKinds(deps),
    deliverStepKind(deps),
    pruneStepKind(deps),
    ...trackerStepKinds(),
    judgeStepKind(deps),
  ];
}

/**
 * The workflow's reaction to a step's outcome, then the tracker's steps the session's new state
 * calls for (the issue comment, the commit status: server/tracker/schedule.ts), in the same
 * transaction. Under a savepoint: a defect there never undoes the workflow's decision.
 */
async function reactAndTellTracker(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]) {
  const appended = await reactToStepOutcome(tx, store, sessionId, recorded);
  await tx.query("SAVEPOINT tracker_steps");
  try {
    await scheduleTrackerSteps({ store }, sessionId, { tx, newId: timeOrderedId });
    await tx.query("RELEASE SAVEPOINT tracker_steps");
  } catch (err) {
    await tx.query("ROLLBACK TO SAVEPOINT tracker_steps");
    if (isConnectionError(err)) throw err;
    logger.error({ err: String(err), sessionId }, "could not schedule the tracker's steps of a session");
  }
  return appended;
}

/**
 * A session that just finished approved is delivered when its project says so, in the same
 * transaction. Under a savepoint: a defect in the delivery never undoes the session's ending
 * (it is logged, and an operator can still deliver by hand).
 */
async function deliverIfAuto(tx: Tx, store: EventStore, sessionId: string): Promise<void> {
  await tx.query("SAVEPOINT auto_delivery");
  try {
    await deliverOnApproval(tx, store, sessionId);
    await tx.query("RELEASE SAVEPOINT auto_delivery");
  } catch (err) {
    await tx.query("ROLLBACK TO SAVEPOINT auto_delivery");
    if (isConnectionError(err)) throw err;
    logger.error({ err: String(err), sessionId }, "could not deliver an approved session automatically");
  }
}

/**
 * A task its intake rule confirms itself (docs/intake.md) is confirmed when it first waits for
 * a person. Under a savepoint, like the delivery above: a defect leaves it waiting for a person.
 */
async function confirmIfAuto(tx: Tx, store: EventStore, sessionId: string): Promise<void> {
  await tx.query("SAVEPOINT intake_auto_confirm");
  try {
    await confirmIfIntakeAuto(tx, store, sessionId);
    await tx.query("RELEASE SAVEPOINT intake_auto_confirm");
  } catch (err) {
    await tx.query("ROLLBACK TO SAVEPOINT intake_auto_confirm");
    if (isConnectionError(err)) throw err;
    logger.error({ err: String(err), sessionId }, "could not confirm a task its intake rule confirms");
  }
}
