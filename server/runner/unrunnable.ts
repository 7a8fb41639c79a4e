// Steps no live runner can run (docs/scaling.md, "Which runner runs a step"): a step whose
// needs (a clone of its project, an agent CLI, labels) no live runner has, or whose every
// capable live runner released it as unable, fails with a message naming what is missing
// where: each live runner, its host, and what it lacks. Checked by every runner's sweep; a
// step waits while no runner at all is live (runners may be restarting), and for a grace
// period after it became claimable (a runner that just started or refreshed may take it).
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { recordStepOutcome, type RecordOptions } from "./dispatch";
import { HEARD_WITHIN_SQL, RUNNER_LIVENESS_MS } from "./liveness";
import type { UnservedProject } from "./capabilities";

/** Default grace: longer than a runner's capability refresh (Runner's capabilityRefreshMs, 30 s). */
export const UNRUNNABLE_GRACE_MS = 60_000;

export interface StepNeeds {
  id: string;
  sessionId: string;
  attempt: number;
  needsRepo: string | null;
  needsCli: string | null;
  needsLabels: string[];
  excludedRunners: string[];
}

export interface LiveRunnerCapabilities {
  id: string;
  host: string;
  /** null: not reported (it is counted as able to run anything). */
  servedRepos: string[] | null;
  unserved: UnservedProject[];
  /** null: not detected (any CLI). */
  agentClis: string[] | null;
  labels: string[];
}

/** What `runner` lacks to run `step`, or null when it has all of it. */
export function runnerLacks(step: StepNeeds, runner: LiveRunnerCapabilities): string | null {
  const lacks: string[] = [];
  if (step.needsRepo && runner.servedRepos && !runner.servedRepos.includes(step.needsRepo)) {
    const why = runner.unserved.find((u) => u.repoPath === step.needsRepo)?.reason;
    lacks.push(`no clone of ${step.needsRepo}${why ? `: ${why}` : ""}`);
  }
  if (step.needsCli && runner.agentClis && !runner.agentClis.includes(step.needsCli)) lacks.push(`no supported ${step.needsCli} CLI`);
  const labels = step.needsLabels.filter((l) => !runner.labels.includes(l));
  if (labels.length) lacks.push(`lacks the label${labels.length > 1 ? "s" : ""} ${labels.join(", ")}`);
  return lacks.length ? lacks.join("; ") : null;
}

/**
 * Why no live runner can run `step`, one clause per live runner, or null when one can.
 * `released`: what each runner that released the step as unable said it lacked.
 */
export function unrunnableMessage(
  step: StepNeeds,
  runners: readonly LiveRunnerCapabilities[],
  released: ReadonlyMap<string, string>,
): string | null {
  if (runners.length === 0) return null;
  const clauses: string[] = [];
  for (const r of runners) {
    const where = `runner ${r.id} on ${r.host}`;
    if (step.excludedRunners.includes(r.id)) {
      clauses.push(`${where} released it: ${released.get(r.id) ?? "it could not run it"}`);
      continue;
    }
    const lacks = runnerLacks(step, r);
    if (!lacks) return null;
    clauses.push(`${where}: ${lacks}`);
  }
  return `no live runner can run this step (${clauses.join("; ")})`;
}

interface CandidateRow {
  id: string;
  session_id: string;
  attempt: number;
  needs_repo: string | null;
  needs_cli: string | null;
  needs_labels: string[] | null;
  excluded_runners: string[] | null;
}

interface RunnerRow {
  id: string;
  host: string;
  served_repos: string[] | null;
  unserved_repos: UnservedProject[] | null;
  agent_clis: string[] | null;
  labels: string[] | null;
  capabilities_at: Date | null;
  shells_detected_at: Date | null;
}

/**
 * Fails, through the reactor (the workflow's step_failed transition), the pending steps that
 * no live runner can run, each as its next attempt with `unrunnable` (never started).
 */
export async function failUnrunnableSteps(
  store: EventStore,
  actor: Actor,
  options: RecordOptions & { graceMs?: number } = {},
): Promise<number> {
  const { graceMs = UNRUNNABLE_GRACE_MS, ...record } = options;
  // Cheap when nothing waits: the pending steps past their grace, through the open steps' index
  // (`finished_at IS NULL`, migration 20261129083549).
  const candidates = await store.pool.query<CandidateRow>(
    `SELECT s.id, s.session_id, s.attempt, s.needs_repo, s.needs_cli, s.needs_labels, s.excluded_runners FROM steps s
     WHERE s.finished_at IS NULL AND s.state = 'pending' AND s.available_at < now() - make_interval(secs => $2::double precision / 1000)
       AND (s.needs_repo IS NOT NULL OR s.needs_cli IS NOT NULL OR cardinality(s.needs_labels) > 0 OR cardinality(s.excluded_runners) > 0)
       AND EXISTS (SELECT 1 FROM runners r WHERE ${HEARD_WITHIN_SQL})
     ORDER BY s.available_at LIMIT 100`,
    [RUNNER_LIVENESS_MS, graceMs],
  );
  if (candidates.rows.length === 0) return 0;
  const live = await store.pool.query<RunnerRow>(
    `SELECT r.id, r.host, r.served_repos, r.unserved_repos, r.agent_clis, r.labels, r.capabilities_at, r.shells_detected_at
     FROM runners r WHERE ${HEARD_WITHIN_SQL} ORDER BY r.started_at, r.id`,
    [RUNNER_LIVENESS_MS],
  );
  const runners: LiveRunnerCapabilities[] = live.rows.map((r) => ({
    id: r.id,
    host: r.host,
    servedRepos: r.capabilities_at ? (r.served_repos ?? []) : null,
    unserved: r.unserved_repos ?? [],
    agentClis: r.shells_detected_at ? (r.agent_clis ?? []) : null,
    labels: r.labels ?? [],
  }));
  let failed = 0;
  for (const row of candidates.rows) {
    const step: StepNeeds = {
      id: row.id,
      sessionId: row.session_id,
      attempt: row.attempt,
      needsRepo: row.needs_repo,
      needsCli: row.needs_cli,
      needsLabels: row.needs_labels ?? [],
      excludedRunners: row.excluded_runners ?? [],
    };
    const released = new Map<string, string>();
    if (step.excludedRunners.length) {
      const said = await store.pool.query<{ runner_id: string; missing: string }>(
        `SELECT data->'unable'->>'runnerId' AS runner_id, data->'unable'->>'missing' AS missing FROM events
         WHERE stream_id = $1 AND type = 'StepReleased' AND data->>'stepId' = $2 AND data ? 'unable' ORDER BY version`,
        [step.sessionId, step.id],
      );
      for (const s of said.rows) released.set(s.runner_id, s.missing);
    }
    const message = unrunnableMessage(step, runners, released);
    if (!message) continue;
    const outcome = {
      kind: "failed" as const,
      errorClass: "internal_error" as const,
      message,
      retryable: false,
      unrunnable: true as const,
    };
    if (await recordStepOutcome(store, { id: step.id, attempt: step.attempt + 1 }, outcome, actor, record)) failed++;
  }
  return failed;
}
