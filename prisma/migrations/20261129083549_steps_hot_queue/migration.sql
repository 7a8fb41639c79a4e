-- DropIndex
DROP INDEX "steps_state_available_at_idx";

-- Hand-written: a claim as a HOT update (docs/scaling.md, "What a step costs: the model").
-- With ("state", "available_at") indexed, every state change of a step (its claim, its result)
-- wrote a new row version with an entry in each of the table's indexes. The queue's index is
-- now `available_at` of the open steps: a claim changes no indexed column (state, attempt and
-- lease are not indexed), so PostgreSQL updates the row in place on its page (HOT, no index
-- entries) when the page has room, which the fillfactor keeps. A result sets `finished_at`,
-- which takes the step out of the index. Open means `finished_at IS NULL`: the projection
-- (catcafe_apply_step_event) sets it on every move to completed, failed or cancelled and
-- clears it on a retry, so open is exactly state 'pending' or 'running'.
CREATE INDEX "steps_open_available_at_idx" ON "steps" ("available_at") WHERE "finished_at" IS NULL;
ALTER TABLE "steps" SET (fillfactor = 80);

-- Rows a projection of an older migration may have finished without a time.
UPDATE steps SET finished_at = scheduled_at WHERE state NOT IN ('pending', 'running') AND finished_at IS NULL;

-- The pick reads the open steps through that index (`finished_at IS NULL` in both branches,
-- so that the planner can use it). Otherwise as in 20261129024922.
CREATE OR REPLACE FUNCTION "catcafe_pick_step"(p_reclaim_backoff_ms INT, p_max_lost INT, p_runner TEXT, p_repos TEXT[], p_clis TEXT[], p_labels TEXT[])
RETURNS TABLE (id UUID, session_id TEXT, kind TEXT, input JSONB, attempt INT, max_attempts INT, timeout_ms INT, backoff_ms INT[], reclaimed BOOLEAN)
LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
DECLARE
  v_candidate UUID;
BEGIN
  FOR v_candidate IN
    SELECT c.id FROM (
      (SELECT s.id, false AS reclaim, s.available_at AS at FROM steps s
       WHERE s.finished_at IS NULL AND s.state = 'pending' AND s.available_at <= now()
         AND (p_repos IS NULL OR s.needs_repo IS NULL OR s.needs_repo = ANY(p_repos))
         AND (p_clis IS NULL OR s.needs_cli IS NULL OR s.needs_cli = ANY(p_clis))
         AND (s.needs_labels IS NULL OR s.needs_labels <@ COALESCE(p_labels, '{}'))
         AND (s.excluded_runners IS NULL OR NOT p_runner = ANY(s.excluded_runners))
       ORDER BY s.available_at LIMIT 16)
      UNION ALL
      (SELECT s.id, true, s.lease_expires_at FROM steps s
       WHERE s.finished_at IS NULL AND s.state = 'running' AND s.lost < p_max_lost
         AND s.lease_expires_at + LEAST(p_reclaim_backoff_ms * power(2, s.lost), 30000) * interval '1 millisecond' <= now()
         AND (p_repos IS NULL OR s.needs_repo IS NULL OR s.needs_repo = ANY(p_repos))
         AND (p_clis IS NULL OR s.needs_cli IS NULL OR s.needs_cli = ANY(p_clis))
         AND (s.needs_labels IS NULL OR s.needs_labels <@ COALESCE(p_labels, '{}'))
         AND (s.excluded_runners IS NULL OR NOT p_runner = ANY(s.excluded_runners))
       ORDER BY s.lease_expires_at LIMIT 16)
      ORDER BY reclaim, at LIMIT 16) c
  LOOP
    CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended(v_candidate::text, 0));
    RETURN QUERY
      SELECT s.id, s.session_id, s.kind, s.input, s.attempt + 1, s.max_attempts, s.timeout_ms, s.backoff_ms, s.state = 'running'
      FROM steps s
      WHERE s.id = v_candidate
        AND ((s.state = 'pending' AND s.available_at <= now())
          OR (s.state = 'running' AND s.lost < p_max_lost
              AND s.lease_expires_at + LEAST(p_reclaim_backoff_ms * power(2, s.lost), 30000) * interval '1 millisecond' <= now()));
    IF FOUND THEN RETURN; END IF;
  END LOOP;
END
$$;

-- Hand-written: the StepScheduled-by-step-id index holds only the events a traced runner
-- looks up (server/runner/step-trace.ts): those whose metadata carries a traceparent, which
-- an append records only while tracing is on. Untraced, a step writes no entry into it.
DROP INDEX "events_step_scheduled_step_id_idx";
CREATE INDEX "events_step_scheduled_step_id_idx" ON "events" ((data->>'stepId')) WHERE type = 'StepScheduled' AND metadata ? 'traceparent';
