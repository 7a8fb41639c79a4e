// What a verified issue delivery does (docs/intake.md): the trigger it fires under the
// project's rules starts a task — the issue's text as its prompt, `TaskStartedFromIssue` recorded
// with the start and the delivery's row in one transaction — or, when it may not start (the
// commenter has no write access, the project cannot start a task, the hourly cap is reached),
// it is held in the inbox (`IntakeHeld`) with its reason. The project's intake is serialised by
// an advisory lock, so one issue and trigger start at most one open session however many
// deliveries arrive at once.
import type { IntakeSettings } from "../config/schemas";
import { withTransaction, type Db, type Tx } from "../db/pool";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { intakeStream } from "../events/intake-catalog";
import type { EventStore } from "../events/store";
import type { NewEvent } from "../events/types";
import { deliverySettings } from "../delivery/settings";
import { accessInForce } from "../projects/config-edits";
import { createTask, prepareTask, type PreparedTask } from "../tasks/commands";
import type { IssueRef, TrackerDelivery } from "./payloads";
import { writeAccess } from "./permission";
import { firedTrigger, issuePrompt, redactIssueText, type FiredTrigger, type IntakeProvider } from "./rules";

export const INTAKE_ACTOR = { kind: "system", id: "intake" } as const satisfies Actor;

export interface IntakeDeps {
  store: EventStore;
  pool: Db;
  /** Where the delivery token variable is read for the write-access check (the web process's environment). */
  env?: Record<string, string | undefined>;
  /** settings.json as the web process reads it (access.privateHosts). */
  settingsFile?: string;
}

/** What a delivery led to, as the receiver answers it. */
export type IntakeAnswer =
  { started: string; trigger: FiredTrigger["trigger"] } | { held: string; reason: string } | { ignored: string; sessionId?: string };

export interface IssueDelivery {
  provider: IntakeProvider;
  deliveryId: string;
  event: string;
  projectId: string;
  rules: IntakeSettings;
  delivery: Extract<TrackerDelivery, { kind: "issue" }>;
}

/** The delivery's row: false when its id was recorded already (a replay). */
export async function recordDelivery(
  db: Db | Tx,
  d: { provider: string; deliveryId: string; projectId: string; event: string },
  outcome: string,
): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO intake_deliveries (provider, delivery_id, project_id, event, outcome) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (provider, delivery_id) DO NOTHING`,
    [d.provider, d.deliveryId, d.projectId, d.event, outcome],
  );
  return r.rowCount === 1;
}

export async function wasDelivered(db: Db, provider: string, deliveryId: string): Promise<boolean> {
  const r = await db.query("SELECT 1 FROM intake_deliveries WHERE provider = $1 AND delivery_id = $2", [provider, deliveryId]);
  return (r.rowCount ?? 0) > 0;
}

/** Thrown inside the transaction when the delivery id was taken meanwhile: everything it wrote is rolled back. */
class Replayed extends Error {}

/** A task's title from its issue. */
function issueTitle(issue: IssueRef): string {
  return `#${issue.number} ${redactIssueText(issue.title)}`.slice(0, 200);
}

interface Held {
  reason: "no_permission" | "permission_unknown" | "not_ready" | "rate_limited";
  detail: string;
}

/** The permission check of a comment command, with the project's delivery token as this process holds it. */
async function commenterMayStart(deps: IntakeDeps, d: IssueDelivery): Promise<Held | null> {
  const comment = d.delivery.comment!;
  const { project, delivery } = await deliverySettings(deps.pool, deps.store, d.projectId);
  const env = deps.env ?? process.env;
  const token = delivery.tokenEnv ? env[delivery.tokenEnv] : undefined;
  if (!token)
    return {
      reason: "permission_unknown",
      detail: delivery.tokenEnv
        ? `cannot check ${comment.author}'s write access: ${delivery.tokenEnv} is not set on the web server`
        : `cannot check ${comment.author}'s write access: the project has no delivery token (delivery.tokenEnv)`,
    };
  const { privateHosts } = await accessInForce(deps.store, project.settings, deps.settingsFile ? { settingsFile: deps.settingsFile } : {});
  const access = await writeAccess({
    provider: d.provider,
    repository: d.rules.repository,
    ...(d.rules.apiBaseUrl ? { apiBaseUrl: d.rules.apiBaseUrl } : {}),
    token,
    user: comment.author,
    ...(comment.authorId !== undefined ? { userId: comment.authorId } : {}),
    policy: { privateHosts },
  });
  if ("unknown" in access)
    return { reason: "permission_unknown", detail: `cannot check ${comment.author}'s write access: ${access.unknown}` };
  return access.allowed ? null : { reason: "no_permission", detail: `${comment.author} has ${access.level} access, not write` };
}

/** The rule's trigger fired by the delivery, then the task started or the delivery held. */
export async function handleIssueDelivery(deps: IntakeDeps, d: IssueDelivery): Promise<IntakeAnswer> {
  const fired = firedTrigger(d.rules, d.delivery);
  if (!fired) {
    if (!(await recordDelivery(deps.pool, d, "ignored"))) return { ignored: "replayed" };
    return { ignored: "no_rule" };
  }
  const { issue } = d.delivery;
  const prompt = issuePrompt(issue, fired.instructions);
  const source = {
    provider: d.provider,
    repository: d.rules.repository,
    issueNumber: issue.number,
    issueUrl: issue.url,
    title: redactIssueText(issue.title).slice(0, 500),
    trigger: fired.trigger,
    deliveryId: d.deliveryId,
    sender: fired.sender,
  };
  let held = fired.trigger === "comment" ? await commenterMayStart(deps, d) : null;
  let prepared: PreparedTask | null = null;
  if (!held) {
    try {
      prepared = await prepareTask(deps, {
        projectId: d.projectId,
        prompt,
        workflow: fired.workflow,
        title: issueTitle(issue),
        ...(fired.bakeOff ? { bakeOff: fired.bakeOff } : {}),
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      held = { reason: "not_ready", detail: err.message.slice(0, 1000) };
    }
  }
  try {
    return await withTransaction(deps.pool, async (tx) => {
      await lockIntake(tx, d.projectId);
      if (held || !prepared) return hold(deps, tx, d, source, held!, prompt, fired);
      const open = await openSessionFor(tx, d.projectId, source);
      if (open) {
        if (!(await recordDelivery(tx, d, "open_session"))) throw new Replayed();
        return { ignored: "open_session", sessionId: open };
      }
      const started = await startedLastHour(tx, d.projectId);
      if (started >= d.rules.maxPerHour)
        return hold(
          deps,
          tx,
          d,
          source,
          { reason: "rate_limited", detail: `${started} tasks started from issues in the last hour (maxPerHour ${d.rules.maxPerHour})` },
          prompt,
          fired,
        );
      const extra: NewEvent[] = [{ type: "TaskStartedFromIssue", data: source }];
      if (fired.autoConfirm) extra.push({ type: "IntakeAutoConfirm", data: { trigger: fired.trigger } });
      const { sessionId } = await createTask(deps, prepared, INTAKE_ACTOR, tx, extra);
      if (!(await recordDelivery(tx, d, "started"))) throw new Replayed();
      return { started: sessionId, trigger: fired.trigger };
    });
  } catch (err) {
    if (err instanceof Replayed) return { ignored: "replayed" };
    throw err;
  }
}

/** Serialises a project's intake (the open-session check, the hourly cap, the intake stream's appends). */
export async function lockIntake(tx: Tx, projectId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [intakeStream(projectId)]);
}

async function hold(
  deps: IntakeDeps,
  tx: Tx,
  d: IssueDelivery,
  source: Omit<Parameters<typeof heldData>[0], "projectId">,
  held: Held,
  prompt: string,
  fired: FiredTrigger,
): Promise<IntakeAnswer> {
  if (!(await recordDelivery(tx, d, `held:${held.reason}`))) throw new Replayed();
  const stream = intakeStream(d.projectId);
  const version = (await deps.store.streamVersion(stream, tx)) ?? 0;
  await deps.store.appendInTx(
    tx,
    stream,
    version === 0 ? "no_stream" : version,
    [{ type: "IntakeHeld", data: heldData({ ...source, projectId: d.projectId }, held, prompt, fired) }],
    { actor: INTAKE_ACTOR },
    { streamType: "intake" },
  );
  return { held: d.deliveryId, reason: held.reason };
}

function heldData(
  source: {
    projectId: string;
    provider: IntakeProvider;
    repository: string;
    issueNumber: number;
    issueUrl: string;
    title: string;
    trigger: FiredTrigger["trigger"];
    deliveryId: string;
    sender: string;
  },
  held: Held,
  prompt: string,
  fired: FiredTrigger,
) {
  return {
    ...source,
    reason: held.reason,
    detail: held.detail,
    prompt,
    workflow: fired.workflow,
    autoConfirm: fired.autoConfirm,
    ...(fired.bakeOff ? { bakeOff: fired.bakeOff } : {}),
  };
}

/** An open session (no outcome yet) started from this issue by this trigger. */
async function openSessionFor(
  tx: Tx,
  projectId: string,
  s: { provider: string; repository: string; issueNumber: number; trigger: string },
): Promise<string | null> {
  const r = await tx.query<{ id: string }>(
    `SELECT s.id FROM events e JOIN sessions s ON s.id = e.stream_id
     WHERE e.type = 'TaskStartedFromIssue' AND s.project_id = $1 AND s.outcome IS NULL
       AND e.data->>'provider' = $2 AND e.data->>'repository' = $3 AND (e.data->>'issueNumber')::int = $4 AND e.data->>'trigger' = $5
     LIMIT 1`,
    [projectId, s.provider, s.repository, s.issueNumber, s.trigger],
  );
  return r.rows[0]?.id ?? null;
}

async function startedLastHour(tx: Tx, projectId: string): Promise<number> {
  const r = await tx.query<{ n: string }>(
    `SELECT count(*) AS n FROM events e JOIN sessions s ON s.id = e.stream_id
     WHERE e.type = 'TaskStartedFromIssue' AND s.project_id = $1 AND e.recorded_at > now() - interval '1 hour'`,
    [projectId],
  );
  return Number(r.rows[0]?.n ?? 0);
}
