// POST /api/tasks/:id/confirm — REST alias of tasks.confirm (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.confirm;
