// Cleaning up the workspaces of finished, unsuccessful sessions (req F14; docs/operations.md,
// "Cleaning up failed sessions"). A person asks for one session (the session page's "Clean up
// workspace"), for every session that ended so long ago (`catcafe sessions prune`), or the
// setting `sessions.pruneFailedAfterDays` asks on its own (pruneOnSchedule, run by the runners).
// Each request is a WorkspacePruneRequested event and a `prune_workspace` step in the session's
// stream, appended together; a runner removes the worktree and refs (./steps.ts) and records
// SessionPruned (./reactor.ts). Nothing else of the session is deleted: its events and blobs stay,
// so replay works, and a fork, revert, modify or resume rebuilds the workspace from the bundles
// its events recorded. A session whose workspace was asked to be cleaned up is not asked again.
import { z } from "zod";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import { DEFAULT_SETTINGS } from "../config/schemas";
import { runSettings } from "../config/run";
import type { Db, Queryable } from "../db/pool";
import { AppError } from "../errors";
import { actorLabel, type Actor, type AppEvent } from "../events/catalog";
import { commandHandler, historyState } from "../events/command-handler";
import { timeOrderedId } from "../events/ids";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { serverOverride } from "../projects/config-edits";
import { listProjectRecords } from "../projects/projects";
import { foldTask, type TaskState } from "../task-engine";
import { PRUNE_STEP, PRUNE_TIMEOUT_MS, ZPruneInput } from "./steps";

export interface PruneDeps {
  store: EventStore;
  pool: Db;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** At most this many sessions per request: a large backlog is cleaned up by asking again. */
export const PRUNE_BATCH = 200;
const RETRY = { maxAttempts: 3, backoffMs: [2_000, 10_000] };

const ZSessionId = z.string().min(1).max(100);
export const ZPruneSessionInput = z.object({ sessionId: ZSessionId });
export type TPruneSessionInput = z.input<typeof ZPruneSessionInput>;

/** `sessions.prune`'s input (the CLI's `catcafe sessions prune`). */
export const ZPruneSessionsInput = z.object({
  /** Sessions that ended more than this many days ago (0: every one that ended). */
  olderThanDays: z.number().int().min(0).max(36_500),
  /** The outcomes cleaned up (`--failed`: failed); a successful outcome (its work may still be delivered) never. */
  outcomes: z
    .array(z.string().trim().min(1).max(100))
    .min(1)
    .max(20)
    .default(["failed"])
    .refine((list) => !list.some((o) => SUCCESS_OUTCOMES.includes(o)), {
      message: `a successful session (${SUCCESS_OUTCOMES.join(", ")}) is never cleaned up: its work may still be delivered`,
    }),
  /** List what would be cleaned up; ask for nothing. */
  dryRun: z.boolean().default(false),
});
export type TPruneSessionsInput = z.input<typeof ZPruneSessionsInput>;

/** Where a session's clean-up stands, as its page shows it. */
export type PruneStatus =
  | { status: "none" }
  | {
      status: "asked" | "pruned" | "failed";
      stepId: string;
      askedAt: string;
      askedBy: string;
      prunedAt: string | null;
      message: string | null;
    };

/**
 * The event types pruneStatusOf folds: a reader of a long session reads only these (`readStream`'s
 * `types`); the status is the same.
 */
export const PRUNE_STATUS_TYPES: readonly string[] = ["SessionResumed", "WorkspacePruneRequested", "SessionPruned", "WorkspacePruneFailed"];

/**
 * The latest clean-up of the session's workspace since it last ended, from its own events (a
 * fork does not inherit its parent's clean-up: it has a workspace of its own).
 */
export function pruneStatusOf(sessionId: string, events: readonly RecordedEvent[]): PruneStatus {
  let latest: Asked | null = null;
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    // Resumed, it has a workspace again.
    if (e.type === "SessionResumed") latest = null;
    if (e.streamId !== sessionId) continue;
    if (e.type === "WorkspacePruneRequested") {
      const by = actorLabel(e.metadata.actor);
      latest = { status: "asked", stepId: e.data.stepId, askedAt: e.recordedAt, askedBy: by, prunedAt: null, message: null };
    } else if (e.type === "SessionPruned" || e.type === "WorkspacePruneFailed") {
      latest = outcomeOf(latest, e);
    }
  }
  return latest ?? { status: "none" };
}

type Asked = Exclude<PruneStatus, { status: "none" }>;

/** A clean-up's outcome onto the request it answers (one of another request leaves it as it is). */
function outcomeOf(
  latest: Asked | null,
  e: RecordedEvent & Extract<AppEvent, { type: "SessionPruned" | "WorkspacePruneFailed" }>,
): Asked | null {
  if (!latest || e.data.stepId !== latest.stepId) return latest;
  return e.type === "SessionPruned"
    ? { ...latest, status: "pruned", prunedAt: e.recordedAt }
    : { ...latest, status: "failed", message: e.data.message };
}

type Finished = Extract<TaskState, { status: "finished" }>;

/** Only a finished session that did not succeed is cleaned up (a running or approved one never). */
function requirePrunable(sessionId: string, task: TaskState): asserts task is Finished {
  if (task.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  if (task.status !== "finished")
    throw new AppError("PRECONDITION_FAILED", `session ${sessionId} has not finished: only a finished session's workspace is cleaned up`);
  if (SUCCESS_OUTCOMES.includes(task.outcome))
    throw new AppError(
      "PRECONDITION_FAILED",
      `session ${sessionId} ended ${task.outcome}: its work may still be delivered, so its workspace is never cleaned up`,
    );
}

/**
 * The refs only this session needed: the pins of the commits it made (each is in the bundle its
 * WorkspaceCommitted recorded, so it can be restored) and its delivery branch, if one was made.
 */
export function sessionRefs(sessionId: string, events: readonly RecordedEvent[], task: Finished): string[] {
  const pins = new Set<string>();
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.streamId !== sessionId || e.type !== "WorkspaceCommitted") continue;
    if (e.data.empty || !e.data.bundle || e.data.commit === task.config.project.baseCommit) continue;
    pins.add(`refs/catcafe/pins/${e.data.commit}`);
  }
  const prefix = task.config.project.branchPrefix ?? DEFAULT_SETTINGS.delivery.branchPrefix;
  return [...pins, `refs/heads/${prefix}${sessionId}`];
}

/** What a request answers: the request, the same however often it is asked again. */
export interface PruneRequest {
  sessionId: string;
  stepId: string;
  askedAt: string;
  askedBy: string;
}

interface PruneSubject {
  events: RecordedEvent[];
  task: TaskState;
}

/** Decisions on a session's clean-up, one at a time under its stream's lock (events/command-handler.ts). */
const pruneCommands = commandHandler(
  historyState<PruneSubject>({ events: [], task: foldTask([]) }, (events) => ({ events, task: foldTask(events) })),
);

type Why = { reason: "session"; olderThanDays: null } | { reason: "older_than" | "automatic"; olderThanDays: number };

/** Asks for one session's clean-up; nothing more when it was asked already (and not failed). */
async function requestPrune(deps: PruneDeps, sessionId: string, why: Why, actor: Actor): Promise<PruneRequest> {
  const handled = await pruneCommands.handle(
    deps.store,
    sessionId,
    ({ events, task }) => {
      requirePrunable(sessionId, task);
      const now = pruneStatusOf(sessionId, events);
      if (now.status === "asked" || now.status === "pruned") return [];
      const stepId = timeOrderedId();
      const refs = sessionRefs(sessionId, events, task);
      const input = ZPruneInput.parse({ repoPath: task.config.project.repoPath, refs, requestedBy: actorLabel(actor) });
      const asked: NewEvent[] = [
        { type: "WorkspacePruneRequested", data: { stepId, ...why, refs } },
        { type: "StepScheduled", data: { stepId, kind: PRUNE_STEP, input, timeoutMs: PRUNE_TIMEOUT_MS, ...RETRY } },
      ];
      return asked;
    },
    { actor },
  );
  const status = pruneStatusOf(sessionId, [...handled.state.events, ...handled.recorded]);
  if (status.status === "none") throw new Error(`session ${sessionId}: a clean-up was decided but none is recorded`);
  return { sessionId, stepId: status.stepId, askedAt: status.askedAt, askedBy: status.askedBy };
}

/** The session page's "Clean up workspace": one finished, unsuccessful session, whatever its age. */
export async function pruneSession(deps: PruneDeps, raw: TPruneSessionInput, actor: Actor): Promise<PruneRequest> {
  const { sessionId } = ZPruneSessionInput.parse(raw);
  return requestPrune(deps, sessionId, { reason: "session", olderThanDays: null }, actor);
}

export interface PruneCandidate {
  sessionId: string;
  title: string;
  outcome: string;
  projectId: string | null;
  endedAt: Date;
}

/**
 * Sessions that ended with one of `outcomes` before `endedBefore` and whose workspace was not
 * asked to be cleaned up since (a failed clean-up is asked again only when `retryFailed`), oldest
 * first. "Ended": their own latest SessionFinalized (a fork that is a finished copy never ran, and has none).
 */
export async function pruneCandidates(
  db: Queryable,
  filter: { outcomes: readonly string[]; endedBefore: Date; projectId?: string; retryFailed: boolean; limit?: number },
): Promise<PruneCandidate[]> {
  const result = await db.query<{ id: string; title: string; outcome: string; project_id: string | null; ended_at: Date }>(
    `SELECT s.id, s.title, s.outcome, s.project_id, f.recorded_at AS ended_at
     FROM sessions s
     CROSS JOIN LATERAL (
       SELECT e.version, e.recorded_at FROM events e
       WHERE e.stream_id = s.id AND e.type = 'SessionFinalized' ORDER BY e.version DESC LIMIT 1
     ) f
     WHERE s.outcome = ANY($1::text[]) AND f.recorded_at < $2 AND ($3::text IS NULL OR s.project_id = $3)
       AND NOT EXISTS (
         SELECT 1 FROM events p
         WHERE p.stream_id = s.id AND p.type = 'WorkspacePruneRequested' AND p.version > f.version
           AND NOT ($4 AND EXISTS (
             SELECT 1 FROM events x
             WHERE x.stream_id = s.id AND x.type = 'WorkspacePruneFailed' AND x.data->>'stepId' = p.data->>'stepId'
           ))
       )
     ORDER BY f.recorded_at, s.id
     LIMIT $5`,
    [filter.outcomes, filter.endedBefore, filter.projectId ?? null, filter.retryFailed, filter.limit ?? PRUNE_BATCH],
  );
  return result.rows.map((r) => ({ sessionId: r.id, title: r.title, outcome: r.outcome, projectId: r.project_id, endedAt: r.ended_at }));
}

export interface PruneSessionsResult {
  dryRun: boolean;
  olderThanDays: number;
  outcomes: string[];
  /** What was asked for (or, with dryRun, would be). */
  sessions: Array<PruneCandidate & { stepId: string | null }>;
  /** Sessions that could not be asked for (e.g. resumed meanwhile), with why. */
  skipped: Array<{ sessionId: string; message: string }>;
}

async function requestEach(
  deps: PruneDeps,
  candidates: PruneCandidate[],
  why: Why,
  actor: Actor,
): Promise<Pick<PruneSessionsResult, "sessions" | "skipped">> {
  const sessions: PruneSessionsResult["sessions"] = [];
  const skipped: PruneSessionsResult["skipped"] = [];
  for (const c of candidates) {
    try {
      const asked = await requestPrune(deps, c.sessionId, why, actor);
      sessions.push({ ...c, stepId: asked.stepId });
    } catch (err) {
      // Decided under the session's lock: it may have been resumed since the list was read.
      if (err instanceof AppError && err.code === "PRECONDITION_FAILED") skipped.push({ sessionId: c.sessionId, message: err.message });
      else throw err;
    }
  }
  return { sessions, skipped };
}

/** `catcafe sessions prune`: every session with one of the outcomes that ended more than N days ago. */
export async function pruneSessions(
  deps: PruneDeps,
  raw: TPruneSessionsInput,
  actor: Actor,
  options: { now?: Date } = {},
): Promise<PruneSessionsResult> {
  const input = ZPruneSessionsInput.parse(raw);
  const endedBefore = new Date((options.now ?? new Date()).getTime() - input.olderThanDays * DAY_MS);
  const candidates = await pruneCandidates(deps.pool, { outcomes: input.outcomes, endedBefore, retryFailed: true });
  const base = { dryRun: input.dryRun, olderThanDays: input.olderThanDays, outcomes: input.outcomes };
  if (input.dryRun) return { ...base, sessions: candidates.map((c) => ({ ...c, stepId: null })), skipped: [] };
  return { ...base, ...(await requestEach(deps, candidates, { reason: "older_than", olderThanDays: input.olderThanDays }, actor)) };
}

/** How often the runners apply the setting (runner/main.ts): days are its unit, an hour is close enough. */
export const AUTO_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/** Who asks for an automatic clean-up. */
export const AUTO_PRUNE_ACTOR = { kind: "system", id: "auto-prune" } as const;
/** Outcomes the setting cleans up. */
const AUTO_OUTCOMES = ["failed"];

/** One pass at a time across every process that runs it (a session-level advisory lock, tried, never waited for). */
const AUTO_PRUNE_LOCK = "catcafe-auto-prune";

/**
 * The setting `sessions.pruneFailedAfterDays` applied once: for each project where it is set
 * (settings.json, the server's overrides, the project's), its failed sessions that ended more
 * than that many days ago are asked to be cleaned up, by the system. A failed clean-up is not
 * asked again automatically (a person looks at why). `locked`: another process was running a
 * pass, so this one did nothing.
 */
export async function pruneOnSchedule(
  deps: PruneDeps,
  options: { now?: Date; settingsFile?: string } = {},
): Promise<{ locked: boolean; sessions: string[]; skipped: Array<{ sessionId: string; message: string }> }> {
  const client = await deps.pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on("error", onError);
  try {
    const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 7)) AS ok", [AUTO_PRUNE_LOCK]);
    if (!got.rows[0]?.ok) return { locked: true, sessions: [], skipped: [] };
    try {
      const server = (await serverOverride(deps.store)).override;
      const sessions: string[] = [];
      const skipped: Array<{ sessionId: string; message: string }> = [];
      const now = options.now ?? new Date();
      for (const project of await listProjectRecords(deps.pool)) {
        const { settings } = runSettings(project, { server, ...(options.settingsFile ? { settingsFile: options.settingsFile } : {}) });
        const days = settings.sessions.pruneFailedAfterDays;
        if (days === null) continue;
        const endedBefore = new Date(now.getTime() - days * DAY_MS);
        const candidates = await pruneCandidates(deps.pool, {
          outcomes: AUTO_OUTCOMES,
          endedBefore,
          projectId: project.id,
          retryFailed: false,
        });
        const done = await requestEach(deps, candidates, { reason: "automatic", olderThanDays: days }, AUTO_PRUNE_ACTOR);
        sessions.push(...done.sessions.map((s) => s.sessionId));
        skipped.push(...done.skipped);
      }
      return { locked: false, sessions, skipped };
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 7))", [AUTO_PRUNE_LOCK]).catch(() => {});
    }
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
