// The project's agent record (docs/bake-off.md, "The agent record: how it is computed"): per
// coder agent and model, over the project's sessions and bake-offs in a time window, how many
// tasks it did, how many were approved, the median iterations to approval, the median wall
// time, the median cost of an approved task, and how often it stood in a bake-off and was
// chosen. A projection computed on read from the events (each session's figures, ./figures.ts,
// and the bake-offs, ./bake-off-events.ts): the same events give the same record, and the
// record is plain JSON (`catcafe agents stats --json`), nothing of it is stored.
import { z } from "zod";
import { ABSOLUTE_TIME } from "../../lib/time-window";
import type { PricingSettings } from "../config/schemas";
import { AppError } from "../errors";
import { projectExists } from "../projects/projects";
import { bakeOffsAmong, type BakeOffContenderEntry } from "./bake-off-events";
import { loadSessionFigures, type FiguresDeps, type SessionFigures } from "./figures";

/** An instant (ISO 8601, with a time zone) or a day (YYYY-MM-DD, midnight UTC). */
const ZInstant = z
  .string()
  .max(40)
  .refine((s) => ABSOLUTE_TIME.test(s) && Number.isFinite(Date.parse(s)), {
    message: "an ISO 8601 instant with a time zone (2026-11-01T00:00:00Z) or a day (2026-11-01)",
  });

export const ZAgentRecordInput = z
  .object({
    projectId: z.string().min(1).max(100),
    /** Sessions created at or after this instant. */
    since: ZInstant.optional(),
    /** Sessions created before this instant. */
    until: ZInstant.optional(),
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
    message: "`since` must be before `until`",
    path: ["until"],
  });
export type TAgentRecordInput = z.input<typeof ZAgentRecordInput>;

export interface AgentRecordRow {
  agentId: string;
  /** The coder's model (the bake-off's choice, else what its calls reported, else its configuration); null when none is known. */
  model: string | null;
  /** Sessions this agent was the coder of and that ran a step of their own (bake-off parents excluded: their contenders count). */
  tasks: number;
  finished: number;
  approved: number;
  /** approved / finished (null before any finished). */
  approvalRate: number | null;
  medianIterationsToApproval: number | null;
  /** Over finished tasks, first step started → ended. */
  medianWallMs: number | null;
  /** Over approved tasks, every call of the session (all roles), priced with settings.json's table. */
  medianCostPerApprovedTask: number | null;
  /** Models without a price in this agent's tasks: their cost is not in the figures. */
  unpriced: string[];
  /** Contender sessions of bake-offs in the window, and how many of them were chosen. */
  bakeOffs: number;
  chosen: number;
  /** The sessions counted, oldest first. */
  sessions: string[];
}

export interface AgentRecord {
  format: { name: "catcafe-agent-record"; version: 1 };
  projectId: string;
  since: string | null;
  until: string | null;
  currency: string;
  /** Sessions of the project in the window, and bake-offs started in it. */
  sessions: number;
  bakeOffs: number;
  agents: AgentRecordRow[];
}

export function median(values: number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Counted {
  figures: SessionFigures;
  inBakeOff: boolean;
  chosen: boolean;
}

/** The record from the figures of the window's sessions (pure: the test of "same events, same record"). */
export function recordOf(
  counted: Counted[],
  meta: { projectId: string; since: string | null; until: string | null; currency: string; sessions: number; bakeOffs: number },
): AgentRecord {
  const groups = new Map<string, Counted[]>();
  for (const c of counted) {
    const key = JSON.stringify([c.figures.coder.agentId ?? "unknown", c.figures.coder.model]);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const agents = [...groups].map(([key, list]): AgentRecordRow => {
    const [agentId, model] = JSON.parse(key) as [string, string | null];
    // Ended on its own: a contender stopped by another's pick (not_chosen while it ran) is in neither count.
    const finished = list.filter((c) => c.figures.ownOutcome !== null || c.figures.approved);
    const approved = list.filter((c) => c.figures.approved);
    return {
      agentId,
      model,
      tasks: list.length,
      finished: finished.length,
      approved: approved.length,
      approvalRate: finished.length ? approved.length / finished.length : null,
      medianIterationsToApproval: median(approved.map((c) => c.figures.iterationsToApproval!)),
      medianWallMs: median(finished.flatMap((c) => (c.figures.wall.ms === null ? [] : [c.figures.wall.ms]))),
      medianCostPerApprovedTask: median(approved.map((c) => c.figures.usage.cost)),
      unpriced: [...new Set(list.flatMap((c) => c.figures.usage.unpriced))].sort(),
      bakeOffs: list.filter((c) => c.inBakeOff).length,
      chosen: list.filter((c) => c.chosen).length,
      sessions: list.map((c) => c.figures.sessionId),
    };
  });
  agents.sort((a, b) => b.tasks - a.tasks || a.agentId.localeCompare(b.agentId) || (a.model ?? "").localeCompare(b.model ?? ""));
  return { format: { name: "catcafe-agent-record", version: 1 }, ...meta, agents };
}

export async function agentRecord(deps: FiguresDeps, raw: TAgentRecordInput, pricing: PricingSettings): Promise<AgentRecord> {
  const input = ZAgentRecordInput.parse(raw);
  const since = input.since ? new Date(input.since).toISOString() : null;
  const until = input.until ? new Date(input.until).toISOString() : null;
  const { rows } = await deps.pool.query<{ id: string; in_window: boolean }>(
    `SELECT id, (($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)) AS in_window
     FROM sessions WHERE project_id = $1 ORDER BY created_at, id`,
    [input.projectId, since, until],
  );
  if (!rows.length && !(await projectExists(deps.pool, input.projectId))) throw new AppError("NOT_FOUND", `no project ${input.projectId}`);
  // A contender may be in the window while its bake-off started before it: every bake-off of the project is read.
  const bakeOffs = await bakeOffsAmong(
    deps.pool,
    rows.map((r) => r.id),
  );
  const parents = new Set(bakeOffs.map((b) => b.parentSessionId));
  const contenders = new Map<string, { entry: BakeOffContenderEntry; chosen: boolean }>();
  for (const b of bakeOffs) {
    for (const entry of b.contenders) contenders.set(entry.sessionId, { entry, chosen: b.chosen?.sessionId === entry.sessionId });
  }
  const window = rows.filter((r) => r.in_window);
  const counted: Counted[] = [];
  for (const { id } of window) {
    if (parents.has(id)) continue;
    const contender = contenders.get(id);
    const figures = await loadSessionFigures(deps, id, { pricing, contender: contender?.entry ?? null });
    // A fork that ran nothing of its own (a finished copy) did no task.
    if (figures.status === "none" || figures.wall.startedAt === null) continue;
    counted.push({ figures, inBakeOff: !!contender, chosen: contender?.chosen ?? false });
  }
  return recordOf(counted, {
    projectId: input.projectId,
    since,
    until,
    currency: pricing.currency,
    sessions: window.length,
    bakeOffs: bakeOffs.filter((b) => window.some((r) => r.id === b.parentSessionId)).length,
  });
}
