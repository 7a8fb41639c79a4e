-- CreateTable
CREATE TABLE "intake_deliveries" (
    "provider" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "intake_deliveries_pkey" PRIMARY KEY ("provider","delivery_id")
);

-- CreateTable
CREATE TABLE "intake_secrets" (
    "project_id" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "set_at" TIMESTAMPTZ(6) NOT NULL,
    "set_by" TEXT NOT NULL,

    CONSTRAINT "intake_secrets_pkey" PRIMARY KEY ("project_id")
);

-- CreateIndex
CREATE INDEX "intake_deliveries_project_id_received_at_idx" ON "intake_deliveries"("project_id", "received_at" DESC);
