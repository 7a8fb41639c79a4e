// GET /api/sessions/:id/export — the session as a zip in the export layout (summary.json,
// task-events.jsonl, task-timeline.json, rounds/<nn>/...); viewer role (server/api/rest.ts).
import { sessionExportHandler } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = sessionExportHandler;
