// POST /api/tasks/:id/cancel — REST alias of tasks.cancel (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.cancel;
