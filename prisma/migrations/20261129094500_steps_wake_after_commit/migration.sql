-- Hand-written: a step scheduled in a transaction that says so wakes the runners after its
-- commit instead of in it (docs/scaling.md, "LangGraph side by side"). A transaction that
-- NOTIFYs takes a database-wide lock at commit and holds it through its WAL flush, so every
-- runner's result transaction that scheduled the session's next step committed one at a
-- time. The runner's outcome transaction sets `catcafe.steps_wake` to 'after_commit' (a
-- transaction-local setting) and sends the wake itself right behind its COMMIT, as a
-- statement of its own that writes nothing and waits for no flush
-- (server/runner/dispatch.ts wakeStepRunners). Any other scheduling is as before.
-- Otherwise as in 20261129024922.
CREATE OR REPLACE FUNCTION "catcafe_apply_step_event"(p_type TEXT, p_stream TEXT, p_data JSONB, p_recorded_at TIMESTAMPTZ, p_live BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  v_step UUID := (p_data->>'stepId')::uuid;
  v_attempt INT := (p_data->>'attempt')::int;
  v_at TIMESTAMPTZ := date_trunc('milliseconds', p_recorded_at);
  v_retry TIMESTAMPTZ := (p_data->>'retryAt')::timestamptz;
  v_what TEXT;
BEGIN
  CASE p_type
    WHEN 'StepScheduled' THEN
      INSERT INTO steps (id, session_id, kind, input, state, attempt, max_attempts, timeout_ms, available_at, scheduled_at, backoff_ms,
                         needs_repo, needs_cli, needs_labels)
      VALUES (v_step, p_stream, p_data->>'kind', p_data->'input', 'pending', 0, (p_data->>'maxAttempts')::int, (p_data->>'timeoutMs')::int,
              COALESCE((p_data->>'availableAt')::timestamptz, v_at), v_at,
              CASE WHEN jsonb_typeof(p_data->'backoffMs') = 'array'
                   THEN ARRAY(SELECT jsonb_array_elements_text(p_data->'backoffMs')::int) ELSE '{}'::int[] END,
              catcafe_step_needs_repo(p_data->>'kind', p_data->'input'),
              catcafe_step_needs_cli(p_data->'input'),
              catcafe_step_needs_labels(p_data->'input'));
      -- Payload-free wake-up for idle runners; Postgres folds identical ones of a transaction.
      -- Not here when the transaction wakes them after its commit itself.
      IF p_live AND current_setting('catcafe.steps_wake', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify('catcafe_steps', '');
      END IF;
      RETURN;
    WHEN 'StepStarted' THEN
      -- The claim itself. `attempt < new` rather than `= new - 1`: histories written before
      -- claims were events may skip an attempt that died unrecorded. Live, a take-over also
      -- needs the lease to have expired by now (a heartbeat may have landed since the pick).
      UPDATE steps SET state = 'running', attempt = v_attempt, lease_owner = p_data->>'runnerId',
                       lease_expires_at = (p_data->>'leaseExpiresAt')::timestamptz,
                       lost = lost + CASE WHEN COALESCE((p_data->>'reclaimed')::boolean, false) THEN 1 ELSE 0 END
      WHERE id = v_step AND attempt < v_attempt AND state IN ('pending', 'running')
        AND (NOT p_live OR state = 'pending' OR lease_expires_at <= now());
      v_what := 'start';
    WHEN 'StepCompleted' THEN
      UPDATE steps SET state = 'completed', finished_at = v_at, lease_owner = NULL, lease_expires_at = NULL, error_class = NULL
      WHERE id = v_step AND attempt = v_attempt AND state = 'running';
      v_what := 'result';
    WHEN 'StepFailed' THEN
      IF COALESCE((p_data->>'unrunnable')::boolean, false) THEN
        -- No live runner can run it: it fails as its next attempt, never started.
        UPDATE steps SET state = 'failed', attempt = v_attempt, finished_at = v_at, lease_owner = NULL, lease_expires_at = NULL,
                         error_class = p_data->>'errorClass'
        WHERE id = v_step AND attempt = v_attempt - 1 AND state = 'pending';
      ELSE
        UPDATE steps SET state = CASE WHEN v_retry IS NULL THEN 'failed'::step_state ELSE 'pending'::step_state END,
                         available_at = COALESCE(v_retry, available_at),
                         finished_at = CASE WHEN v_retry IS NULL THEN v_at END,
                         lease_owner = NULL, lease_expires_at = NULL, error_class = p_data->>'errorClass'
        WHERE id = v_step AND attempt = v_attempt AND state = 'running';
      END IF;
      v_what := 'failure';
    WHEN 'StepReleased' THEN
      UPDATE steps SET state = 'pending', available_at = v_at, lease_owner = NULL, lease_expires_at = NULL, released = released + 1,
                       excluded_runners = CASE WHEN p_data->'unable' IS NULL THEN excluded_runners
                                               ELSE array_append(COALESCE(excluded_runners, '{}'), p_data->'unable'->>'runnerId') END
      WHERE id = v_step AND attempt = v_attempt AND state = 'running';
      IF FOUND AND p_live THEN PERFORM pg_notify('catcafe_steps', ''); END IF;
      v_what := 'release';
    WHEN 'StepCancelled' THEN
      -- Not fenced by attempt: a cancel wins over whichever attempt holds the step.
      UPDATE steps SET state = 'cancelled', finished_at = v_at, lease_owner = NULL, lease_expires_at = NULL, error_class = 'cancelled'
      WHERE id = v_step AND state IN ('pending', 'running');
      IF FOUND AND p_live THEN PERFORM pg_notify('catcafe_cancel', v_step::text); END IF;
      RETURN;
    ELSE
      RETURN;
  END CASE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'step %: % from attempt % rejected: that attempt no longer holds the step', v_step, v_what, v_attempt
      USING ERRCODE = 'CCS01', DETAIL = json_build_object('stepId', v_step, 'attempt', v_attempt, 'what', v_what)::text;
  END IF;
END
$$;
