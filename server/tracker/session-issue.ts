// The issue a session was started from (docs/delivery.md, "The tracker"): its TaskStartedFromIssue,
// recorded by the intake when an issue's trigger started the task, in the session's own stream or
// in an ancestor's (a modify or a fork of it inherits it). Read here by SQL, on the lineage, so
// the tracker does not depend on the intake's catalog entry.
import { z } from "zod";
import type { Queryable } from "../db/pool";
import { LINEAGE_CTE } from "../events/lineage";

export const ZSessionIssue = z.object({
  provider: z.enum(["github", "gitlab"]),
  /** `owner/name` on GitHub; the project's path on GitLab. */
  repository: z.string().min(1),
  /** The issue's number (GitHub) or iid (GitLab). */
  issueNumber: z.number().int().positive(),
  issueUrl: z.string(),
  title: z.string(),
});
export type SessionIssue = z.infer<typeof ZSessionIssue>;

// Per stream of the lineage, through the index of these events alone
// (events_task_started_from_issue_idx): never a walk of the whole log, whatever its length.
export const ISSUE_SQL = `WITH RECURSIVE ${LINEAGE_CTE}
  SELECT e.data FROM lineage l
  CROSS JOIN LATERAL (
    SELECT e.data, e.position FROM events e
    WHERE e.stream_id = l.id AND e.type = 'TaskStartedFromIssue' AND e.version <= COALESCE(l.cap, e.version)
    ORDER BY e.version DESC LIMIT 1
  ) e
  ORDER BY e.position DESC LIMIT 1`;

/** The issue the session (or the session it was forked from) was started from; null when none. */
export async function sessionIssue(db: Queryable, sessionId: string): Promise<SessionIssue | null> {
  const { rows } = await db.query<{ data: unknown }>(ISSUE_SQL, [sessionId]);
  const parsed = ZSessionIssue.safeParse(rows[0]?.data);
  return parsed.success ? parsed.data : null;
}
