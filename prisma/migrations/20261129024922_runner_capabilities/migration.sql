-- AlterTable
ALTER TABLE "steps" ADD COLUMN     "excluded_runners" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "needs_cli" TEXT,
ADD COLUMN     "needs_labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "needs_repo" TEXT;

-- AlterTable
ALTER TABLE "runners" ADD COLUMN     "agent_clis" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "capabilities_at" TIMESTAMPTZ(6),
ADD COLUMN     "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "served_repos" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "unserved_repos" JSONB;

-- Hand-written: capability-aware claims (docs/scaling.md, "Which runner runs a step").
-- A step's needs are taken from its StepScheduled input by the projection (live and in a
-- rebuild alike): the project's registered repoPath (the workspace's, or a delivery's), the
-- agent CLI kind when the agent is a CLI, the labels its agent asks for (runnerLabels).
-- A StepReleased with `unable` (a runner that found at run time that it cannot run the step)
-- adds that runner to excluded_runners: it never claims the step again. A StepFailed with
-- `unrunnable` fails a step no live runner can run without it ever being started.
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
      IF p_live THEN PERFORM pg_notify('catcafe_steps', ''); END IF;
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

-- A step's needs, from its input (server/events/step-contract.ts ZStepInput; server/delivery/steps.ts).
CREATE FUNCTION "catcafe_step_needs_repo"(p_kind TEXT, p_input JSONB) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(p_input->'workspace'->>'repoPath', CASE WHEN p_kind = 'deliver' THEN p_input->>'repoPath' END)
$$;
CREATE FUNCTION "catcafe_step_needs_cli"(p_input JSONB) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_input->'agent'->>'kind' IN ('claude', 'codex', 'gemini') THEN p_input->'agent'->>'kind' END
$$;
CREATE FUNCTION "catcafe_step_needs_labels"(p_input JSONB) RETURNS TEXT[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(p_input->'agent'->'runnerLabels') = 'array'
              THEN ARRAY(SELECT jsonb_array_elements_text(p_input->'agent'->'runnerLabels')) ELSE '{}'::text[] END
$$;

-- The functions above are created after catcafe_apply_step_event refers to them: plpgsql
-- resolves names when it runs. Steps queued before this migration get their needs now.
UPDATE steps SET needs_repo = catcafe_step_needs_repo(kind, input), needs_cli = catcafe_step_needs_cli(input),
                 needs_labels = catcafe_step_needs_labels(input)
WHERE state IN ('pending', 'running');

-- The claim's pick, now given what the claiming runner can run (NULL: not reported, anything):
-- the registered repoPaths it has clones of, the agent CLIs it found, its labels. A step it
-- cannot run, or that it released as unable (excluded_runners), is not a candidate, so the
-- 16 candidates are 16 it can take. Otherwise as in 20261126085841.
DROP FUNCTION "catcafe_pick_step"(INT, INT);
CREATE FUNCTION "catcafe_pick_step"(p_reclaim_backoff_ms INT, p_max_lost INT, p_runner TEXT, p_repos TEXT[], p_clis TEXT[], p_labels TEXT[])
RETURNS TABLE (id UUID, session_id TEXT, kind TEXT, input JSONB, attempt INT, max_attempts INT, timeout_ms INT, backoff_ms INT[], reclaimed BOOLEAN)
LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
DECLARE
  v_candidate UUID;
BEGIN
  FOR v_candidate IN
    SELECT c.id FROM (
      (SELECT s.id, false AS reclaim, s.available_at AS at FROM steps s
       WHERE s.state = 'pending' AND s.available_at <= now()
         AND (p_repos IS NULL OR s.needs_repo IS NULL OR s.needs_repo = ANY(p_repos))
         AND (p_clis IS NULL OR s.needs_cli IS NULL OR s.needs_cli = ANY(p_clis))
         AND (s.needs_labels IS NULL OR s.needs_labels <@ COALESCE(p_labels, '{}'))
         AND (s.excluded_runners IS NULL OR NOT p_runner = ANY(s.excluded_runners))
       ORDER BY s.available_at LIMIT 16)
      UNION ALL
      (SELECT s.id, true, s.lease_expires_at FROM steps s
       WHERE s.state = 'running' AND s.lost < p_max_lost
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
