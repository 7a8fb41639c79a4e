// A task's forks (req E5, F5, F7): a new session that inherits another's events up to a
// position without copying them, then goes on on its own; the parent never changes. The fork
// itself is the fork service's (events/forks.ts); here are a task's hooks: where its fork may
// start (a started task, outside a step still running) and how the child goes on, for the four
// ways to make one:
//   - fork at any event: the state there, continued (a step in progress runs again);
//   - revert to a stage or state: everything before it kept, it runs again;
//   - modify a finished session: the change request, then the workflow's modify entry;
//   - rerun: a fork where the task started.
// Resume is no fork: ./resume.ts.
import { z } from "zod";
import type { Queryable, Tx } from "../db/pool";
import { AppError } from "../errors";
import type { Actor, AppEventOf } from "../events/catalog";
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
import { forkStream, type Forked } from "../events/forks";
import { ensureCommit, fingerprintProject } from "../workspaces";
import { sessionBundles } from "../events/bundle-chain";
import { MAX_VERSION, ZEventVersion } from "../events/versions";
import { newSessionId, sessionHistory, type TaskDeps, ZSessionRef } from "./session-ref";
import { BAKE_OFF_STATE } from "./bake-off-confirm";

const ZNote = z.string().trim().max(2000).optional();

export const ZForkInput = ZSessionRef.extend({
  /** The parent's event position (inherited events counted): the fork inherits events 1..atVersion. */
  atVersion: ZEventVersion,
  /** manual: go on from there; revert: run again from there. (A rerun starts over: tasks.rerun.) */
  reason: z.enum(["manual", "revert"]).default("manual"),
  note: ZNote,
});
export const ZRevertInput = ZSessionRef.extend({
  /** A stage (staged workflows) or a state of the session's workflow. */
  to: z.string().trim().min(1).max(100),
  /** Which entry into a state: the one in this iteration (default: the latest). */
  iteration: z.number().int().min(1).max(MAX_VERSION).optional(),
  note: ZNote,
});
export const ZModifyInput = ZSessionRef.extend({
  change: z.string().trim().min(1, "say what should change").max(20_000),
  note: ZNote,
});

/** Where any task's fork may start: a started task's position. */
async function requireStartedAt(
  deps: TaskDeps,
  sessionId: string,
  state: TaskState,
  atVersion: number,
  db: Queryable,
): Promise<StartedTask> {
  if (state.status !== "none") return state;
  const started = (await deps.store.readStream(sessionId, { db })).find((e) => e.type === "TaskStarted");
  throw new AppError(
    "INVALID_INPUT",
    started
      ? `event ${atVersion} of ${sessionId} comes before its task started (event ${started.version}): fork at ${started.version} or later`
      : `session ${sessionId} is not a task: nothing to fork`,
    { atVersion },
  );
}

/** The title a fork takes after: the session's first title (its SessionCreated, inherited through every fork). */
async function firstTitle(deps: TaskDeps, sessionId: string, db: Queryable): Promise<string> {
  const [first] = await deps.store.readStream(sessionId, { toVersion: 1, db });
  return (first?.data as { title?: string } | undefined)?.title ?? sessionId;
}

/**
 * A bake-off's parent in `bake_off` is refused as a fork's start (docs/bake-off.md, "The parent
 * while it waits"): the copy would name the same contenders as its own, and its pick would
 * deliver and end sessions of another bake-off. Its contenders are the forks to make; or fork
 * before the confirm (a new bake-off at its confirm).
 */
function refuseBakeOffParent(task: StartedTask, atVersion: number): void {
  if (task.fsm !== BAKE_OFF_STATE) return;
  throw new AppError(
    "CONFLICT",
    `event ${atVersion} is in the bake-off (its contenders are its forks): fork a contender, or fork before the confirm`,
    { state: task.fsm },
  );
}

export interface TaskFork {
  parentId: string;
  /** The child's id (default: a new one). */
  childId?: string;
  /** The child's title from the session's first one (default: the first title, with the reason). */
  title?(first: string): string;
  atVersion: number;
  reason: AppEventOf<"SessionForked">["data"]["reason"];
  note?: string;
  /** The state SessionForked names (default: the one inherited). */
  state?(task: StartedTask): string;
  /** Besides being a started task's: where this kind of fork may start. */
  mayStart?(task: StartedTask, head: number): void | Promise<void>;
  /** A fork of a finished position stays finished, with the parent's outcome (a copy, not a continuation). */
  keepsOutcome?: boolean;
  /** Events recorded between SessionForked and what `then` decides (a change request). */
  first?(task: StartedTask): Promise<Emitted[]>;
  /** What follows SessionForked in the child, decided on the forked state. */
  then(forked: TaskState, ctx: DecideContext, task: StartedTask): Emitted[];
}

/**
 * A task's fork through the fork service (events/forks.ts): SessionForked, `first`, then what
 * `then` decides, in one transaction (the caller's `tx` when given).
 */
export function forkTask(deps: TaskDeps, fork: TaskFork, actor: Actor, options: { tx?: Tx } = {}): Promise<Forked> {
  return forkStream(
    deps.store,
    {
      fold: taskFold,
      parentId: fork.parentId,
      atVersion: fork.atVersion,
      childId: fork.childId ?? newSessionId(),
      async startsFrom(inherited, { head, db }) {
        const task = await requireStartedAt(deps, fork.parentId, inherited, fork.atVersion, db);
        refuseBakeOffParent(task, fork.atVersion);
        await fork.mayStart?.(task, head);
        return { task, title: await firstTitle(deps, fork.parentId, db) };
      },
      forked: ({ task, title }) => ({
        reason: fork.reason,
        title: fork.title?.(title) ?? `${title} (${fork.reason === "manual" ? "fork" : fork.reason})`,
        workflow: definitionFor(task).id,
        state: fork.state?.(task) ?? task.fsm,
        ...(fork.note ? { note: fork.note } : {}),
        ...(fork.keepsOutcome && task.status === "finished" ? { outcome: task.outcome } : {}),
      }),
      first: async ({ task }) => (fork.first ? fork.first(task) : []),
      continuation: (state, { task }) => fork.then(state, decideContext(definitionFor(task)), task),
    },
    { actor },
    options,
  );
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
      keepsOutcome: true,
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
  const started = (await sessionHistory(deps, parentId)).find((e) => e.type === "TaskStarted");
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
  const history = await sessionHistory(deps, input.sessionId);
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
 * pipeline triages the change, a task builds it. In the caller's `tx` when given (a review's
 * follow-up records what it made of the review with the fork: server/tracker/review-follow-ups.ts).
 */
export async function modifySession(
  deps: TaskDeps,
  raw: z.input<typeof ZModifyInput>,
  actor: Actor,
  options: { tx?: Tx } = {},
): Promise<Forked> {
  const input = ZModifyInput.parse(raw);
  const head = await deps.store.streamVersion(input.sessionId, options.tx);
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
    options,
  );
}

/**
 * A person's change request of a finished session: the base's last commit must still exist
 * (in the repository, or in the session's bundle), and the project's files are fingerprinted
 * against the commit the base session started from (what changed in the project since).
 */
async function changeRequest(deps: TaskDeps, baseSessionId: string, base: StartedTask, text: string): Promise<Emitted> {
  const { repoPath, baseCommit: started } = base.config.project;
  const available = await ensureCommit(repoPath, base.head, sessionBundles(deps.pool, baseSessionId)).then(
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
