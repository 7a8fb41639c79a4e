// When the tracker hears from a session (docs/delivery.md, "The tracker"): on each change of the
// session's state, the steps that tell the tracker, appended to the session's stream under its
// lock — by the runner in the transaction of a step's outcome, and after an operator's confirm
// or cancel:
//   - the issue comment, once per session (its lineage: a follow-up fork does not comment again),
//     when the proposal is ready (the session waits for a confirm), or at the first step after a
//     confirm by the system (the intake's automatic confirm);
//   - the commit status of the branch head, once per (state, sha), for projects that open pull
//     requests (delivery.pullRequest, with a remote the branch is pushed to), from the first build
//     on: before it, the head is the target's own commit, which is not the session's to mark.
import type { Db, Queryable, Tx } from "../db/pool";
import { logger } from "../log";
import { timeOrderedId } from "../events/ids";
import { runSettings } from "../config/run";
import type { DeliverySettings } from "../config/schemas";
import type { AppEvent } from "../events/catalog";
import { commandHandler, historyState } from "../events/command-handler";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { serverOverride } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import { foldTask, type StartedTask } from "../task-engine";
import { sessionLink } from "./pull-request-body";
import { sessionIssue, type SessionIssue } from "./session-issue";
import {
  COMMIT_STATUS_STEP,
  ISSUE_COMMENT_STEP,
  TRACKER_STEP,
  type CommitStatusInput,
  type IssueCommentInput,
  ZCommitStatusInput,
  ZIssueCommentInput,
} from "./step-kinds";

export const TRACKER_ACTOR = { kind: "system", id: "tracker" } as const;
/** The proposal in the issue comment is cut to this many characters. */
export const MAX_PROPOSAL_CHARS = 20_000;
const SUCCESS = new Set(["approved", "completed"]);

type Event = RecordedEvent & AppEvent;

const scheduledOf = (events: readonly RecordedEvent[], kind: string) =>
  (events as readonly Event[]).flatMap((e) => (e.type === "StepScheduled" && e.data.kind === kind ? [e.data.input] : []));

/** The session's state as a commit status. */
export function commitState(task: StartedTask): CommitStatusInput["state"] {
  if (task.status === "finished") return SUCCESS.has(task.outcome) ? "success" : task.outcome === "cancelled" ? "cancelled" : "failure";
  return task.fsm === "awaiting_operator_confirm" ? "awaiting_confirm" : "running";
}

const DESCRIPTIONS: Record<CommitStatusInput["state"], (task: StartedTask) => string> = {
  awaiting_confirm: () => "Cat Cafe: waits for a person's confirm",
  running: (t) => `Cat Cafe: working (iteration ${t.iteration})`,
  success: (t) => `Cat Cafe: ${t.status === "finished" ? t.outcome : "approved"}`,
  failure: (t) => `Cat Cafe: ${t.status === "finished" ? t.outcome : "failed"}`,
  cancelled: () => "Cat Cafe: cancelled",
};

/** The roundtable's proposal: each discussion turn of the last round, cut to the size limit. */
export function proposalText(events: readonly RecordedEvent[]): string {
  const turns = (events as readonly Event[]).flatMap((e) =>
    e.type === "AgentOutputRecorded" && e.data.phase === "discussion" ? [`**${e.data.role}**: ${e.data.preview}`] : [],
  );
  const text = turns.join("\n\n");
  return text.length > MAX_PROPOSAL_CHARS ? `${text.slice(0, MAX_PROPOSAL_CHARS)}\n\n… (cut)` : text;
}

export const commentMarker = (sessionId: string) => `<!-- catcafe:session ${sessionId} -->`;

function issueCommentBody(sessionId: string, events: readonly RecordedEvent[], link: string | null, automatic: boolean): string {
  const session = link ? `[\`${sessionId}\`](${link})` : `\`${sessionId}\``;
  const wait = automatic
    ? "It was confirmed automatically (the project allows it for this trigger): the work has started."
    : `**It waits for a person's confirm in Cat Cafe** before any code is written${link ? `: ${link}` : "."}`;
  const proposal = proposalText(events);
  return [
    commentMarker(sessionId),
    `Cat Cafe took this issue as session ${session}.`,
    "",
    wait,
    ...(proposal ? ["", "<details><summary>The proposal</summary>", "", proposal, "", "</details>"] : []),
  ].join("\n");
}

const step = (newId: () => string, kind: string, input: IssueCommentInput | CommitStatusInput): NewEvent => ({
  type: "StepScheduled",
  data: { stepId: newId(), kind, input, ...TRACKER_STEP },
});

/** The issue comment the session needs now, if any. */
function issueComment(
  sessionId: string,
  events: readonly RecordedEvent[],
  task: StartedTask,
  issue: SessionIssue,
  delivery: DeliverySettings,
  publicUrl: string | undefined,
): IssueCommentInput | null {
  if (scheduledOf(events, ISSUE_COMMENT_STEP).length) return null;
  const waiting = task.status === "active" && task.fsm === "awaiting_operator_confirm";
  const automatic = (events as readonly Event[]).some((e) => e.type === "OperatorConfirmed" && e.metadata.actor.kind === "system");
  if (!waiting && !automatic) return null;
  const pr = delivery.pullRequest;
  return ZIssueCommentInput.parse({
    provider: issue.provider,
    apiBaseUrl: pr && pr.provider === issue.provider ? (pr.apiBaseUrl ?? null) : null,
    repository: issue.repository,
    tokenEnv: delivery.tokenEnv ?? null,
    issueNumber: issue.issueNumber,
    body: issueCommentBody(sessionId, events, sessionLink(publicUrl, sessionId), automatic && !waiting),
    marker: commentMarker(sessionId),
  });
}

/** The commit status the session's head needs now, if any (once per state and sha). */
function commitStatus(
  sessionId: string,
  events: readonly RecordedEvent[],
  task: StartedTask,
  delivery: DeliverySettings,
  publicUrl: string | undefined,
) {
  const pr = delivery.pullRequest;
  if (!pr || !delivery.remote || task.head === task.config.project.baseCommit) return null;
  const state = commitState(task);
  const posted = scheduledOf(events, COMMIT_STATUS_STEP).some((i) => {
    const input = ZCommitStatusInput.safeParse(i);
    return input.success && input.data.sha === task.head && input.data.state === state;
  });
  if (posted) return null;
  return ZCommitStatusInput.parse({
    provider: pr.provider,
    apiBaseUrl: pr.apiBaseUrl ?? null,
    repository: pr.repository,
    tokenEnv: delivery.tokenEnv ?? null,
    sha: task.head,
    state,
    description: DESCRIPTIONS[state](task),
    targetUrl: sessionLink(publicUrl, sessionId),
  });
}

async function deliveryOf(db: Queryable, store: EventStore, projectId: string): Promise<DeliverySettings> {
  const project = await getProject(db, projectId);
  return runSettings(project, { server: (await serverOverride(store, db)).override }).settings.delivery;
}

/** The tracker's steps the session needs now, given its history (its lineage's events included). */
export async function trackerSteps(
  db: Queryable,
  store: EventStore,
  sessionId: string,
  events: readonly RecordedEvent[],
  options: { publicUrl?: string; newId: () => string },
): Promise<NewEvent[]> {
  const task = foldTask(events);
  if (task.status === "none") return [];
  const delivery = await deliveryOf(db, store, task.config.project.id);
  const issue = await sessionIssue(db, sessionId);
  const out: NewEvent[] = [];
  const comment = issue ? issueComment(sessionId, events, task, issue, delivery, options.publicUrl) : null;
  if (comment) out.push(step(options.newId, ISSUE_COMMENT_STEP, comment));
  const status = commitStatus(sessionId, events, task, delivery, options.publicUrl);
  if (status) out.push(step(options.newId, COMMIT_STATUS_STEP, status));
  return out;
}

const trackerCommands = commandHandler(historyState<RecordedEvent[]>([], (events) => events));

/**
 * Schedules what the tracker needs to hear of the session now: in `tx` (a step's outcome, which
 * holds the stream's lock), or in a transaction of its own (after an operator's command).
 */
export async function scheduleTrackerSteps(
  deps: { store: EventStore; pool?: Db },
  sessionId: string,
  options: { tx?: Tx; publicUrl?: string; newId: () => string },
): Promise<number> {
  const publicUrl = options.publicUrl ?? process.env.NEXTAUTH_URL;
  const { events } = await trackerCommands.handle(
    deps.store,
    sessionId,
    (history, at) => trackerSteps(at.db, deps.store, sessionId, history, { newId: options.newId, ...(publicUrl ? { publicUrl } : {}) }),
    { actor: TRACKER_ACTOR },
    options.tx ? { tx: options.tx } : {},
  );
  return events.length;
}

/**
 * After an operator's command (confirm, cancel): the tracker's steps the new state calls for. Never
 * fails the command that was recorded: a defect is logged (the next step's outcome schedules them).
 */
export async function tellTracker(deps: { store: EventStore }, sessionId: string): Promise<void> {
  await scheduleTrackerSteps(deps, sessionId, { newId: timeOrderedId }).catch((err: unknown) => {
    logger.error({ err: String(err), sessionId }, "could not schedule the tracker's steps of a session");
  });
}
