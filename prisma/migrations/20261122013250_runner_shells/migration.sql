-- AlterTable
ALTER TABLE "runners" ADD COLUMN     "shells" JSONB,
ADD COLUMN     "shells_detected_at" TIMESTAMPTZ(6);
