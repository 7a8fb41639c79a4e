-- DropIndex
DROP INDEX "streams_updated_at_idx";

-- CreateTable
CREATE TABLE "live_interest" (
    "stream_id" TEXT NOT NULL,
    "listener_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "live_interest_pkey" PRIMARY KEY ("stream_id","listener_id")
);

-- Hand-written: stream bumps. Every append updates its stream's row (version, updated_at).
-- No query needs streams ordered by updated_at through an index (dropped above), and that
-- index made each bump a non-HOT update writing three index entries: without it, and with
-- room left on each page, a bump is a HOT update.
ALTER TABLE "streams" SET (fillfactor = 80);

-- Hand-written: the inbox's doorbell. Any change to a sessions row (state, attention, an
-- acknowledgement) rings 'catcafe_sessions' once per transaction, payload-free; the inbox
-- listens to it instead of to every append.
CREATE FUNCTION "catcafe_sessions_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('catcafe_sessions', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "sessions_changed"
  AFTER INSERT OR UPDATE ON "sessions"
  FOR EACH STATEMENT EXECUTE FUNCTION "catcafe_sessions_changed"();

-- Hand-written (issue 19): the steps projection is applied by the database, in the append
-- statement itself, instead of by a second statement from the application. One function
-- holds every Step* transition and its fencing rule; a trigger on `events` calls it for each
-- appended Step* event (live), and a rebuild calls the same function for every recorded one
-- (server/runner/steps-projection.ts). A refusal (a result from an attempt that no longer
-- holds the step) raises SQLSTATE CCS01, which rolls back the whole append.
--
-- Times are kept to the millisecond, as the application always wrote them.

CREATE FUNCTION "catcafe_apply_step_event"(p_type TEXT, p_stream TEXT, p_data JSONB, p_recorded_at TIMESTAMPTZ, p_live BOOLEAN)
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
      INSERT INTO steps (id, session_id, kind, input, state, attempt, max_attempts, timeout_ms, available_at, scheduled_at, backoff_ms)
      VALUES (v_step, p_stream, p_data->>'kind', p_data->'input', 'pending', 0, (p_data->>'maxAttempts')::int, (p_data->>'timeoutMs')::int,
              COALESCE((p_data->>'availableAt')::timestamptz, v_at), v_at,
              CASE WHEN jsonb_typeof(p_data->'backoffMs') = 'array'
                   THEN ARRAY(SELECT jsonb_array_elements_text(p_data->'backoffMs')::int) ELSE '{}'::int[] END);
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
      UPDATE steps SET state = CASE WHEN v_retry IS NULL THEN 'failed'::step_state ELSE 'pending'::step_state END,
                       available_at = COALESCE(v_retry, available_at),
                       finished_at = CASE WHEN v_retry IS NULL THEN v_at END,
                       lease_owner = NULL, lease_expires_at = NULL, error_class = p_data->>'errorClass'
      WHERE id = v_step AND attempt = v_attempt AND state = 'running';
      v_what := 'failure';
    WHEN 'StepReleased' THEN
      UPDATE steps SET state = 'pending', available_at = v_at, lease_owner = NULL, lease_expires_at = NULL, released = released + 1
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

CREATE FUNCTION "catcafe_steps_on_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM catcafe_apply_step_event(NEW.type, NEW.stream_id, NEW.data, NEW.recorded_at, true);
  RETURN NULL;
END
$$;

CREATE TRIGGER "events_steps_projection"
  AFTER INSERT ON "events"
  FOR EACH ROW
  WHEN (NEW.type IN ('StepScheduled', 'StepStarted', 'StepCompleted', 'StepFailed', 'StepReleased', 'StepCancelled'))
  EXECUTE FUNCTION "catcafe_steps_on_event"();


-- Hand-written: the claim's pick. The runner's claim statement (server/runner/dispatch.ts)
-- starts with this: the 16 oldest steps that can be taken (pending and due first, in
-- available_at order from the index, so a long queue costs no more than a short one; then
-- those whose lease expired long enough ago), and the first of them whose advisory lock
-- this transaction gets AND that can still be taken when read again now: a VOLATILE
-- function's queries see what committed since the claim statement began, so a step another
-- runner took meanwhile is skipped here instead of failing the claim at the fence.
-- ROWS 1: it returns one row at most, and the planner must know it (at its default of
-- 1,000 rows it joined the claim's stream update by scanning the whole streams table).
CREATE FUNCTION "catcafe_pick_step"(p_reclaim_backoff_ms INT, p_max_lost INT)
RETURNS TABLE (id UUID, session_id TEXT, kind TEXT, input JSONB, attempt INT, max_attempts INT, timeout_ms INT, backoff_ms INT[], reclaimed BOOLEAN)
LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
DECLARE
  v_candidate UUID;
BEGIN
  FOR v_candidate IN
    SELECT c.id FROM (
      (SELECT s.id, false AS reclaim, s.available_at AS at FROM steps s
       WHERE s.state = 'pending' AND s.available_at <= now() ORDER BY s.available_at LIMIT 16)
      UNION ALL
      (SELECT s.id, true, s.lease_expires_at FROM steps s
       WHERE s.state = 'running' AND s.lost < p_max_lost
         AND s.lease_expires_at + LEAST(p_reclaim_backoff_ms * power(2, s.lost), 30000) * interval '1 millisecond' <= now()
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
