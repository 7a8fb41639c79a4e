-- AlterTable
ALTER TABLE "steps" ADD COLUMN     "backoff_ms" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "settings" JSONB NOT NULL DEFAULT '{}';
