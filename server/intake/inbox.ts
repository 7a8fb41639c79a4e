// The intake's part of the inbox (docs/intake.md, "The inbox"): deliveries that matched a rule
// but were held (IntakeHeld) and that nobody has started or dismissed since (IntakeResolved),
// with their reason and the issue's link. Starting one starts its task as the person who
// asked, with TaskStartedFromIssue as a delivery would; both are events of the intake stream,
// appended under the project's intake lock so one held delivery is started or dismissed once.
import { z } from "zod";
import { withTransaction, type Db, type Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { Actor, AppEventOf } from "../events/catalog";
import { intakeStream } from "../events/intake-catalog";
import type { EventStore } from "../events/store";
import { createTask, prepareTask } from "../tasks/commands";
import { lockIntake } from "./start";

export const ZHeldRef = z.object({
  projectId: z.string().min(1).max(100),
  deliveryId: z.string().min(1).max(200),
});
export const ZHeldFilters = z.object({ projectId: z.string().min(1).max(100).optional() });

export interface HeldItem {
  projectId: string;
  deliveryId: string;
  provider: "github" | "gitlab";
  repository: string;
  issueNumber: number;
  issueUrl: string;
  title: string;
  trigger: string;
  sender: string;
  reason: string;
  detail: string;
  since: string;
}

type HeldData = AppEventOf<"IntakeHeld">["data"];

const HELD_LIMIT = 100;

/**
 * Held deliveries nobody resolved, newest first ($1: one project's, or null for all). Every
 * project's list reads the held events' own index backwards (events_intake_held_idx, its
 * migration), not the whole log by position; one project's reads its intake stream.
 */
export const HELD_SQL = `SELECT h.data, h.recorded_at FROM events h
     WHERE h.type = 'IntakeHeld' AND h.stream_id LIKE 'intake-%' AND ($1::text IS NULL OR h.stream_id = 'intake-' || $1)
       AND NOT EXISTS (SELECT 1 FROM events r WHERE r.stream_id = h.stream_id AND r.type = 'IntakeResolved'
                       AND r.data->>'deliveryId' = h.data->>'deliveryId' AND r.data->>'provider' = h.data->>'provider')
     ORDER BY h.position DESC LIMIT ${HELD_LIMIT}`;

/** Held deliveries nobody resolved, newest first (at most 100). */
export async function listHeld(db: Queryable, filters: z.input<typeof ZHeldFilters> = {}): Promise<HeldItem[]> {
  const { projectId } = ZHeldFilters.parse(filters);
  const r = await db.query<{ data: HeldData; recorded_at: Date }>(HELD_SQL, [projectId ?? null]);
  return r.rows.map(({ data, recorded_at }) => ({
    projectId: data.projectId,
    deliveryId: data.deliveryId,
    provider: data.provider,
    repository: data.repository,
    issueNumber: data.issueNumber,
    issueUrl: data.issueUrl,
    title: data.title,
    trigger: data.trigger,
    sender: data.sender,
    reason: data.reason,
    detail: data.detail,
    since: recorded_at.toISOString(),
  }));
}

interface Deps {
  store: EventStore;
  pool: Db;
}

/** The held delivery, unresolved, read under the lock. */
async function heldNow(db: Queryable, projectId: string, deliveryId: string): Promise<HeldData> {
  const r = await db.query<{ data: HeldData; resolved: string | null }>(
    `SELECT h.data, (SELECT r.data->>'resolution' FROM events r WHERE r.stream_id = h.stream_id AND r.type = 'IntakeResolved'
                       AND r.data->>'deliveryId' = h.data->>'deliveryId' LIMIT 1) AS resolved
     FROM events h WHERE h.stream_id = $1 AND h.type = 'IntakeHeld' AND h.data->>'deliveryId' = $2 LIMIT 1`,
    [intakeStream(projectId), deliveryId],
  );
  const row = r.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `no held delivery ${deliveryId} in project ${projectId}`);
  if (row.resolved) throw new AppError("CONFLICT", `delivery ${deliveryId} was ${row.resolved} already`);
  return row.data;
}

async function resolve(
  deps: Deps,
  tx: Parameters<typeof lockIntake>[0],
  held: HeldData,
  actor: Actor,
  resolution: "started" | "dismissed",
  sessionId?: string,
) {
  const stream = intakeStream(held.projectId);
  const version = (await deps.store.streamVersion(stream, tx)) ?? 0;
  await deps.store.appendInTx(
    tx,
    stream,
    version,
    [
      {
        type: "IntakeResolved",
        data: { deliveryId: held.deliveryId, provider: held.provider, resolution, ...(sessionId ? { sessionId } : {}) },
      },
    ],
    { actor },
  );
}

/** A person starts a held delivery's task: it waits for a confirm like any task (autoConfirm is the rule's, for deliveries only). */
export async function startHeld(deps: Deps, raw: z.input<typeof ZHeldRef>, actor: Actor): Promise<{ sessionId: string }> {
  const { projectId, deliveryId } = ZHeldRef.parse(raw);
  const first = await heldNow(deps.pool, projectId, deliveryId);
  const prepared = await prepareTask(deps, {
    projectId,
    prompt: first.prompt,
    workflow: first.workflow,
    title: `#${first.issueNumber} ${first.title}`.slice(0, 200),
    ...(first.bakeOff ? { bakeOff: first.bakeOff } : {}),
  });
  return withTransaction(deps.pool, async (tx) => {
    await lockIntake(tx, projectId);
    const held = await heldNow(tx, projectId, deliveryId);
    const { projectId: _p, reason: _r, detail: _d, prompt: _pr, workflow: _w, autoConfirm: _a, bakeOff: _b, ...source } = held;
    const { sessionId } = await createTask(deps, prepared, actor, tx, [{ type: "TaskStartedFromIssue", data: source }]);
    await resolve(deps, tx, held, actor, "started", sessionId);
    return { sessionId };
  });
}

export async function dismissHeld(deps: Deps, raw: z.input<typeof ZHeldRef>, actor: Actor): Promise<{ dismissed: string }> {
  const { projectId, deliveryId } = ZHeldRef.parse(raw);
  return withTransaction(deps.pool, async (tx) => {
    await lockIntake(tx, projectId);
    const held = await heldNow(tx, projectId, deliveryId);
    await resolve(deps, tx, held, actor, "dismissed");
    return { dismissed: deliveryId };
  });
}
