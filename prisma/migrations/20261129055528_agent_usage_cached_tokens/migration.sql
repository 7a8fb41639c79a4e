-- AlterTable
ALTER TABLE "agent_usage" ADD COLUMN     "cache_creation_input_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "cached_input_tokens" BIGINT NOT NULL DEFAULT 0;

-- Rows from before, and calls whose agent reported no cached tokens, read 0 (docs/delivery.md, "Usage and cost").
