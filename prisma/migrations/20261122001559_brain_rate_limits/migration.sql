-- CreateTable
CREATE TABLE "brain_rate_limits" (
    "brain_id" TEXT NOT NULL,
    "base_url" TEXT NOT NULL,
    "next_allowed_at" TIMESTAMPTZ(6) NOT NULL,
    "holder" UUID,
    "held_until" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "brain_rate_limits_pkey" PRIMARY KEY ("brain_id","base_url")
);
