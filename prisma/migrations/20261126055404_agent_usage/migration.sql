-- CreateTable
CREATE TABLE "agent_usage" (
    "event_id" UUID NOT NULL,
    "session_id" TEXT NOT NULL,
    "project_id" TEXT,
    "step_id" UUID NOT NULL,
    "agent_id" TEXT NOT NULL,
    "model" TEXT,
    "input_tokens" BIGINT NOT NULL,
    "output_tokens" BIGINT NOT NULL,
    "recorded_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "agent_usage_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "agent_usage_session_id_idx" ON "agent_usage"("session_id");

-- CreateIndex
CREATE INDEX "agent_usage_project_id_recorded_at_idx" ON "agent_usage"("project_id", "recorded_at");

-- CreateIndex
CREATE INDEX "agent_usage_recorded_at_idx" ON "agent_usage"("recorded_at");

-- Calls recorded before: their usage from the steps' results (the projection keeps it from here on).
INSERT INTO "agent_usage" ("event_id", "session_id", "project_id", "step_id", "agent_id", "model", "input_tokens", "output_tokens", "recorded_at")
SELECT e."event_id", e."stream_id", s."project_id", (e."data"->>'stepId')::uuid, e."data"->'output'->>'agentId',
       e."data"->'output'->'usage'->>'model',
       round((e."data"->'output'->'usage'->>'inputTokens')::numeric), round((e."data"->'output'->'usage'->>'outputTokens')::numeric),
       e."recorded_at"
FROM "events" e LEFT JOIN "sessions" s ON s."id" = e."stream_id"
WHERE e."type" = 'StepCompleted'
  AND jsonb_typeof(e."data"->'output'->'usage') = 'object'
  AND jsonb_typeof(e."data"->'output'->'agentId') = 'string'
  AND jsonb_typeof(e."data"->'output'->'usage'->'inputTokens') = 'number'
  AND jsonb_typeof(e."data"->'output'->'usage'->'outputTokens') = 'number';
