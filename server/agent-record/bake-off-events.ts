// The bake-off's facts as the read side needs them (docs/bake-off.md): `BakeOffForked`,
// `BakeOffJudged`, `BakeOffWinnerChosen` and `BakeOffDismissed` on the parent session,
// `BakeOffContender` (and `BakeOffNotChosen`) on each contender. Read by SQL, by type, from the
// `events` table — the record reads every bake-off of a project at once, without reading each
// parent's lineage — and decoded with the event catalog's own schemas
// (server/events/bake-off-catalog.ts, through the app registry: upcast and checked), so each
// event has one definition, the write side's.
import type { Queryable } from "../db/pool";
import type { BakeOffContenderSpec, JudgeRecommendation } from "../events/bake-off-catalog";
import { actorLabel, appRegistry, type AppEventOf, type Actor } from "../events/catalog";
import { DEFAULT_SCHEMA_VERSION } from "../events/types";

type BakeOffEventType =
  | "BakeOffForked"
  | "BakeOffJudgeRequested"
  | "BakeOffJudged"
  | "BakeOffJudgeFailed"
  | "BakeOffWinnerChosen"
  | "BakeOffDismissed"
  | "BakeOffContender";
const PARENT_TYPES = [
  "BakeOffForked",
  "BakeOffJudgeRequested",
  "BakeOffJudged",
  "BakeOffJudgeFailed",
  "BakeOffWinnerChosen",
  "BakeOffDismissed",
] as const;

/** A contender as its parent's BakeOffForked names it. */
export type BakeOffContenderEntry = AppEventOf<"BakeOffForked">["data"]["contenders"][number];

/** One bake-off as its parent session recorded it. */
export interface BakeOff {
  parentSessionId: string;
  forkedAt: string;
  contenders: BakeOffContenderEntry[];
  judged: { recommendation: JudgeRecommendation; agent: string; at: string } | null;
  /** The judge asked and not answered yet (its step at work). */
  judging: { agentId: string; at: string } | null;
  /** The judge's last failure (an invalid reply or a failed step); `retried`: it was asked again. */
  judgeFailed: { errorClass: string; message: string; retried: boolean; at: string } | null;
  chosen: { contenderId: string; sessionId: string; reason: string | null; by: string; at: string } | null;
  dismissed: { reason: string | null; by: string; at: string } | null;
}

interface Row {
  stream_id: string;
  type: BakeOffEventType;
  data: unknown;
  metadata: { actor: Actor; schemaVersion?: number };
  recorded_at: Date;
}

/** A row's data, upcast and checked with the catalog's schema for its type. */
function decoded<T extends BakeOffEventType>(row: Row & { type: T }): AppEventOf<T>["data"] {
  return appRegistry.decode(row.type, row.data, row.metadata.schemaVersion ?? DEFAULT_SCHEMA_VERSION) as AppEventOf<T>["data"];
}

const is = <T extends BakeOffEventType>(row: Row, type: T): row is Row & { type: T } => row.type === type;

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
    if (is(row, "BakeOffForked")) {
      const { contenders } = decoded(row);
      found.set(row.stream_id, {
        parentSessionId: row.stream_id,
        forkedAt: at,
        contenders,
        judged: null,
        judging: null,
        judgeFailed: null,
        chosen: null,
        dismissed: null,
      });
      continue;
    }
    const bakeOff = found.get(row.stream_id);
    if (!bakeOff) continue;
    const by = actorLabel(row.metadata.actor);
    if (is(row, "BakeOffJudgeRequested")) {
      bakeOff.judging = { agentId: decoded(row).agentId, at };
    } else if (is(row, "BakeOffJudged")) {
      const d = decoded(row);
      bakeOff.judged = { recommendation: d.recommendation, agent: d.agent, at };
      bakeOff.judging = null;
      bakeOff.judgeFailed = null;
    } else if (is(row, "BakeOffJudgeFailed")) {
      const { stepId: _stepId, ...failure } = decoded(row);
      bakeOff.judgeFailed = { ...failure, at };
      // Asked again: still at work; else it stays without advice.
      if (!failure.retried) bakeOff.judging = null;
    } else if (is(row, "BakeOffWinnerChosen")) {
      bakeOff.chosen = { ...decoded(row), by, at };
    } else if (is(row, "BakeOffDismissed")) {
      bakeOff.dismissed = { reason: decoded(row).reason, by, at };
    }
  }
  return found;
}

/** The bake-off `sessionId` started (it is the parent), or null. */
export async function bakeOffOf(db: Queryable, sessionId: string): Promise<BakeOff | null> {
  return bakeOffsFrom(await rowsOf(db, [sessionId], PARENT_TYPES)).get(sessionId) ?? null;
}

/** Every bake-off started by one of `sessionIds`. */
export async function bakeOffsAmong(db: Queryable, sessionIds: string[]): Promise<BakeOff[]> {
  return [...bakeOffsFrom(await rowsOf(db, sessionIds, PARENT_TYPES)).values()];
}

/** Where `sessionId` stands in a bake-off (its own BakeOffContender), or null. */
export async function contenderOf(
  db: Queryable,
  sessionId: string,
): Promise<(Pick<BakeOffContenderSpec, "coder" | "model" | "label"> & { parentSessionId: string; contenderId: string }) | null> {
  const [row] = await rowsOf(db, [sessionId], ["BakeOffContender"]);
  if (!row || !is(row, "BakeOffContender")) return null;
  const { agent: _agent, ...entry } = decoded(row);
  return entry;
}
