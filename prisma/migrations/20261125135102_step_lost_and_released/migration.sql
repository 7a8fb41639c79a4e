-- AlterTable
ALTER TABLE "steps" ADD COLUMN     "lost" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "released" INTEGER NOT NULL DEFAULT 0;

-- Releases already recorded count as they would have live (the projection now counts them).
UPDATE "steps" s SET "released" = r.n
FROM (SELECT data->>'stepId' AS step_id, count(*)::int AS n FROM events WHERE type = 'StepReleased' GROUP BY 1) r
WHERE s.id::text = r.step_id;
