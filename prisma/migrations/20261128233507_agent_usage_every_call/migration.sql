-- AlterTable
ALTER TABLE "agent_usage" ADD COLUMN     "stage" TEXT;

-- Every completed agent call is a row (docs/delivery.md, "Usage and cost"): calls whose agent
-- reported no tokens count as calls with none, so every reader shows the same number of calls.
INSERT INTO "agent_usage" ("event_id", "session_id", "project_id", "step_id", "agent_id", "model", "input_tokens", "output_tokens", "recorded_at")
SELECT e."event_id", e."stream_id", s."project_id", (e."data"->>'stepId')::uuid, e."data"->'output'->>'agentId', NULL, 0, 0, e."recorded_at"
FROM "events" e LEFT JOIN "sessions" s ON s."id" = e."stream_id"
WHERE e."type" = 'StepCompleted'
  AND jsonb_typeof(e."data"->'output'->'agentId') = 'string'
  AND NOT EXISTS (SELECT 1 FROM "agent_usage" u WHERE u."event_id" = e."event_id");

-- The stage each call was made in, from its step's input (a staged step's `forge` part).
UPDATE "agent_usage" u SET "stage" = st."input"->'forge'->>'stage'
FROM "steps" st WHERE st."id" = u."step_id" AND st."input"->'forge'->>'stage' IS NOT NULL;
