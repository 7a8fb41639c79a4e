-- A claimed step's StepScheduled event by its step id, one index probe: a traced runner reads
-- the traceparent the command that scheduled it recorded (server/runner/step-trace.ts,
-- docs/operations.md "Traces"), which otherwise scans the session's events. Partial: only
-- StepScheduled rows are in it.
CREATE INDEX "events_step_scheduled_step_id_idx" ON "events" ((data->>'stepId')) WHERE type = 'StepScheduled';
