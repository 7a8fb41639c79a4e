// Forks (req E5, F5–F7): a new session that inherits another's events up to a position
// without copying them (SessionForked, O(1) in the event store), then goes on on its own. The
// parent never changes. Four ways to make one:
//   - fork at any event: the state there, continued (a step in progress runs again);
//   - revert to a stage or state: everything before it kept, it runs again;
//   - modify a finished session: the change request, then the workflow's modify entry;
//   - rerun (./commands.ts): a fork where the task started.
// And resume, which is no fork: an interrupted session goes on in its own stream.
import { z } from "zod";
import { INTERRUPTED_OUTCOMES } from "../../lib/outcomes";
import { AppError } from "../errors";
import { ZBudget, type Actor, type AppEventOf } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import { ARTIFACT_PATHS } from "../forge/artifacts";
import { planDigest } from "../forge/patch";
import {
  decide,
  decideContext,
  type DecideContext,
  definitionFor,
  type Emitted,
  foldTask,
  type StartedTask,
  taskFold,
  type TaskState,
} from "../task-engine";
import type { WorkflowDefinition } from "../workflow/definition";
import { forkStream } from "../events/forks";
import { ensureCommit, fingerprintProject } from "../workspaces";
import { getBlob } from "../events/blobs";
import { decideOnTask, newSessionId, type TaskDeps, ZSessionRef } from "./commands";

const ZNote = z.string().trim().max(2000).optional();

export const ZForkInput = ZSessionRef.extend({
  /** The parent's event position (inherited events counted): the fork inherits events 1..atVersion. */
  atVersion: z.number().int().min(1),
  /** manual: go on from there; revert: run again from there. (A rerun starts over: tasks.rerun.) */
  reason: z.enum(["manual", "revert"]).default("manual"),
  note: ZNote,
});
export const ZRevertInput = ZSessionRef.extend({
  /** A stage (staged workflows) or a state of the session's workflow. */
  to: z.string().trim().min(1).max(100),
  /** Which entry into a state: the one in this iteration (default: the latest). */
  iteration: z.number().int().min(1).optional(),
  note: ZNote,
});
export const ZModifyInput = ZSessionRef.extend({
  change: z.string().trim().min(1, "say what should change").max(20_000),
  note: ZNote,
});
export const ZResumeInput = z.object({
  /** Default: the latest session (of `workflow`, when given) that was interrupted. */
  sessionId: z.string().min(1).max(100).optional(),
  workflow: z.string().min(1).max(100).optional(),
  /** A new budget for a session that ran out of it. */
  budget: ZBudget.optional(),
});

export interface Forked {
  sessionId: string;
  parentId: string;
  atVersion: number;
  version: number;
}

async function readHistory(deps: TaskDeps, sessionId: string): Promise<RecordedEvent[]> {
  const history = await deps.store.readStream(sessionId);
  if (!history.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  return history;
}

/** Where any task's fork may start: a started task's position. */
async function requireStartedAt(deps: TaskDeps, sessionId: string, state: TaskState, atVersion: number): Promise<StartedTask> {
  if (state.status !== "none") return state;
  const started = (await deps.store.readStream(sessionId)).find((e) => e.type === "TaskStarted");
  throw new AppError(
    "INVALID_INPUT",
    started
      ? `event ${atVersion} of ${sessionId} comes before its task started (event ${started.version}): fork at ${started.version} or later`
      : `session ${sessionId} is not a task: nothing to fork`,
    { atVersion },
  );
}

/** The title a fork takes after: the session's first title (its SessionCreated, inherited through every fork). */
async function firstTitle(deps: TaskDeps, sessionId: string): Promise<string> {
  const [first] = await deps.store.readStream(sessionId, { toVersion: 1 });
  return (first?.data as { title?: string } | undefined)?.title ?? sessionId;
}

interface TaskFork {
  parentId: string;
  atVersion: number;
  reason: AppEventOf<"SessionForked">["data"]["reason"];
  note?: string;
  /** The state SessionForked names (default: the one inherited). */
  state?(inherited: StartedTask): string;
  /** Besides being a started task's: where this kind of fork may start. */
  mayStart?(inherited: StartedTask, head: number): void | Promise<void>;
  /** A fork of a finished position stays finished, with the parent's outcome. */
  finished?(inherited: StartedTask): boolean;
  /** Events recorded between SessionForked and what `then` decides (a change request). */
  first?(inherited: StartedTask): Promise<Emitted[]>;
  /** What follows SessionForked in the child, decided on the forked state. */
  then(forked: TaskState, ctx: DecideContext, inherited: StartedTask): Emitted[];
}

/** A task's fork through the fork service (events/forks.ts): SessionForked, `first`, then what `then` decides, in one transaction. */
async function forkTask(deps: TaskDeps, fork: TaskFork, actor: Actor): Promise<Forked> {
  const title = await firstTitle(deps, fork.parentId);
  let inheritedTask: StartedTask | undefined;
  const forked = await forkStream(
    deps.store,
    {
      fold: taskFold,
      parentId: fork.parentId,
      atVersion: fork.atVersion,
      childId: newSessionId(),
      async mayStart(inherited, { head }) {
        inheritedTask = await requireStartedAt(deps, fork.parentId, inherited, fork.atVersion);
        await fork.mayStart?.(inheritedTask, head);
      },
      forked() {
        const task = inheritedTask!;
        return {
          reason: fork.reason,
          title: `${title} (${fork.reason === "manual" ? "fork" : fork.reason})`,
          workflow: definitionFor(task).id,
          state: fork.state?.(task) ?? task.fsm,
          ...(fork.note ? { note: fork.note } : {}),
          ...(fork.finished?.(task) && task.status === "finished" ? { outcome: task.outcome } : {}),
        };
      },
      first: async () => (fork.first ? fork.first(inheritedTask!) : []),
      continuation: (state) => fork.then(state, decideContext(definitionFor(inheritedTask!)), inheritedTask!),
    },
    { actor },
  );
  return { sessionId: forked.sessionId, parentId: forked.parentId, atVersion: forked.atVersion, version: forked.version };
}

/**
 * Fork at any event. The child's state is the state at that position; it goes on from
 * there: a person's wait keeps waiting, a step in progress at the position runs again (its
 * result in the parent came later, so it is not inherited), a finished position gives a
 * finished copy. A step still running in the parent cannot be forked inside.
 */
export async function forkSession(deps: TaskDeps, raw: z.input<typeof ZForkInput>, actor: Actor): Promise<Forked> {
  const input = ZForkInput.parse(raw);
  return forkTask(
    deps,
    {
      parentId: input.sessionId,
      atVersion: input.atVersion,
      reason: input.reason,
      ...(input.note ? { note: input.note } : {}),
      async mayStart(inherited, head) {
        if (!inherited.step) return;
        const now = await deps.store.stateAt(input.sessionId, head, taskFold);
        if (now.status !== "active" || now.step?.id !== inherited.step.id) return;
        const from = (await deps.store.readStream(input.sessionId)).find(
          (e) => e.type === "StepScheduled" && (e.data as { stepId?: string }).stepId === inherited.step?.id,
        )?.version;
        throw new AppError(
          "CONFLICT",
          `event ${input.atVersion} is inside step ${inherited.step.id} (${inherited.step.state}), which is still running: ` +
            `fork before event ${from ?? "its start"}, or once it has finished`,
          { stepId: inherited.step.id },
        );
      },
      finished: (inherited) => inherited.status === "finished",
      then(forked, ctx, inherited) {
        if (inherited.status === "finished") return [];
        const spec = ctx.definition.states[inherited.fsm];
        if (spec?.type === "wait") return inherited.fsm === ctx.definition.initial ? decide(forked, { type: "Begin" }, ctx) : [];
        const reason = `forked at event ${input.atVersion}: runs again`;
        return decide(forked, { type: "Continue", state: inherited.fsm, reason, iterate: false }, ctx);
      },
    },
    actor,
  );
}

/**
 * Rerun: a new execution with the session's prompt and configuration, as a fork of the
 * original at its TaskStarted event (lineage recorded; the original is untouched).
 */
export async function rerunTask(
  deps: TaskDeps,
  raw: z.input<typeof ZSessionRef>,
  actor: Actor,
): Promise<{ sessionId: string; version: number; parentId: string }> {
  const { sessionId: parentId } = ZSessionRef.parse(raw);
  const started = (await readHistory(deps, parentId)).find((e) => e.type === "TaskStarted");
  if (!started) throw new AppError("NOT_FOUND", `session ${parentId} is not a task`);
  const forked = await forkTask(
    deps,
    {
      parentId,
      atVersion: started.version,
      reason: "rerun",
      // A rerun starts from the workflow's first state.
      state: (inherited) => definitionFor(inherited).initial,
      then: (state, ctx) => decide(state, { type: "Begin" }, ctx),
    },
    actor,
  );
  return { sessionId: forked.sessionId, version: forked.version, parentId };
}

interface Entry {
  /** The SessionStateChanged that entered it. */
  version: number;
  state: string;
  iterate: boolean;
  iteration: number;
}

/** Every entry into a state in `history`: the state change, and the iteration it started or ran in. */
function entries(history: RecordedEvent[]): Entry[] {
  const found: Entry[] = [];
  let iteration = 1;
  for (const [i, e] of history.entries()) {
    if (e.type === "IterationStarted") iteration = (e.data as { iteration: number }).iteration;
    if (e.type === "StageStarted") iteration = 1;
    if (e.type !== "SessionStateChanged") continue;
    // The entry's own batch: an iteration counted right after the state change belongs to it.
    let iterate = false;
    let at = iteration;
    for (const next of history.slice(i + 1, i + 5)) {
      if (next.type === "SessionStateChanged" || next.type === "StepScheduled") break;
      if (next.type === "IterationStarted") {
        iterate = true;
        at = (next.data as { iteration: number }).iteration;
      }
      if (next.type === "StageStarted") at = 1;
    }
    found.push({ version: e.version, state: (e.data as { to: string }).to, iterate, iteration: at });
  }
  return found;
}

/** Where a revert to `to` starts: a stage's latest start, or a state's latest entry (or the one in `iteration`). */
function revertEntry(def: WorkflowDefinition, history: RecordedEvent[], to: string, iteration?: number): Entry {
  const all = entries(history);
  if (def.stages?.[to]) {
    const started = history.filter((e) => e.type === "StageStarted" && (e.data as { stage: string }).stage === to).at(-1);
    const entry = started && all.filter((e) => e.version < started.version).at(-1);
    if (!entry) {
      const ran = [...new Set(history.filter((e) => e.type === "StageStarted").map((e) => (e.data as { stage: string }).stage))];
      throw new AppError("INVALID_INPUT", `stage ${to} never ran in this session (it ran: ${ran.join(", ") || "none"})`, { to });
    }
    return { ...entry, iteration: 1 };
  }
  if (!def.states[to]) {
    const stages = Object.keys(def.stages ?? {});
    throw new AppError(
      "INVALID_INPUT",
      `workflow ${def.id} has no ${stages.length ? "stage or state" : "state"} "${to}" (${stages.length ? `stages: ${stages.join(", ")}; ` : ""}states: ${Object.keys(def.states).join(", ")})`,
      { to },
    );
  }
  if (def.states[to]!.type === "terminal")
    throw new AppError("INVALID_INPUT", `"${to}" is an end state: there is nothing to run again from it`, { to });
  const into = all.filter((e) => e.state === to);
  if (!into.length) throw new AppError("INVALID_INPUT", `this session never entered "${to}"`, { to });
  if (iteration === undefined) return into.at(-1)!;
  const match = into.filter((e) => e.iteration === iteration).at(-1);
  if (!match) {
    throw new AppError(
      "INVALID_INPUT",
      `this session entered "${to}" in iteration(s) ${[...new Set(into.map((e) => e.iteration))].join(", ")}, not in ${iteration}`,
      { to, iteration },
    );
  }
  return match;
}

/**
 * Revert (req F7): a fork that keeps everything before a stage (or a state's entry) and runs
 * again from it. The original keeps its history.
 */
export async function revertSession(deps: TaskDeps, raw: z.input<typeof ZRevertInput>, actor: Actor): Promise<Forked & { to: string }> {
  const input = ZRevertInput.parse(raw);
  const history = await readHistory(deps, input.sessionId);
  const now = foldTask(history);
  if (now.status === "none") throw new AppError("NOT_FOUND", `session ${input.sessionId} is not a task`);
  const entry = revertEntry(definitionFor(now), history, input.to, input.iteration);
  const forked = await forkTask(
    deps,
    {
      parentId: input.sessionId,
      atVersion: entry.version - 1,
      reason: "revert",
      ...(input.note ? { note: input.note } : {}),
      then: (state, ctx) =>
        decide(state, { type: "Continue", state: entry.state, reason: `reverted to ${input.to}`, iterate: entry.iterate }, ctx),
    },
    actor,
  );
  return { ...forked, to: entry.state };
}

/**
 * Modify (req F5): from a finished session, a fork that takes a person's change request.
 * The project's files are fingerprinted against the commit the base session started from
 * (what changed in the project since), the base's last commit must still exist (in the
 * repository, or in the session's bundle), and the workflow's modify entry runs: the Forge
 * pipeline triages the change, a task builds it.
 */
export async function modifySession(deps: TaskDeps, raw: z.input<typeof ZModifyInput>, actor: Actor): Promise<Forked> {
  const input = ZModifyInput.parse(raw);
  const head = await deps.store.streamVersion(input.sessionId);
  if (head === null) throw new AppError("NOT_FOUND", `no session ${input.sessionId}`);
  return forkTask(
    deps,
    {
      parentId: input.sessionId,
      atVersion: head,
      reason: "modify",
      ...(input.note ? { note: input.note } : {}),
      mayStart(base) {
        if (base.status !== "finished") {
          throw new AppError("PRECONDITION_FAILED", `modify starts from a finished session; ${input.sessionId} is still in "${base.fsm}"`);
        }
        const def = definitionFor(base);
        if (!def.modify)
          throw new AppError("PRECONDITION_FAILED", `workflow ${def.id} has no modify entry: fork or revert its sessions instead`);
      },
      first: async (base) => [await changeRequest(deps, input.sessionId, base, input.change)],
      then(state, ctx) {
        const entry = ctx.definition.modify!;
        return decide(state, { type: "Continue", state: entry.state, reason: "change requested", iterate: entry.iterate }, ctx);
      },
    },
    actor,
  );
}

/**
 * A person's change request of a finished session: the base's last commit must still exist
 * (in the repository, or in the session's bundle), and the project's files are fingerprinted
 * against the commit the base session started from (what changed in the project since).
 */
async function changeRequest(deps: TaskDeps, baseSessionId: string, base: StartedTask, text: string): Promise<Emitted> {
  const { repoPath, baseCommit: started } = base.config.project;
  const bundle = base.bundle;
  const available = await ensureCommit(repoPath, base.head, async () =>
    bundle ? (await getBlob(deps.pool, bundle.blob)).content : null,
  ).then(
    () => true,
    () => false,
  );
  if (!available) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `the base session's last commit ${base.head} is gone from ${repoPath} (and no bundle of the session holds it): there is no code to modify`,
      { commit: base.head },
    );
  }
  const fingerprint = await fingerprintProject(repoPath, started);
  return {
    type: "ChangeRequested",
    data: {
      text,
      baseSessionId,
      baseCommit: base.head,
      fingerprint,
      basePlan: planDigest(base.pipeline.artifacts[ARTIFACT_PATHS.plan]?.json),
    },
  };
}

export interface Resumed {
  sessionId: string;
  /** resumed: it runs again; released: a dead runner's step was handed to the others; else nothing was needed. */
  status: "resumed" | "released" | "running" | "queued" | "waiting";
  message: string;
  version: number;
}

/**
 * The state whose work an interrupted session stopped in: the one the budget could not pay
 * for, else the one left for the cancel or the failure (before a person's stop after a failure).
 */
function interruptedIn(def: WorkflowDefinition, history: RecordedEvent[], outcome: string): string | null {
  if (outcome === "budget_exhausted") {
    const unpaid = (history.findLast((e) => e.type === "BudgetExhausted")?.data as { state?: string } | undefined)?.state;
    if (unpaid) return unpaid;
  }
  const moves = history.filter((e) => e.type === "SessionStateChanged").map((e) => e.data as { from: string; to: string });
  for (const move of moves.reverse()) {
    const spec = def.states[move.from];
    if (!spec || spec.type === "terminal" || move.from === def.global.step_failed) continue;
    return move.from;
  }
  return null;
}

async function latestInterrupted(deps: TaskDeps, workflow: string | undefined): Promise<string> {
  const r = await deps.pool.query<{ id: string }>(
    `SELECT s.id FROM sessions s JOIN streams st ON st.id = s.id
     WHERE ($1::text IS NULL OR s.workflow = $1)
       AND (s.outcome = ANY($2::text[]) OR (s.outcome IS NULL AND s.state = 'agent_failed'))
     ORDER BY st.updated_at DESC LIMIT 1`,
    [workflow ?? null, [...INTERRUPTED_OUTCOMES]],
  );
  const id = r.rows[0]?.id;
  if (!id) throw new AppError("NOT_FOUND", `no interrupted ${workflow ? `${workflow} ` : ""}session to resume`);
  return id;
}

/** What the runners' side says of a step's lease (server/runner/liveness.ts `releaseOrphanedLease`). */
export interface StepLease {
  /** released: its runner was gone and the lease is handed over now. */
  state: "running" | "released" | "queued" | "done";
  attempt: number;
  liveRunners: number;
}

export interface ResumeDeps extends TaskDeps {
  lease: (stepId: string) => Promise<StepLease>;
}

/**
 * Resume (req F6): an interrupted session goes on from the first step that did not
 * complete; nothing completed runs again. What "interrupted" means decides what is done:
 *   - it ended cancelled, failed or out of budget: SessionResumed, and the state whose work
 *     stopped is entered again (with a new budget, when it was spent);
 *   - it waits for a person after an agent failure: the retry is chosen;
 *   - its step's runner died (killed, machine gone): the lease is released now, so a
 *     runner takes the step over at once instead of when the lease expires;
 *   - its step runs or waits for a runner, or it waits for a person's decision: nothing to
 *     do, and the answer says so.
 */
export async function resumeSession(deps: ResumeDeps, raw: z.input<typeof ZResumeInput>, actor: Actor): Promise<Resumed> {
  const input = ZResumeInput.parse(raw);
  const sessionId = input.sessionId ?? (await latestInterrupted(deps, input.workflow));
  const history = await readHistory(deps, sessionId);
  const state = foldTask(history);
  if (state.status === "finished") {
    // The decider refuses a session that was not interrupted, and a budget still spent.
    const target = interruptedIn(definitionFor(state), history, state.outcome) ?? state.fsm;
    const r = await decideOnTask(deps, sessionId, actor, {
      type: "Resume",
      state: target,
      ...(input.budget ? { budget: input.budget } : {}),
    });
    return { sessionId, status: "resumed", message: `resumed: ${target} runs again (it had ended ${state.outcome})`, version: r.version };
  }
  if (state.status !== "active") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  if (state.needed?.cause === "agent_failed") {
    const r = await decideOnTask(deps, sessionId, actor, { type: "Choose", choice: "retry" });
    return {
      sessionId,
      status: "resumed",
      message: `resumed: ${state.needed.resume ?? "the failed step"} is tried again`,
      version: r.version,
    };
  }
  if (!state.step) {
    return { sessionId, status: "waiting", message: `nothing to resume: it waits for a person in "${state.fsm}"`, version: state.version };
  }
  const lease = await deps.lease(state.step.id);
  const noRunner = lease.liveRunners === 0 ? " No runner is live: start one (npm run runner)." : "";
  if (lease.state === "released") {
    return {
      sessionId,
      status: "released",
      message: `the runner that held ${state.step.state} (attempt ${lease.attempt}) is gone: its lease is released, and the next runner continues it.${noRunner}`,
      version: state.version,
    };
  }
  if (lease.state === "running") {
    return {
      sessionId,
      status: "running",
      message: `nothing to resume: ${state.step.state} is running (attempt ${lease.attempt})`,
      version: state.version,
    };
  }
  return {
    sessionId,
    status: "queued",
    message: `nothing to resume: ${state.step.state} waits for a runner.${noRunner}`,
    version: state.version,
  };
}
