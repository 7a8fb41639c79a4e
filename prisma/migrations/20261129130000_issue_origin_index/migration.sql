-- Hand-written: the issue a session was started from (server/tracker/session-issue.ts) is read
-- at every step's outcome, on the session's lineage. Without an index of its own the planner
-- walked the whole log backwards by position looking for a TaskStartedFromIssue that most
-- sessions never have: a read that grew with every event ever recorded (docs/scaling.md,
-- "What a step costs: the model"). Only the intake writes these events, so the index is small.
CREATE INDEX "events_task_started_from_issue_idx" ON "events" ("stream_id", "version") WHERE "type" = 'TaskStartedFromIssue';
