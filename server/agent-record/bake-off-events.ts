// The bake-off's facts as this read side sees them: `BakeOffForked`, `BakeOffJudged` and
// `BakeOffWinnerChosen` on the parent session, `BakeOffContender` on each contender
// (docs/bake-off.md). They are read here, and only here, straight from the `events` table
// (type + data) and checked with the schemas below, so every reader of the agent record and
// the comparison page depends on one small module: when the event catalog declares these
// types, this module switches to it and nothing else changes.
import { z } from "zod";
import type { Queryable } from "../db/pool";

export const BAKE_OFF_EVENT_TYPES = ["BakeOffForked", "BakeOffJudged", "BakeOffWinnerChosen", "BakeOffContender"] as const;
export type BakeOffEventType = (typeof BAKE_OFF_EVENT_TYPES)[number];

export const ZBakeOffContenderEntry = z.object({
  id: z.string().min(1),
  sessionId: z.string().min(1),
  coder: z.string().min(1),
  model: z.string().min(1).optional(),
  label: z.string().optional(),
});
export type BakeOffContenderEntry = z.infer<typeof ZBakeOffContenderEntry>;

const ZForked = z.object({ contenders: z.array(ZBakeOffContenderEntry).min(1) });
const ZJudged = z.object({
  recommendation: z.object({ winner: z.string(), ranking: z.array(z.string()), reasons: z.array(z.string()) }),
  agent: z.string(),
});
const ZChosen = z.object({ contenderId: z.string(), sessionId: z.string(), reason: z.string().nullish() });
const ZContender = z.object({ parentSessionId: z.string(), contenderId: z.string() });

export type BakeOffRecommendation = z.infer<typeof ZJudged>["recommendation"];

/** One bake-off as its parent session recorded it. */
export interface BakeOff {
  parentSessionId: string;
  forkedAt: string;
  contenders: BakeOffContenderEntry[];
  judged: { recommendation: BakeOffRecommendation; agent: string; at: string } | null;
  chosen: { contenderId: string; sessionId: string; reason: string | null; by: string; at: string } | null;
}

interface Row {
  stream_id: string;
  type: BakeOffEventType;
  data: unknown;
  metadata: { actor?: { kind: string; id: string } };
  recorded_at: Date;
}

async function rowsOf(db: Queryable, streamIds: string[], types: readonly BakeOffEventType[]): Promise<Row[]> {
  if (!streamIds.length) return [];
  const { rows } = await db.query<Row>(
    `SELECT stream_id, type, data, metadata, recorded_at FROM events
     WHERE stream_id = ANY($1::text[]) AND type = ANY($2::text[]) ORDER BY stream_id, version`,
    [streamIds, types],
  );
  return rows;
}

function bakeOffsFrom(rows: Row[]): Map<string, BakeOff> {
  const found = new Map<string, BakeOff>();
  for (const row of rows) {
    const at = row.recorded_at.toISOString();
    if (row.type === "BakeOffForked") {
      found.set(row.stream_id, {
        parentSessionId: row.stream_id,
        forkedAt: at,
        contenders: ZForked.parse(row.data).contenders,
        judged: null,
        chosen: null,
      });
      continue;
    }
    const bakeOff = found.get(row.stream_id);
    if (!bakeOff) continue;
    if (row.type === "BakeOffJudged") {
      const d = ZJudged.parse(row.data);
      bakeOff.judged = { recommendation: d.recommendation, agent: d.agent, at };
    } else if (row.type === "BakeOffWinnerChosen") {
      const d = ZChosen.parse(row.data);
      const actor = row.metadata.actor;
      bakeOff.chosen = {
        contenderId: d.contenderId,
        sessionId: d.sessionId,
        reason: d.reason ?? null,
        by: actor ? (actor.kind === "system" ? "system" : `${actor.kind}:${actor.id}`) : "unknown",
        at,
      };
    }
  }
  return found;
}

/** The bake-off `sessionId` started (it is the parent), or null. */
export async function bakeOffOf(db: Queryable, sessionId: string): Promise<BakeOff | null> {
  const rows = await rowsOf(db, [sessionId], ["BakeOffForked", "BakeOffJudged", "BakeOffWinnerChosen"]);
  return bakeOffsFrom(rows).get(sessionId) ?? null;
}

/** Every bake-off started by one of `sessionIds`. */
export async function bakeOffsAmong(db: Queryable, sessionIds: string[]): Promise<BakeOff[]> {
  return [...bakeOffsFrom(await rowsOf(db, sessionIds, ["BakeOffForked", "BakeOffJudged", "BakeOffWinnerChosen"])).values()];
}

/** Where `sessionId` stands in a bake-off: the parent and its contender id, or null. */
export async function contenderOf(db: Queryable, sessionId: string): Promise<{ parentSessionId: string; contenderId: string } | null> {
  const rows = await rowsOf(db, [sessionId], ["BakeOffContender"]);
  return rows.length ? ZContender.parse(rows[0]!.data) : null;
}
