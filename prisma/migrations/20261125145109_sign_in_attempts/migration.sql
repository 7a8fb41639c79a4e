-- CreateTable
CREATE TABLE "sign_in_attempts" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "address" TEXT,
    "outcome" TEXT NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sign_in_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "sign_in_attempts_email_at_idx" ON "sign_in_attempts"("email", "at" DESC);

-- CreateIndex
CREATE INDEX "sign_in_attempts_address_at_idx" ON "sign_in_attempts"("address", "at" DESC);

-- CreateIndex
CREATE INDEX "sign_in_attempts_at_idx" ON "sign_in_attempts"("at" DESC);
