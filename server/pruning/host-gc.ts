// Each runner host cleans up its own worktrees (docs/operations.md, "Worktrees on every host";
// docs/scaling.md): a session that hopped between hosts leaves a worktree on each, and the
// `prune_workspace` step runs on one host only. So every runner, in its periodic pass, removes
// from its own workspaces directory (and its own clone) what the policy says goes:
//   - at once, the worktree of a session whose latest step ran on another host (the host of the
//     latest step keeps the one that matters; a step back here rebuilds from the bundles);
//   - a finished session's worktree (any outcome: its work is in its commits, branch and bundles)
//     `workspaces.keepFinishedDays` after it ended, and a cleaned-up (pruned) session's, with
//     the pins of its commits and its local branch — but never a successful session's branch in
//     the registered repository itself (it may be what is delivered), and never a remote's.
// Each removal is a WorktreeRemoved event (host, path) in the session's stream, recorded once
// per host: a second pass finds nothing more to do. One pass per host at a time (an advisory
// lock keyed by host and directory: hosts never wait for each other).
import fs from "node:fs";
import path from "node:path";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import { runSettings } from "../config/run";
import type { Db, Queryable } from "../db/pool";
import { isAppError } from "../errors";
import type { AppEvent } from "../events/catalog";
import { commandHandler, historyState } from "../events/command-handler";
import type { EventStore } from "../events/store";
import { pruningCatalog } from "../events/pruning-catalog";
import type { NewEvent, RecordedEvent } from "../events/types";
import { serverOverride } from "../projects/config-edits";
import { listProjectRecords } from "../projects/projects";
import { withWorktreeLock } from "../runner/repo-lock";
import { foldTask, type TaskState } from "../task-engine";
import { deleteRefs, removeWorkspace } from "../workspaces";
import { assertValidSessionId } from "../workspaces/paths";
import { inspectCheckout } from "../workspaces/repo";
import { pruneStatusOf, sessionRefs } from "./service";
import { PRUNE_STEP } from "./steps";

export interface HostGcDeps {
  store: EventStore;
  pool: Db;
  /** This runner's host, as its row and its WorktreePlaced events name it. */
  host: string;
  /** This runner's workspaces directory (CATCAFE_WORKSPACES_DIR). */
  workspacesRoot: string;
  /** This runner's clone of a project registered at `repoPath` (CATCAFE_REPOSITORY_PATHS). */
  repositoryPath?: (repoPath: string) => string;
  settingsFile?: string;
}

export interface HostGcRemoval {
  sessionId: string;
  path: string;
  removed: boolean;
  reason: "not_last_host" | "finished" | "pruned";
  refsDeleted: string[];
}

export interface HostGcResult {
  /** Another process of this host was running a pass: this one did nothing. */
  locked: boolean;
  removed: HostGcRemoval[];
  /** Sessions whose clean-up failed on this host, with why (tried again next pass). */
  failed: Array<{ sessionId: string; message: string }>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const ZRemoved = pruningCatalog.WorktreeRemoved.schema;
export const HOST_GC_ACTOR = { kind: "system", id: "workspace-gc" } as const;
/**
 * Steps that use no worktree: where they ran says nothing of where the session's work is. The
 * delivery's step kind is named here, not imported: delivery/ is not this layer's to import.
 */
const NO_WORKTREE_KINDS = new Set([PRUNE_STEP, "deliver"]);

/** One pass per host and workspaces directory at a time; other hosts' passes never wait for it. */
const lockKey = (deps: HostGcDeps) => `catcafe-workspace-gc:${deps.host}:${path.resolve(deps.workspacesRoot)}`;

/** The policy applied once on this host (runner/main.ts runs it every AUTO_PRUNE_INTERVAL_MS). */
export async function collectHostWorkspaces(deps: HostGcDeps, options: { now?: Date } = {}): Promise<HostGcResult> {
  const client = await deps.pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on("error", onError);
  try {
    const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 7)) AS ok", [lockKey(deps)]);
    if (!got.rows[0]?.ok) return { locked: true, removed: [], failed: [] };
    try {
      return { locked: false, ...(await pass(deps, options.now ?? new Date())) };
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 7))", [lockKey(deps)]).catch(() => {});
    }
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

async function pass(deps: HostGcDeps, now: Date): Promise<Omit<HostGcResult, "locked">> {
  const keepDays = await keepDaysByProject(deps);
  const removed: HostGcRemoval[] = [];
  const failed: HostGcResult["failed"] = [];
  for (const sessionId of candidates(deps)) {
    try {
      const done = await collectSession(deps, sessionId, keepDays, now);
      if (done) removed.push(done);
    } catch (err) {
      failed.push({ sessionId, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return { removed, failed };
}

/** `workspaces.keepFinishedDays` in force for each project (settings.json, the server's overrides, the project's). */
async function keepDaysByProject(deps: HostGcDeps): Promise<Map<string, number | null>> {
  const server = (await serverOverride(deps.store)).override;
  const byProject = new Map<string, number | null>();
  for (const project of await listProjectRecords(deps.pool)) {
    const { settings } = runSettings(project, { server, ...(deps.settingsFile ? { settingsFile: deps.settingsFile } : {}) });
    byProject.set(project.id, settings.workspaces.keepFinishedDays);
  }
  return byProject;
}

/**
 * Where a host notes the sessions whose worktree it removed while their pins and branch stay in
 * its clone (not the last host): one empty file per session, in a directory whose name is no
 * session id. Host-local, like the worktrees and the clone it speaks of.
 */
const PENDING_DIR = "+refs-pending";

const rootOf = (deps: HostGcDeps) => {
  const root = path.resolve(deps.workspacesRoot);
  return fs.existsSync(root) ? fs.realpathSync(root) : root;
};

function sessionNames(dir: string, kind: "directories" | "files"): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => (kind === "directories" ? e.isDirectory() : e.isFile()) && isSessionId(e.name))
    .map((e) => e.name);
}

/**
 * Sessions this host may hold something of: a worktree in its workspaces directory, or pins and
 * a branch left in its clone after their worktree went (the pending notes). Read from the host's
 * own directories: no pass reads the whole event log.
 */
function candidates(deps: HostGcDeps): string[] {
  const root = rootOf(deps);
  return [...new Set([...sessionNames(root, "directories"), ...sessionNames(path.join(root, PENDING_DIR), "files")])].sort();
}

function notePending(deps: HostGcDeps, sessionId: string, pending: boolean): void {
  const note = path.join(rootOf(deps), PENDING_DIR, sessionId);
  if (pending) {
    fs.mkdirSync(path.dirname(note), { recursive: true });
    fs.writeFileSync(note, "");
  } else {
    fs.rmSync(note, { force: true });
  }
}

function isSessionId(name: string): boolean {
  try {
    assertValidSessionId(name);
    return true;
  } catch {
    return false;
  }
}

interface Subject {
  events: RecordedEvent[];
  task: TaskState;
}

/** Each removal decided under the session's stream lock, on its events as they are then. */
const gcCommands = commandHandler(
  historyState<Subject>({ events: [], task: foldTask([]) }, (events) => ({ events, task: foldTask(events) })),
);

type Verdict = { reason: HostGcRemoval["reason"]; final: boolean } | null;

/** What the policy says of the session on this host (`here`: it has a worktree directory here). */
async function verdictOf(
  deps: HostGcDeps,
  db: Queryable,
  sessionId: string,
  subject: Subject,
  keepDays: Map<string, number | null>,
  now: Date,
  here: boolean,
): Promise<Verdict> {
  const { events, task } = subject;
  if (task.status === "finished") {
    if (pruneStatusOf(sessionId, events).status === "pruned") return { reason: "pruned", final: true };
    const days = keepDays.get(task.config.project.id);
    const ended = endedAt(sessionId, events);
    if (days !== undefined && days !== null && ended !== null && ended.getTime() + days * DAY_MS <= now.getTime())
      return { reason: "finished", final: true };
  }
  if (!here) return null;
  const last = await lastStepHost(db, sessionId, events);
  if (last === null || last === deps.host) return null;
  // A step of the session still running on this host (parallel steps) keeps its worktree.
  const running = await db.query(
    `SELECT 1 FROM steps s JOIN runners r ON r.id = s.lease_owner
     WHERE s.session_id = $1 AND s.state = 'running' AND r.host = $2 LIMIT 1`,
    [sessionId, deps.host],
  );
  return running.rowCount ? null : { reason: "not_last_host", final: false };
}

/** When the session last ended (its own latest SessionFinalized), or null. */
function endedAt(sessionId: string, events: readonly RecordedEvent[]): Date | null {
  const last = events.findLast((e) => e.streamId === sessionId && e.type === "SessionFinalized");
  return last ? new Date(last.recordedAt) : null;
}

/**
 * The host of the runner that started the session's latest step using a worktree (its
 * StepStarted's runnerId, looked up in runners): null when none, or when that runner's row
 * has been aged out (then this rule does nothing: the age rule still applies).
 */
async function lastStepHost(db: Queryable, sessionId: string, events: readonly RecordedEvent[]): Promise<string | null> {
  const kinds = new Map<string, string>();
  let runnerId: string | null = null;
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.streamId !== sessionId) continue;
    if (e.type === "StepScheduled") kinds.set(e.data.stepId, e.data.kind);
    else if (e.type === "StepStarted" && !NO_WORKTREE_KINDS.has(kinds.get(e.data.stepId) ?? "")) runnerId = e.data.runnerId;
  }
  if (runnerId === null) return null;
  const row = await db.query<{ host: string }>("SELECT host FROM runners WHERE id = $1", [runnerId]);
  return row.rows[0]?.host ?? null;
}

/** Whether this host already cleaned the session up for good since its worktree was last placed here. */
function doneHere(sessionId: string, events: readonly RecordedEvent[], host: string): boolean {
  let done = false;
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.streamId !== sessionId) continue;
    if (e.type === "WorktreePlaced" && e.data.host === host) done = false;
    else if (e.type === "WorktreeRemoved" && e.data.host === host && e.data.reason !== "not_last_host") done = true;
    else if (e.type === "SessionResumed") done = false;
  }
  return done;
}

async function collectSession(
  deps: HostGcDeps,
  sessionId: string,
  keepDays: Map<string, number | null>,
  now: Date,
): Promise<HostGcRemoval | null> {
  const target = path.join(rootOf(deps), sessionId);
  const events = await deps.store.readStream(sessionId).catch((err: unknown) => {
    if (isAppError(err, "NOT_FOUND")) return [];
    throw err;
  });
  if (!events.some((e) => e.streamId === sessionId)) return null; // not a session of this database: left alone
  const subject = { events, task: foldTask(events) };
  if (doneHere(sessionId, events, deps.host) && !fs.existsSync(target)) {
    notePending(deps, sessionId, false);
    return null;
  }
  const verdict = await verdictOf(deps, deps.pool, sessionId, subject, keepDays, now, fs.existsSync(target));
  if (!verdict) return null;

  const repoPath = await repositoryOf(deps, target, subject.task);
  if (repoPath === null) return null;
  // One worktree operation per repository at a time, as creating one is (runner/repo-lock.ts);
  // and under the session's stream lock, so no step of it is claimed while its worktree goes.
  const done = await withWorktreeLock(deps.pool, repoPath, async () => {
    const handled = await gcCommands.handle(
      deps.store,
      sessionId,
      async (current, at) => {
        // Decided again under the lock: a step may have started here meanwhile, or another pass recorded it.
        const again = await verdictOf(deps, at.db, sessionId, current, keepDays, now, fs.existsSync(target));
        if (!again || (again.final && doneHere(sessionId, current.events, deps.host))) return [];
        const { removed } = fs.existsSync(target) ? await removeWorkspace({ repoPath, path: target }) : { removed: false };
        const refs = again.final ? refsToDelete(deps, sessionId, current) : [];
        const refsDeleted = refs.length ? await deleteRefs(repoPath, refs) : [];
        if (!removed && !again.final) return [];
        const event: NewEvent = {
          type: "WorktreeRemoved",
          data: { host: deps.host, path: target, removed, reason: again.reason, refsDeleted },
        };
        return [event];
      },
      { actor: HOST_GC_ACTOR },
    );
    return handled.recorded[0] ?? null;
  });
  if (!done) return null;
  const data = ZRemoved.parse(done.data);
  // Its pins and branch stay here until the session goes for good: noted, so a later pass finds them.
  notePending(deps, sessionId, data.reason === "not_last_host");
  return { sessionId, path: data.path, removed: data.removed, reason: data.reason, refsDeleted: data.refsDeleted };
}

/** This host's clone of the session's project: from its worktree when there is one, else from the session's record. */
async function repositoryOf(deps: HostGcDeps, target: string, task: TaskState): Promise<string | null> {
  if (fs.existsSync(target)) {
    const checkout = await inspectCheckout(target);
    if (checkout?.linked) return path.basename(checkout.commonDir) === ".git" ? path.dirname(checkout.commonDir) : checkout.commonDir;
  }
  if (task.status === "none") return null;
  const registered = task.config.project.repoPath;
  const local = deps.repositoryPath?.(registered) ?? registered;
  return fs.existsSync(local) ? local : null;
}

/**
 * The session's pins and local branch in this host's clone. A successful session's branch in the
 * registered repository itself stays: it may be what is (or was) delivered (docs/delivery.md).
 */
function refsToDelete(deps: HostGcDeps, sessionId: string, subject: Subject): string[] {
  const { task, events } = subject;
  if (task.status !== "finished") return [];
  const refs = sessionRefs(sessionId, events, task);
  const registered = task.config.project.repoPath;
  const isCache = (deps.repositoryPath?.(registered) ?? registered) !== registered;
  const keepBranch = !isCache && SUCCESS_OUTCOMES.includes(task.outcome);
  return keepBranch ? refs.filter((r) => !r.startsWith("refs/heads/")) : refs;
}
