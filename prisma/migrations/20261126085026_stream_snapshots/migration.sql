-- CreateTable
CREATE TABLE "stream_snapshots" (
    "stream_id" TEXT NOT NULL,
    "fold" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "state" JSON NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stream_snapshots_pkey" PRIMARY KEY ("stream_id","fold","version")
);
