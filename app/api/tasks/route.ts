// POST /api/tasks — REST alias of tasks.start (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.start;
