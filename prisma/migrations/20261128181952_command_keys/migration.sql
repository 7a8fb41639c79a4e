-- CreateTable
CREATE TABLE "command_keys" (
    "user_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "effects" JSONB NOT NULL DEFAULT '[]',
    "status" INTEGER,
    "content_type" TEXT,
    "body" BYTEA,
    "claimed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "answered_at" TIMESTAMPTZ(6),

    CONSTRAINT "command_keys_pkey" PRIMARY KEY ("user_id","key")
);

-- CreateIndex
CREATE INDEX "command_keys_created_at_idx" ON "command_keys"("created_at");
