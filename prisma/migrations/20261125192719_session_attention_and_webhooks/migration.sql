-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "acked_at" TIMESTAMPTZ(6),
ADD COLUMN     "acked_by" TEXT,
ADD COLUMN     "attention" TEXT,
ADD COLUMN     "attention_since" TIMESTAMPTZ(6);

-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "webhook" JSONB;

-- CreateIndex
CREATE INDEX "sessions_attention_attention_since_idx" ON "sessions"("attention", "attention_since" DESC);

-- Sessions recorded before: what needs a person now (the projection keeps it from here on).
UPDATE "sessions" SET "attention" = x."attention", "attention_since" = "sessions"."created_at"
FROM (
  SELECT "id", CASE
      WHEN "outcome" = 'max_iterations_reached' THEN 'escalated'
      WHEN "outcome" IS NOT NULL AND "outcome" NOT IN ('approved', 'done', 'cancelled') THEN 'failed'
      WHEN "outcome" IS NULL AND "state" = 'awaiting_operator_confirm' THEN 'waiting'
    END AS "attention"
  FROM "sessions"
) x
WHERE x."id" = "sessions"."id" AND x."attention" IS NOT NULL;
