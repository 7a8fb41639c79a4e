// POST /api/tasks/:id/rerun — REST alias of tasks.rerun (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.rerun;
