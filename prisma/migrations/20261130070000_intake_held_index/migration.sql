-- Hand-written: the inbox lists the held intake deliveries of every project, newest first
-- (server/intake/inbox.ts, HELD_SQL), at every opening. Without an index of its own the planner
-- walked the whole log backwards by position looking for IntakeHeld events, which most logs
-- hold few of: a read that grew with every event ever recorded. Only the intake writes these
-- events, so the index is small.
CREATE INDEX "events_intake_held_idx" ON "events" ("position") WHERE "type" = 'IntakeHeld';
