// Deliver (docs/delivery.md): an operator asks for an approved session's work to leave its worktree,
// as the project's delivery settings say (settings.json's `delivery`, the server's and the
// project's overrides): its branch pushed to the remote, pushed with a pull request, or
// merged locally into the target. The request and a `deliver` step are recorded together;
// a runner carries it out (it has the clone and the token) and records the outcome.
import { z } from "zod";
import { runSettings } from "../config/run";
import type { DeliverySettings } from "../config/schemas";
import type { Db, Queryable, Tx } from "../db/pool";
import { AppError } from "../errors";
import type { Actor, AppEvent, AppEventOf } from "../events/catalog";
import { timeOrderedId } from "../events/ids";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { serverOverride } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import { commandHandler, historyState } from "../events/command-handler";
import { foldTask, type TaskState } from "../task-engine";
import { pullRequestBody } from "../tracker/pull-request-body";
import { sessionIssue } from "../tracker/session-issue";
import { deliverySettings } from "./settings";
import { DELIVER_STEP, ZDeliverInput, type DeliverInput } from "./steps";

export interface DeliveryDeps {
  store: EventStore;
  pool: Db;
}

export const ZDeliverRequest = z.object({ sessionId: z.string().min(1).max(100) });
export const ZApproveDelivery = ZDeliverRequest.extend({ note: z.string().trim().min(1).max(2000).optional() });

/** Outcomes whose work is done and reviewed: what Deliver accepts. */
const DELIVERABLE = new Set(["approved", "completed"]);
const DELIVERY_TIMEOUT_MS = 120_000;

type DeliveryOutcome =
  | ({ type: "DeliveryCompleted" } & AppEventOf<"DeliveryCompleted">["data"])
  | ({ type: "DeliveryFailed" } & AppEventOf<"DeliveryFailed">["data"]);

/**
 * The event types deliveriesOf folds: a reader of a long session reads only these (`readStream`'s
 * `types`); the deliveries are the same.
 */
export const DELIVERY_EVENT_TYPES: readonly string[] = ["DeliveryRequested", "DeliveryCompleted", "DeliveryFailed"];

/** The deliveries of a session, newest last: each request with its outcome (null while it runs). */
export function deliveriesOf(events: readonly RecordedEvent[]) {
  const out: Array<{
    stepId: string;
    requested: AppEventOf<"DeliveryRequested">["data"] & { at: string; by: string };
    outcome: DeliveryOutcome | null;
  }> = [];
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.type === "DeliveryRequested") {
      out.push({
        stepId: e.data.stepId,
        requested: { ...e.data, at: e.recordedAt, by: `${e.metadata.actor.kind}:${e.metadata.actor.id}` },
        outcome: null,
      });
    }
    if (e.type === "DeliveryCompleted" || e.type === "DeliveryFailed") {
      const d = out.find((x) => x.stepId === e.data.stepId);
      const outcome: DeliveryOutcome = e.type === "DeliveryCompleted" ? { type: e.type, ...e.data } : { type: e.type, ...e.data };
      if (d) d.outcome = outcome;
    }
  }
  return out;
}

/** The people who approved the session's delivery, each once (actor labels, in order). */
export function approversOf(events: readonly RecordedEvent[]): string[] {
  const by: string[] = [];
  for (const e of events) {
    if (e.type !== "DeliveryApproved") continue;
    const label = `${e.metadata.actor.kind}:${e.metadata.actor.id}`;
    if (!by.includes(label)) by.push(label);
  }
  return by;
}

function requireDeliverable(
  sessionId: string,
  state: ReturnType<typeof foldTask>,
): asserts state is Extract<ReturnType<typeof foldTask>, { status: "finished" }> {
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  if (state.status !== "finished" || !DELIVERABLE.has(state.outcome)) {
    const where = state.status === "finished" ? `it ended ${state.outcome}` : "it has not finished";
    throw new AppError("PRECONDITION_FAILED", `only an approved session can be delivered: ${where}`);
  }
}

/** A session as delivery decides on it: its whole history (who approved is in the events' metadata) and its task. */
interface DeliverySubject {
  events: RecordedEvent[];
  task: TaskState;
}

/** Decisions on a session's delivery, one at a time under its stream's lock (events/command-handler.ts). */
const deliveryCommands = commandHandler(
  historyState<DeliverySubject>({ events: [], task: foldTask([]) }, (events) => ({ events, task: foldTask(events) })),
);

/**
 * A person approves the delivery (a project may ask for approvals by several different
 * people). With `delivery.auto`, the last approval needed delivers in the same append,
 * asked for by that person.
 */
export async function approveDelivery(
  deps: DeliveryDeps,
  raw: z.input<typeof ZApproveDelivery>,
  actor: Actor,
  options: { publicUrl?: string } = {},
): Promise<{ sessionId: string; approvedBy: string[]; version: number }> {
  const input = ZApproveDelivery.parse(raw);
  const me = `${actor.kind}:${actor.id}`;
  let approvedBy: string[] = [];
  const { version } = await deliveryCommands.handle(
    deps.store,
    input.sessionId,
    async ({ events, task }, at) => {
      requireDeliverable(input.sessionId, task);
      const before = approversOf(events);
      if (before.includes(me)) throw new AppError("CONFLICT", "you approved this delivery already: it needs someone else's approval");
      approvedBy = [...before, me];
      const approval: NewEvent = { type: "DeliveryApproved", data: input.note ? { note: input.note } : {} };
      return [approval, ...(await automatically(at.db, deps.store, input.sessionId, events, task, approvedBy, options.publicUrl))];
    },
    { actor },
  );
  return { sessionId: input.sessionId, approvedBy, version };
}

/**
 * The event types `approvalsOf` reads: the Delivery panel asks at every opening of a finished
 * session, which read the whole of a long one (docs/scaling.md, "Long sessions").
 */
export const APPROVAL_EVENT_TYPES: readonly string[] = ["TaskStarted", "DeliveryApproved"];

/**
 * The session's project (its latest start's, as the task fold keeps it) and who approved its
 * delivery; null when the session is not a task (it never started one).
 */
export function approvalsOf(events: readonly RecordedEvent[]): { projectId: string; approvedBy: string[] } | null {
  const started = (events as (RecordedEvent & AppEvent)[]).findLast((e) => e.type === "TaskStarted");
  return started?.type === "TaskStarted" ? { projectId: started.data.project.id, approvedBy: approversOf(events) } : null;
}

/** How many approvals the session's project asks for before delivery, and who gave one. */
export async function deliveryApprovals(deps: DeliveryDeps, sessionId: string): Promise<{ needed: number; approvedBy: string[] }> {
  const approvals = approvalsOf(await deps.store.readStream(sessionId, { types: APPROVAL_EVENT_TYPES }));
  if (!approvals) throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  const project = await getProject(deps.pool, approvals.projectId);
  const { settings } = runSettings(project, { server: (await serverOverride(deps.store)).override });
  return { needed: settings.delivery.approvals, approvedBy: approvals.approvedBy };
}

/**
 * The branch of the pull request this session's lineage opened on the same repository, if
 * any: a follow-up of a delivered session (a modify fork, docs/delivery.md "Review comments")
 * delivers onto it, so the pull request is updated rather than a second one opened.
 */
function pullRequestBranch(events: readonly RecordedEvent[], pr: { provider: string; repository: string }): string | null {
  const delivered = deliveriesOf(events).filter(
    (d) =>
      d.outcome?.type === "DeliveryCompleted" &&
      d.outcome.pullRequest?.provider === pr.provider &&
      d.requested.pullRequest?.repository === pr.repository,
  );
  return delivered.at(-1)?.requested.branch ?? null;
}

type FinishedTask = Extract<ReturnType<typeof foldTask>, { status: "finished" }>;

/** The session's branch: the prefix recorded when its task started, else the settings' (older tasks). */
const sessionBranch = (sessionId: string, state: FinishedTask, delivery: DeliverySettings) =>
  `${state.config.project.branchPrefix ?? delivery.branchPrefix}${sessionId}`;

/** The request of a delivery: what, where, by which method (and who approved, when approvals are asked for). */
function requested(stepId: string, branch: string, state: FinishedTask, delivery: DeliverySettings, approvedBy?: string[]): NewEvent {
  const pr = delivery.method === "pull_request" ? delivery.pullRequest : undefined;
  return {
    type: "DeliveryRequested",
    data: {
      stepId,
      method: delivery.method,
      branch,
      commit: state.head,
      target: delivery.target,
      remote: delivery.remote ?? null,
      pullRequest: pr ? { provider: pr.provider, repository: pr.repository } : null,
      ...(approvedBy ? { approvedBy } : {}),
    },
  };
}

/** A delivery about to be recorded: its request and its `deliver` step, to append together. */
interface DeliveryPlan {
  stepId: string;
  method: DeliverInput["method"];
  branch: string;
  events: NewEvent[];
}

/**
 * The request and its step for a finished session's work, as the settings say; refused
 * (PRECONDITION_FAILED) when the session changed nothing, lacks approvals, or the settings
 * lack what the method needs, and (CONFLICT) while another delivery of it runs.
 */
async function planDelivery(
  db: Queryable,
  store: EventStore,
  sessionId: string,
  events: readonly RecordedEvent[],
  state: FinishedTask,
  approvedBy: string[],
  publicUrl: string | undefined,
): Promise<DeliveryPlan> {
  if (state.head === state.config.project.baseCommit)
    throw new AppError("PRECONDITION_FAILED", "the session changed nothing: there is nothing to deliver");
  const running = deliveriesOf(events).find((d) => d.outcome === null);
  if (running) throw new AppError("CONFLICT", `a delivery of this session is running (asked at ${running.requested.at}): wait for it`);

  const { project, delivery, retry } = await deliverySettings(db, store, state.config.project.id);
  if (approvedBy.length < delivery.approvals) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `project ${project.id} delivers after approvals by ${delivery.approvals} different people; this session has ${approvedBy.length}${approvedBy.length ? ` (${approvedBy.join(", ")})` : ""}`,
      { approvals: delivery.approvals, approvedBy },
    );
  }
  const setting = (name: string, why: string) =>
    new NotConfigured(`project ${project.id} cannot deliver by ${delivery.method}: set delivery.${name} (${why})`, {
      fieldErrors: { [`delivery.${name}`]: [why] },
    });
  if (delivery.method !== "merge" && !delivery.remote) throw setting("remote", "the git remote to push to");
  if (delivery.method === "pull_request" && !delivery.pullRequest)
    throw setting("pullRequest", "the provider and repository of the pull request");
  const pr = delivery.method === "pull_request" && delivery.pullRequest ? delivery.pullRequest : null;
  const branch = (pr && pullRequestBranch(events, pr)) ?? sessionBranch(sessionId, state, delivery);
  const stepId = timeOrderedId();
  const issue = await sessionIssue(db, sessionId);
  const { title, body } = pullRequestBody(sessionId, events, { publicUrl, issue, pullRequest: pr });
  const input: DeliverInput = ZDeliverInput.parse({
    method: delivery.method,
    repoPath: state.config.project.repoPath,
    branch,
    commit: state.head,
    bundle: state.bundle ?? null,
    remote: delivery.remote ?? null,
    target: delivery.target,
    tokenEnv: delivery.tokenEnv ?? null,
    pullRequest: pr ? { provider: pr.provider, apiBaseUrl: pr.apiBaseUrl ?? null, repository: pr.repository, title, body } : null,
    mergeMessage: `Merge ${branch}: ${title}`,
    // With no remote, the merge is into the registered repository itself, never a runner's clone of it.
    needsRegisteredRepository: delivery.method === "merge" && !delivery.remote,
  });
  return {
    stepId,
    method: delivery.method,
    branch,
    events: [
      requested(stepId, branch, state, delivery, delivery.approvals > 0 ? approvedBy : undefined),
      {
        type: "StepScheduled",
        data: {
          stepId,
          kind: DELIVER_STEP,
          input,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          maxAttempts: retry.maxAttempts,
          backoffMs: retry.backoffMs,
        },
      },
    ],
  };
}

/** Settings that lack what the delivery method needs: refused when asked, recorded as failed when automatic. */
class NotConfigured extends AppError {
  constructor(message: string, details: Record<string, unknown>) {
    super("PRECONDITION_FAILED", message, details);
  }
}

export async function deliverSession(
  deps: DeliveryDeps,
  raw: z.input<typeof ZDeliverRequest>,
  actor: Actor,
  options: { publicUrl?: string } = {},
): Promise<{ sessionId: string; stepId: string; method: DeliverInput["method"]; branch: string; version: number }> {
  const { sessionId } = ZDeliverRequest.parse(raw);
  let planned: DeliveryPlan | undefined;
  const { version } = await deliveryCommands.handle(
    deps.store,
    sessionId,
    async ({ events, task }, at) => {
      requireDeliverable(sessionId, task);
      planned = await planDelivery(at.db, deps.store, sessionId, events, task, approversOf(events), options.publicUrl);
      return planned.events;
    },
    { actor },
  );
  const plan = planned!;
  return { sessionId, stepId: plan.stepId, method: plan.method, branch: plan.branch, version };
}

/** Who asks for an automatic delivery. */
export const AUTO_DELIVERY_ACTOR = { kind: "system", id: "auto-delivery" } as const;

/**
 * What the project's `delivery.auto` asks for once a session is approved and has the approvals
 * it needs: its delivery (request and step), or, when the settings lack what the method needs,
 * a failed delivery (`not_configured`), so the reason shows where the delivery would have.
 * Nothing when the project delivers by hand, the session changed nothing, approvals are missing
 * or a delivery was asked for already (automatic once: after it, a person delivers by hand).
 */
async function automatically(
  db: Queryable,
  store: EventStore,
  sessionId: string,
  events: readonly RecordedEvent[],
  state: FinishedTask,
  approvedBy: string[],
  publicUrl: string | undefined,
): Promise<NewEvent[]> {
  const { delivery } = await deliverySettings(db, store, state.config.project.id);
  if (!delivery.auto || state.head === state.config.project.baseCommit) return [];
  // A bake-off's contender is delivered only if a person picks it (docs/bake-off.md).
  if (events.some((e) => e.type === "BakeOffContender")) return [];
  // Its own deliveries: a follow-up fork inherits its parent's, and is delivered automatically all the same.
  const own = events.filter((e) => e.streamId === sessionId);
  if (approvedBy.length < delivery.approvals || deliveriesOf(own).length > 0) return [];
  try {
    return (await planDelivery(db, store, sessionId, events, state, approvedBy, publicUrl ?? process.env.NEXTAUTH_URL)).events;
  } catch (err) {
    if (!(err instanceof NotConfigured)) throw err;
    const stepId = timeOrderedId();
    return [
      requested(stepId, sessionBranch(sessionId, state, delivery), state, delivery),
      { type: "DeliveryFailed", data: { stepId, method: delivery.method, errorClass: "not_configured", message: err.message, files: [] } },
    ];
  }
}

/**
 * Delivery on approval (the project's `delivery.auto`), inside the transaction that finished
 * the session (a step's outcome, which holds the stream's lock): asked for by the system.
 */
export async function deliverOnApproval(tx: Tx, store: EventStore, sessionId: string): Promise<void> {
  await deliveryCommands.handle(
    store,
    sessionId,
    ({ events, task }, at) =>
      task.status === "finished" && DELIVERABLE.has(task.outcome)
        ? automatically(at.db, store, sessionId, events, task, approversOf(events), undefined)
        : [],
    { actor: AUTO_DELIVERY_ACTOR },
    { tx },
  );
}

/**
 * A bake-off's winner delivered as Deliver would (docs/bake-off.md), in the pick's transaction,
 * which holds the session's stream lock: the request and its step, or the refusal (not
 * deliverable, approvals missing, settings lacking what the method needs).
 */
export async function deliverInTx(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  actor: Actor,
): Promise<{ stepId: string; method: DeliverInput["method"]; branch: string }> {
  let planned: DeliveryPlan | undefined;
  await deliveryCommands.handle(
    store,
    sessionId,
    async ({ events, task }, at) => {
      requireDeliverable(sessionId, task);
      planned = await planDelivery(at.db, store, sessionId, events, task, approversOf(events), process.env.NEXTAUTH_URL);
      return planned.events;
    },
    { actor },
    { tx },
  );
  const plan = planned!;
  return { stepId: plan.stepId, method: plan.method, branch: plan.branch };
}
