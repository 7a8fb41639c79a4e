-- AlterTable
ALTER TABLE "runners" ADD COLUMN     "sandbox_on" BOOLEAN,
ADD COLUMN     "sandbox_reason" TEXT;
