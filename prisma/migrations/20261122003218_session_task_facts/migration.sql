-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "pg_trgm";

-- AlterTable
ALTER TABLE "sessions" ADD COLUMN     "iteration" INTEGER,
ADD COLUMN     "mode" TEXT,
ADD COLUMN     "outcome" TEXT,
ADD COLUMN     "project_id" TEXT,
ADD COLUMN     "prompt" TEXT;

-- CreateIndex
CREATE INDEX "sessions_created_at_id_idx" ON "sessions"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "sessions_project_id_created_at_idx" ON "sessions"("project_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "sessions_title_trgm_idx" ON "sessions" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "sessions_prompt_trgm_idx" ON "sessions" USING GIN ("prompt" gin_trgm_ops);

-- Backfill the new columns of existing sessions from the log, with the rules of
-- server/sessions/projection.ts (`npm run projections:rebuild` recomputes them too).
UPDATE "sessions" s
SET "project_id" = e.data->'project'->>'id', "mode" = e.data->>'mode', "prompt" = e.data->>'prompt', "iteration" = 1
FROM "events" e
WHERE e.stream_id = s.id AND e.type = 'TaskStarted';

UPDATE "sessions" s
SET "iteration" = i.iteration
FROM (SELECT DISTINCT ON (stream_id) stream_id, (data->>'iteration')::int AS iteration
      FROM "events" WHERE type = 'IterationStarted' ORDER BY stream_id, version DESC) i
WHERE i.stream_id = s.id;

-- Forks inherit the task facts of their parent (a rerun starts again at iteration 1),
-- parents before children.
DO $$
BEGIN
  LOOP
    UPDATE "sessions" c
    SET "project_id" = p.project_id, "mode" = p.mode, "prompt" = p.prompt,
        "iteration" = CASE WHEN f.data->>'reason' = 'rerun' THEN 1 ELSE p.iteration END
    FROM "sessions" p, "events" f
    WHERE c.parent_id = p.id AND c.project_id IS NULL AND p.project_id IS NOT NULL
      AND f.stream_id = c.id AND f.version = c.fork_version + 1 AND f.type = 'SessionForked';
    EXIT WHEN NOT FOUND;
  END LOOP;
END $$;

UPDATE "sessions" s
SET "iteration" = i.iteration
FROM (SELECT DISTINCT ON (stream_id) stream_id, (data->>'iteration')::int AS iteration
      FROM "events" WHERE type = 'IterationStarted' ORDER BY stream_id, version DESC) i
WHERE i.stream_id = s.id AND s.parent_id IS NOT NULL;

UPDATE "sessions" s
SET "outcome" = e.data->>'outcome'
FROM "events" e
WHERE e.stream_id = s.id AND e.type = 'SessionFinalized';
