// POST /api/tasks/:id/followup — REST alias of tasks.followUp (operator; see server/api/rest.ts).
import { taskRestHandlers } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = taskRestHandlers.followUp;
